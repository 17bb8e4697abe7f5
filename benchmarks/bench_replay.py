"""What a replayed launch costs in copies: the bytes it read compared, the bytes it wrote written again.

    python benchmarks/bench_replay.py [--mib N] [--repeat N]

A launch that repeats an earlier one exactly is not simulated again (`runtime.repeats`): its read bytes are
read from the device and compared with the earlier launch's, and its written bytes are written back. Each row
times one replay's copies (`_view_values` of the read bytes, `_write_values` of the written ones) on a device
arena, with the flagged bytes copied span by span (each run of consecutive pages as its [start, end) spans,
worked out once per kept launch) and through the page mask (`MIN_SPAN_BYTES` set past any run: every run copied
by its mask, as every run was before), for three footprints of `--mib` MiB each way: an array read and another
written whole (a scan or a copy kernel timed in a loop), the same starting mid-page (so no page is wholly
flagged at the ends), and every other 4-byte word (a strided kernel: scattered, copied through the mask either
way). Best of `--repeat`, CPU seconds of this process, and the ratio.

Figures come from one machine and one run: compare rows, not machines.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import gpurace.runtime.repeats as repeats
from gpurace.detect.bytesets import PageBits
from gpurace.runtime.arena import Arena
from gpurace.sim.memory.layout import PAGE_SIZE, Space

BASE = 1 << 32


class Device:
    """The one thing the replay asks of a device: the arena an address lies in."""

    def __init__(self, nbytes: int) -> None:
        self.arena = Arena(Space.GLOBAL, BASE, nbytes)
        self.arena.store[:] = np.arange(nbytes, dtype=np.uint32).astype(np.uint8)

    def arena_of(self, address: int):
        return self.arena if self.arena.contains(address) else None


def footprints(nbytes: int) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    """(read starts, written starts, access size) of each footprint of `nbytes` bytes each way."""
    words = np.arange(nbytes // 4, dtype=np.uint64) * np.uint64(4)
    second = np.uint64(BASE + nbytes + PAGE_SIZE)
    return {
        "whole arrays": (BASE + words, second + words, 4),
        "mid-page arrays": (BASE + 100 + words, second + 100 + words, 4),
        "every other word": (BASE + 2 * words[: len(words) // 2], second + 2 * words[: len(words) // 2], 4),
    }


def replay_seconds(device: Device, read: PageBits, written: PageBits, repeat: int) -> float:
    """Best CPU seconds of one replay's copies: the read bytes taken and compared, the written bytes put back."""
    kept_read, kept_written = repeats._flagged(device, read), repeats._flagged(device, written)
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        now = repeats._view_values(device, kept_read)
        assert np.array_equal(now, kept_read.values)
        repeats._write_values(device, kept_written)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    nbytes = opts.mib << 20
    device = Device(2 * nbytes + 4 * PAGE_SIZE)
    print(f"one replay's copies, {opts.mib} MiB read and {opts.mib} MiB written (best of {opts.repeat}, CPU s)")
    print(f"{'footprint':<18} {'by spans':>9} {'by mask':>9} {'ratio':>6}")
    spans_at = repeats.MIN_SPAN_BYTES
    for name, (reads, writes, size) in footprints(nbytes).items():
        read, written = PageBits(), PageBits()
        read.add(reads, size)
        written.add(writes, size)
        spans = replay_seconds(device, read, written, opts.repeat)
        repeats.MIN_SPAN_BYTES = 1 << 62
        try:
            masked = replay_seconds(device, read, written, opts.repeat)
        finally:
            repeats.MIN_SPAN_BYTES = spans_at
        print(f"{name:<18} {spans:>9.4f} {masked:>9.4f} {masked / spans:>6.1f}")


if __name__ == "__main__":
    main()
