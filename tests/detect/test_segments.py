"""The prefilter for ranges that another thread may overlap: it never drops one that does."""

from __future__ import annotations

import numpy as np

from gpurace.detect.segments import shared_by_threads


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
