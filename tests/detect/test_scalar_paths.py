"""The detectors' plain-Python paths for narrow batches (`detect.scalar_paths`) find what the array paths find.

Each lock or atomic kernel below is checked by `hb` and by `gwcp` twice: with
the thresholds at zero (every step on arrays) and at their largest (every step
that has one on plain Python), and the two reports must be the same finding
for finding. The kernels include racy and race-free ones, locks of one lane
per block and of every lane, flags with and without fences. The helpers that
have both paths (pair classification, flag unpacking, scope coverage, clock lookup) are also
compared directly, over every input they can meet.
"""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from test_expectations import run_check

from corpus import read_header
from gpurace.detect import rules, scalar_paths
from gpurace.detect.hb import HappensBeforeDetector, _unpack_flag_arrays, _unpack_flags
from gpurace.detect.knowledge import Knowledge
from gpurace.detect.rules import AccessFlags, classify

KERNELS = Path(__file__).resolve().parent.parent / "kernels"

CASES = [
    "check/lock_device.cu",
    "check/lock_every_lane.cu",
    "check/lock_no_fence.cu",
    "check/lock_block_fence_across_blocks.cu",
    "check/atomic_vs_plain.cu",
    "check/mp_device_fences.cu",
    "check/mp_no_producer_fence.cu",
    "predictable/exch_lock.cu",
    "predictable/lock_order_outside.cu",
    "predictable/release_order.cu",
    "lockset/cta_lock_across_blocks.cu",
]

_DETECTOR = re.compile(r"--detector[ =]\S+")


def _report(path: Path, detector: str) -> dict:
    launch = _DETECTOR.sub("", read_header(path).launches[0])
    report = run_check(path, launch, "--detector", detector)
    report["stats"].pop("seconds", None)
    return report


def _force(monkeypatch, limit: int) -> None:
    monkeypatch.setattr(scalar_paths, "MAX_LANES", limit)
    monkeypatch.setattr(scalar_paths, "MAX_TAKERS", limit)


@pytest.mark.parametrize("detector", ["hb", "gwcp"])
@pytest.mark.parametrize("name", CASES)
def test_scalar_and_array_paths_report_the_same(monkeypatch, name: str, detector: str) -> None:
    path = KERNELS / name
    _force(monkeypatch, 0)
    arrays = _report(path, detector)
    _force(monkeypatch, 1 << 30)
    rules._classify_pair.cache_clear()
    scalars = _report(path, detector)
    assert scalars == arrays


def test_the_cases_include_racy_and_race_free_kernels() -> None:
    found = {bool(_report(KERNELS / name, "gwcp")["findings"]) for name in CASES}
    assert found == {True, False}


def test_the_threshold_is_read_when_a_batch_is_classified(monkeypatch) -> None:
    """The forced thresholds above take effect: classification goes through the per-pair memo only when allowed."""
    one = AccessFlags.of([True], [False], [False], [-1])
    pair = (one, one, np.array([True]), np.array([False]), "cuda", np.array([True]))
    rules._classify_pair.cache_clear()
    monkeypatch.setattr(scalar_paths, "MAX_LANES", 0)
    classify(*pair)
    assert rules._classify_pair.cache_info().misses == 0
    monkeypatch.setattr(scalar_paths, "MAX_LANES", 4)
    classify(*pair)
    assert rules._classify_pair.cache_info().misses == 1


@pytest.mark.parametrize("model", ["cuda", "ptx", "scord"])
def test_classify_pair_by_pair_matches_the_array_path(model: str) -> None:
    """Every combination of two accesses' flags and the pair's placement, one pair at a time and all at once."""
    access = list(itertools.product([False, True], [False, True], [False, True], [-1, 0, 1, 2, 3]))
    combos = list(itertools.product(access, access, [False, True], [False, True], [False, True]))
    a, b, same_block, same_warp, same_cluster = zip(*combos)
    fa, fb = (AccessFlags.of(*map(list, zip(*side))) for side in (a, b))
    places = [np.array(v) for v in (same_block, same_warp, same_cluster)]
    expected = rules._classify_arrays(fa, fb, places[0], places[1], model, places[2])
    pairs = [
        classify(fa.take(np.array([i])), fb.take(np.array([i])), *(p[i : i + 1] for p in places[:2]), model, places[2][i : i + 1])
        for i in range(len(combos))
    ]
    assert np.concatenate(pairs).tolist() == expected.tolist()


def test_clock_list_matches_clocks_of_for_sparse_and_dense_knowledge() -> None:
    sparse = Knowledge({3: 5, 9: 2})
    dense = Knowledge({}, {}, np.array([4, -1, 7, 1], dtype=np.int32), lo=10, known=3)
    ids = [0, 3, 9, 10, 11, 12, 13, 14, 100]
    for know in (sparse, dense):
        assert know.clock_list(ids) == know.clocks_of(np.array(ids, dtype=np.int64)).tolist()


def test_one_scope_check_matches_the_array_one() -> None:
    """`_covers` (one release or acquire) against `_block_covers` (arrays), for every scope and pair of blocks of
    a launch of two clusters of two blocks."""
    detector = SimpleNamespace(geo=SimpleNamespace(block_cluster=np.array([0, 0, 1, 1])))
    cases = list(itertools.product(range(4), range(4), range(4)))
    rank, block, other = (np.array(c) for c in zip(*cases))
    expected = HappensBeforeDetector._block_covers(detector, rank, block, other)
    assert [HappensBeforeDetector._covers(detector, *c) for c in cases] == expected.tolist()


def test_unpacked_flags_match_for_every_flag_word() -> None:
    words = np.arange(64, dtype=np.int16)
    expected = _unpack_flag_arrays(words)
    for i in range(0, 64, 3):
        few = _unpack_flags(words[i : i + 3])
        for got, want in zip((few.write, few.atomic, few.volatile, few.scope), (expected.write, expected.atomic, expected.volatile, expected.scope)):
            assert got.dtype == want.dtype and got.tolist() == want[i : i + 3].tolist()
