"""Replayed launches read and write exactly the bytes they flag, whether those make a few long spans or are scattered."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.detect.bytesets import PageBits
from gpurace.runtime.arena import Arena
from gpurace.runtime.repeats import _flagged, _write_values
from gpurace.sim.memory.layout import PAGE_SIZE, Space

BASE = 1 << 32


class _Device:
    """What the replay needs of a device: the arena an address lies in."""

    def __init__(self) -> None:
        self.arena = Arena(Space.GLOBAL, BASE, 16 * PAGE_SIZE)

    def arena_of(self, address: int):
        return self.arena if self.arena.contains(address) else None


def _bits(starts: np.ndarray, size: int) -> PageBits:
    bits = PageBits()
    bits.add(np.asarray(starts, dtype=np.uint64), size)
    return bits


@pytest.mark.parametrize(
    "starts, size, spans",
    [
        # an array of 9,000 floats from byte 100 of page 1, and one word of page 12: two runs, one span each
        (np.concatenate((BASE + PAGE_SIZE + 100 + 4 * np.arange(9000), [BASE + 12 * PAGE_SIZE + 8])), 4, [1, 1]),
        # every other 4-byte word of three pages: one run, scattered
        (BASE + 8 * np.arange(3 * PAGE_SIZE // 8), 4, [None]),
    ],
)
def test_flagged_bytes_are_read_and_written_back_exactly(starts, size, spans):
    device = _Device()
    store = device.arena.store
    store[:] = np.arange(len(store), dtype=np.uint64).astype(np.uint8) * 7 + 3
    flags = np.zeros(len(store), dtype=bool)
    for start in starts - BASE:
        flags[start : start + size] = True
    found = _flagged(device, _bits(starts, size))
    assert [None if run.spans is None else len(run.spans) for run in found.runs()] == spans
    assert np.array_equal(found.values, store[flags])
    before = store.copy()
    store[:] = 0
    _write_values(device, found)
    assert np.array_equal(store[flags], before[flags])
    assert not store[~flags].any()


def test_bytes_outside_the_arenas_are_not_kept():
    device = _Device()
    assert _flagged(device, _bits(np.array([BASE + 15 * PAGE_SIZE, BASE + 16 * PAGE_SIZE]), 4)) is None
