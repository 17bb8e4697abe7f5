"""Instructions' address ranges (`detect.pc_ranges`): which pairs of instructions may have overlapping accesses."""

from __future__ import annotations

import numpy as np

from gpurace.detect.pc_ranges import PcRanges, bounds


def ranges(*batches: tuple[int, list[int], int]) -> PcRanges:
    """PcRanges of (pc, addresses, size) batches, for 4 pcs."""
    rows = [(pc, *bounds(np.asarray(addrs, dtype=np.uint64), size)) for pc, addrs, size in batches]
    pc, lo, hi, apart = (np.asarray(c) for c in zip(*rows))
    return PcRanges(4, pc.astype(np.int32), lo.astype(np.uint64), hi.astype(np.uint64), apart.astype(np.bool_))


def meets(r: PcRanges, a: int, b: int) -> bool:
    return bool(r.meet(np.array([a]), np.array([b]))[0])


def test_bounds_say_whether_a_batch_ascends_without_overlap():
    assert bounds(np.array([8, 12, 16], dtype=np.uint64), 4) == (8, 20, True)
    assert bounds(np.array([8, 10], dtype=np.uint64), 4)[2] is False  # overlapping neighbours
    assert bounds(np.array([16, 8], dtype=np.uint64), 4) == (8, 20, False)  # descending
    assert bounds(np.array([8, 8], dtype=np.uint64), 4)[2] is False  # one address twice
    assert bounds(np.array([8], dtype=np.uint64), 8) == (8, 16, True)


def test_instructions_meet_where_their_ranges_overlap():
    r = ranges((0, [0, 4, 8], 4), (1, [12, 16], 4), (2, [10], 2))
    assert not meets(r, 0, 1)  # [0, 12) and [12, 20) touch but share no byte
    assert meets(r, 0, 2) and meets(r, 2, 0)  # [10, 12) lies in [0, 12)
    assert not meets(r, 1, 2)
    assert list(r.present) == [0, 1, 2]


def test_an_instruction_meets_itself_unless_all_its_accesses_lie_apart():
    r = ranges((0, [0, 4], 4), (0, [8, 12], 4), (1, [0, 4], 4), (1, [4, 8], 4), (2, [4, 0], 4))
    assert not meets(r, 0, 0)  # two ascending batches, one after the other
    assert meets(r, 1, 1)  # its second batch starts where the first ends: byte 4 twice
    assert meets(r, 2, 2)  # a descending batch is not known to be apart


def test_instructions_within_a_window_are_told_from_those_that_reach_into_it():
    r = ranges((0, [0, 4], 4), (1, [12, 16], 4), (2, [26], 4))
    inside, some = r.within(8, 32)
    assert list(inside) == [False, True, True, False]  # pc 3 has no accesses
    assert list(some) == [False, True, True, False]
    inside, some = r.within(4, 16)
    assert list(inside) == [False, False, False, False]
    assert list(some) == [True, True, False, False]  # [0, 8) and [12, 20) reach into [4, 16)
