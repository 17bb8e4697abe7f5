"""The detectors' plain-Python paths for narrow batches (`detect.scalar_paths`) find what the array paths find.

Each lock or atomic kernel below is checked by `hb` and by `gwcp` twice: with
the thresholds at zero (every step on arrays) and at their largest (every step
that has one on plain Python), and the two reports must be the same finding
for finding. The kernels include racy and race-free ones, locks of one lane
per block and of every lane, flags with and without fences.
"""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from test_expectations import run_check

from corpus import read_header
from gpurace.detect import rules, scalar_paths
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
