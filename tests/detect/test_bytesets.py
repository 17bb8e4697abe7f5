"""`PageBits` growing a few pages at a time, and flags set batch by batch as one concatenation sets them."""

from __future__ import annotations

import numpy as np

from gpurace.detect.bytesets import PageBits
from gpurace.detect.footprint import ALONE_ACCESSES, _pieces


def flags_of(bits: PageBits) -> dict[int, int]:
    """address -> flag of every flagged byte."""
    rows, offsets = np.nonzero(bits.bits[bits.rows])
    return {(int(bits.pages[r]) << 12) + int(o): int(bits.bits[bits.rows[r], o]) for r, o in zip(rows, offsets)}


def test_pages_added_one_at_a_time_hold_what_one_add_holds():
    starts = np.arange(0, 40 * 4096, 512, dtype=np.uint64) + np.uint64(1 << 32)
    flags = (np.arange(len(starts)) % 200 + 1).astype(np.uint8)
    grown, whole = PageBits(), PageBits()
    for at in range(0, len(starts), 8):  # one page per add: rows are made ahead, then used
        grown.add(starts[at : at + 8], 8, flags[at : at + 8])
    whole.add(starts, 8, flags)
    assert flags_of(grown) == flags_of(whole)
    assert grown.nbytes == whole.nbytes == 40 * 4096
    grown.trim()
    assert flags_of(grown) == flags_of(whole) and grown.nbytes == 40 * 4096


def test_a_batch_over_pages_held_in_scattered_rows_is_indexed_page_by_page():
    bits = PageBits()
    base = np.uint64(1 << 32)
    bits.add(np.array([base + np.uint64(5 * 4096)], dtype=np.uint64), 4, 7)  # page 5 first: pages 0..9 then sit
    # in rows 1..5, 0, 6..9
    starts = base + np.arange(0, 10 * 4096, 4, dtype=np.uint64)
    bits.add(starts, 4, 3)
    assert set(flags_of(bits).values()) == {3}
    assert len(flags_of(bits)) == 10 * 4096
    assert (bits.read(starts, 4) == 0x03030303).all()


def test_pieces_keep_the_order_of_the_batches():
    big = np.arange(ALONE_ACCESSES, dtype=np.uint64) * np.uint64(4)
    small = [np.array([0, 4], dtype=np.uint64), np.array([8], dtype=np.uint64)]
    pieces = _pieces([(small[0], 1), (big, 2), (small[1], 3), (small[0], 4)])
    assert [len(s) for s, _ in pieces] == [2, ALONE_ACCESSES, 3]
    assert pieces[1][1] == 2 and list(pieces[2][1]) == [3, 4, 4]
    one, many = PageBits(), PageBits()
    for starts, flags in pieces:
        one.add(starts, 4, flags)
    many.add(np.concatenate([small[0], big, small[1], small[0]]), 4, np.repeat(np.uint8([1, 2, 3, 4]), [2, len(big), 1, 2]))
    assert flags_of(one) == flags_of(many)  # where batches meet, the last one's flag stays either way


def test_a_batch_whose_threads_ran_different_iterations_flags_its_pages_as_sorted_starts_do():
    # a grid-stride copy whose warps are an iteration apart: pages out of order, close together; and two far apart
    rng = np.random.default_rng(7)
    base = np.uint64(1 << 32)
    near = base + rng.permutation(np.arange(0, 24 * 4096, 4, dtype=np.uint64))
    far = np.array([base + np.uint64(1 << 30), base], dtype=np.uint64)
    for starts in (near, far):
        shuffled, ordered = PageBits(), PageBits()
        shuffled.add(starts, 4)
        ordered.add(np.sort(starts), 4)
        assert np.array_equal(shuffled.pages, np.unique(starts >> np.uint64(12)))
        assert flags_of(shuffled) == flags_of(ordered)
