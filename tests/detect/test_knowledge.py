"""Knowledge objects: joins agree with a plain dict of maxima whether the objects are sparse or dense."""

from __future__ import annotations

import numpy as np

from gpurace.detect.knowledge import DENSE_AT, Knowledge, join_all


def _reference(items: list[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for d in items:
        for k, v in d.items():
            out[k] = max(out.get(k, -1), v)
    return out


def _clocks(k: Knowledge, ids) -> dict[int, int]:
    return {u: k.clock_of(u) for u in ids if k.clock_of(u) >= 0}


def test_random_joins_match_pointwise_maxima_in_both_representations():
    rng = np.random.default_rng(0)
    for _ in range(200):
        parts = []
        for _ in range(int(rng.integers(1, 6))):
            lo = int(rng.integers(0, 4000))
            n = int(rng.integers(0, 3 * DENSE_AT))
            ids = rng.integers(lo, lo + int(rng.integers(1, 600)), size=n)
            parts.append({int(u): int(c) for u, c in zip(ids, rng.integers(0, 100, size=n))})
        joined = join_all(Knowledge(p) for p in parts)
        expected = _reference(parts)
        universe = set(expected) | set(range(0, 4600, 7))
        assert _clocks(joined, universe) == expected


def test_a_large_dense_range_goes_dense_and_a_scattered_one_stays_sparse():
    block = join_all(Knowledge({u: 1}) for u in range(256, 256 + 2 * DENSE_AT))
    assert block.dense is not None and block.lo == 256 and block.threads == {}
    scattered = join_all(Knowledge({u * 10_000: 1}) for u in range(2 * DENSE_AT))
    assert scattered.dense is None and len(scattered.threads) == 2 * DENSE_AT


def test_a_join_that_adds_nothing_returns_the_holder_itself():
    big = join_all(Knowledge({u: 5}, {0: 2}) for u in range(100))
    small = Knowledge({3: 4}, {0: 1})
    assert big.join(small) is big and small.join(big) is big
    grown = big.join(Knowledge({3: 6}))
    assert grown is not big and grown.clock_of(3) == 6 and big.clock_of(3) == 5  # immutable
    assert grown.phases == {0: 2}


def test_knows_reads_clocks_and_barrier_phases():
    k = Knowledge({7: 3}, {1: 2})
    assert k.knows(7, 3, block=0, phase=0, u_phase_now=0)
    assert not k.knows(7, 4, block=0, phase=0, u_phase_now=0)
    assert k.knows(9, 10, block=1, phase=1, u_phase_now=2)  # made before barrier 2 of block 1, which 9 passed
    assert not k.knows(9, 10, block=1, phase=1, u_phase_now=1)


def test_a_join_with_an_object_it_was_made_of_returns_it_from_either_side():
    held = join_all(Knowledge({u * 1000: 5}, {u: 1}) for u in range(40))  # large and sparse
    grown = held.join(Knowledge({7: 1}))
    assert grown is not held
    assert grown.join(held) is grown and held.join(grown) is grown
    assert grown.clock_of(7) == 1 and grown.clock_of(39_000) == 5 and grown.phases == held.phases


def test_joins_compare_entries_once_the_objects_a_join_was_made_of_are_gone():
    grown = join_all(Knowledge({u * 1000: 5}) for u in range(40)).join(Knowledge({7: 1}))
    assert all(ref() is None for ref in grown.made_of)
    same = join_all(Knowledge({u * 1000: 5}) for u in range(40))
    assert grown.join(same) is grown and same.join(grown).threads == grown.threads
    newer = grown.join(Knowledge({0: 9}))
    assert newer is not grown and newer.clock_of(0) == 9 and newer.clock_of(7) == 1


def test_adding_a_threads_own_clock_and_phase_is_the_join_with_them():
    rng = np.random.default_rng(1)
    for _ in range(200):
        lo = int(rng.integers(0, 400))
        n = int(rng.integers(0, 3 * DENSE_AT))
        base = Knowledge({int(u): int(c) for u, c in zip(rng.integers(lo, lo + 300, size=n), rng.integers(0, 50, size=n))})
        base = base.join(Knowledge({}, {int(b): int(p) for b, p in zip(rng.integers(0, 4, size=2), rng.integers(1, 5, size=2))}))
        g, block, phase = int(rng.integers(lo, lo + 300)), int(rng.integers(0, 4)), int(rng.integers(0, 5))
        clock = None if rng.random() < 0.2 else int(rng.integers(0, 60))
        own = Knowledge({} if clock is None else {g: clock}, {block: phase} if phase else {})
        added, joined = base.with_own(g, clock, block, phase), base.join(own)
        universe = range(lo, lo + 300)
        assert _clocks(added, universe) == _clocks(joined, universe) and added.phases == joined.phases
        if joined is base:
            assert added is base  # nothing new: the object itself, shared by reference
        else:
            assert added.join(base) is added  # made of it: a later join with it costs nothing


def test_knowledge_objects_are_never_changed_by_adding_to_them():
    base = Knowledge({3: 4}, {0: 1})
    grown = base.with_own(5, 7, 0, 2)
    assert base.threads == {3: 4} and base.phases == {0: 1}
    assert grown.threads == {3: 4, 5: 7} and grown.phases == {0: 2}
