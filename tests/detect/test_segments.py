"""The prefilter for ranges that another thread may overlap: it never drops one that does; and `lexsort`."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from gpurace.detect import segments
from gpurace.detect.segments import PACK_FROM, lexsort, shared_by_threads


def u64(*v):
    return np.array(v, dtype=np.uint64)


def test_ranges_touched_by_one_thread_are_filtered_out():
    # thread 0 reads and writes word 0; thread 1 word 1: no overlap between threads
    got = shared_by_threads(np.array([0, 0, 1]), u64(0, 0, 4), u64(4, 4, 4))
    assert got.tolist() == [False, False, False]


def test_a_byte_inside_another_threads_word_is_kept():
    # a 4-byte write at 0 by thread 0 and a 1-byte read of byte 1 by thread 1 overlap
    got = shared_by_threads(np.array([0, 1, 2]), u64(0, 1, 4), u64(4, 1, 1))
    assert got.tolist() == [True, True, False]


def test_wide_access_groups_its_whole_chunk():
    # a 16-byte vector store by thread 0 overlaps 4-byte reads of words 1 and 3 by threads 1 and 2
    got = shared_by_threads(np.array([0, 1, 2, 3]), u64(16, 20, 28, 32), u64(16, 4, 4, 4))
    assert got.tolist() == [True, True, True, False]


def test_never_drops_a_range_that_another_thread_overlaps():
    rng = np.random.default_rng(7)
    n = 400
    size = np.array([1, 2, 4, 8, 16], dtype=np.uint64)[rng.integers(0, 5, n)]
    addr = (rng.integers(0, 64, n).astype(np.uint64) * np.uint64(16) + rng.integers(0, 16, n).astype(np.uint64)) // size * size
    thread = rng.integers(0, 6, n)
    got = shared_by_threads(thread, addr, size)
    lo, hi = addr[:, None], addr[:, None] + size[:, None]
    overlap = (lo < addr[None, :] + size[None, :]) & (addr[None, :] < hi) & (thread[:, None] != thread[None, :])
    assert got[overlap.any(axis=1)].all()
    assert not got.all()  # and it does filter something out


@pytest.mark.parametrize("seed", range(4))
def test_slot_tables_group_as_sorting_does(seed, monkeypatch):
    """The per-slot tables (`dense_slots`) and the sort give the same answer, on global, shared and local
    addresses of several blocks together, with one size and with mixed sizes, with and without `write`; and
    addresses too far apart for the tables go to the sort."""
    rng = np.random.default_rng(seed)
    n = 3000
    tag = rng.choice(np.array([0, 1, 2], dtype=np.uint64), n) << np.uint64(62)
    owner = rng.integers(0, 5, n).astype(np.uint64) << np.uint64(32)
    offset = rng.integers(0, 256, n).astype(np.uint64) * np.uint64(16) + rng.integers(0, 16, n).astype(np.uint64)
    mixed = np.array([1, 2, 4, 8, 16], dtype=np.uint64)[rng.integers(0, 5, n)]
    write = rng.random(n) < 0.3
    thread = rng.integers(0, 40, n)
    for size in (mixed, np.full(n, 4, dtype=np.uint64)):
        for base in (np.where(tag == 0, np.uint64(1 << 30), tag | owner), np.full(n, np.uint64(1 << 40))):
            addr = (base + offset) // size * size
            assert segments.dense_slots(addr) is not None
            for w in (None, write):
                got = shared_by_threads(thread, addr, size, write=w)
                assert (got == segments._shared_by_sorting(thread, addr, size, w)).all()
                assert 0 < got.sum() < n
    far = offset * np.uint64(1 << 20) // np.uint64(4) * np.uint64(4)
    assert segments.dense_slots(far) is None
    monkeypatch.setattr(segments, "_shared_by_sorting", lambda *a: "sorted")
    assert shared_by_threads(thread, far, np.full(n, 4, dtype=np.uint64)) == "sorted"


@pytest.mark.parametrize("seed", range(4))
def test_lexsort_is_numpy_lexsort(seed):
    """Packed or not, `lexsort` gives `np.lexsort`'s order, ties in event order included: keys of every integer
    type, negative values, ranges that fit in 64 bits together and ranges that do not."""
    rng = np.random.default_rng(seed)
    n = PACK_FROM * 3
    thread = rng.integers(0, 1 << 20, n)
    pc = rng.integers(-3, 40, n).astype(np.int32)
    size = rng.choice(np.array([1, 4, 8], dtype=np.uint64), n)
    near = rng.integers(0, 1 << 12, n).astype(np.uint64) + np.uint64(1 << 40)
    far = near.copy()
    far[::7] = np.uint64(np.iinfo(np.uint64).max)  # with the others: more than 64 bits, so np.lexsort's path
    few = rng.integers(0, 3, n).astype(np.uint8)  # many ties
    for keys in ((thread, pc, size, near), (thread, pc, size, far), (few, near), (few,), (np.int32(-5) + few.astype(np.int32),)):
        assert_array_equal(lexsort(keys), np.lexsort(keys))
    wide = np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max] * PACK_FROM, dtype=np.int32)  # a 32-bit range
    assert_array_equal(lexsort((few[: len(wide)], wide)), np.lexsort((few[: len(wide)], wide)))
