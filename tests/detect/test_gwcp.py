"""The predictive `gwcp` detector: races another lock order would show, and none that no schedule can.

The kernels with expectations are in tests/kernels/predictable/ (run by
test_expectations.py); here: that `hb` really misses the lock-order race under
the default schedule, the cause text, the soundness bar against `hb` on every
corpus kernel, and that the lock bookkeeping stays with the threads that lock.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_expectations import corpus_cases, observed, parse_expectation, run_check

from gpurace.check import check
from gpurace.detect.base import DetectorContext
from gpurace.detect.gwcp import DoneSection, GwcpDetector, LockHistory
from gpurace.detect.knowledge import Knowledge
from gpurace.sim.launch import simulate

PREDICTABLE = Path(__file__).resolve().parent.parent / "kernels" / "predictable"


def _races(report) -> list[tuple]:
    return [(f.kind, f.space, tuple(sorted(s.loc.line for s in f.sites))) for f in report.findings if f.kind == "data-race"]


def test_lock_order_race_is_hidden_from_hb_and_found_by_gwcp():
    path = PREDICTABLE / "lock_order_outside.cu"
    launch = dict(grid=(2,), block=(32,), args=["buf:1", "buf:1"], schedules=1)  # the default schedule only
    assert _races(check(path, detector="hb", **launch)) == []
    report = check(path, detector="gwcp", **launch)
    assert _races(report) == [("data-race", "global", (28, 32))]
    (finding,) = report.findings
    assert finding.cause.startswith("predictable race: another schedule of the same path")
    assert "lock_order_outside.cu:12 orders them only in this schedule" in finding.cause
    assert [s.block for s in finding.sites] == [(0, 0, 0), (1, 0, 0)]


def test_conflicting_sections_are_ordered_in_either_lock_order():
    """Rule (a) orders the writes inside both sections whichever block locks first (the run decides which)."""
    for grid in (2, 4):
        report = check(PREDICTABLE / "lock_order_inside.cu", detector="gwcp", grid=(grid,), block=(32,), args=["buf:1", "buf:1"])
        assert _races(report) == []


def _gwcp_run(path: Path, **launch) -> GwcpDetector:
    made: list[GwcpDetector] = []

    def sinks(program, geometry, memory):
        made.append(GwcpDetector(DetectorContext(program, geometry, memory)))
        return made

    simulate(path, sink_factory=sinks, **launch)
    return made[0]


def test_lock_bookkeeping_stays_with_the_threads_that_lock():
    det = _gwcp_run(PREDICTABLE / "barrier_after_lock.cu", grid=(2,), block=(64,), args=["buf:1", "buf:1", "buf:2"])
    assert det.finish() == []
    (lock,) = det.locks.values()
    assert sorted(lock.done) == [0, 64]  # thread 0 of each block, one section each
    assert all(len(sections) == 1 for sections in lock.done.values())
    # words touched inside, all written: the counter (read and written) and each block's shared copy (written)
    assert len(lock.accessed) == 3 and set(lock.accessed) == set(lock.writes)
    assert not det.open and not det.has_open.any()  # every section closed, nothing left per thread


def test_a_lock_handed_from_holder_to_holder_is_known_whole_by_the_next_holder():
    """Rule (b) skips its look at a lock's earlier takers when the latest release knows all their releases."""
    det = _gwcp_run(PREDICTABLE.parent / "sim" / "lock_per_lane.cu", grid=(2,), block=(64,), args=["buf:1", "buf:2"])
    assert det.finish() == []
    (lock,) = det.locks.values()
    assert lock.chained and len(lock.latest) == 128  # every lane took it, each after the one before
    assert all(lock.last.clock_of(t) >= clock for t, clock in lock.latest.items())
    assert lock.knows_every_taker(lock.last) and not lock.knows_every_taker(Knowledge({0: 1}))


def test_a_holder_that_did_not_happen_after_the_last_release_breaks_the_chain():
    lock = LockHistory(free=0)
    first = Knowledge({1: 3})
    lock.add(DoneSection(1, 0, True, 1, 0, 3, first), None)
    assert lock.chained and lock.knows_every_taker(first)
    second = Knowledge({2: 5})  # its holder knew nothing of the first section
    lock.add(DoneSection(2, 1, True, 4, 0, 5, second), Knowledge({2: 4}))
    assert not lock.chained and not lock.knows_every_taker(second)


def test_a_cas_that_fails_opens_no_section_and_a_flag_is_no_lock():
    det = _gwcp_run(PREDICTABLE / "mp_flag.cu", grid=(2,), block=(32,), args=["buf:1", "buf:1", "buf:1"])
    assert det.finish() == []
    assert det.locks == {}


GWCP_MISSES = {
    # PreDataR Fig. 10 (tests/kernels/lockset/): the two critical sections conflict on x, so GWCP keeps their
    # order, as WCP does, and misses block 1's write after its unlock; the lockset detector finds it.
    "write_after_unlock.cu": {("data-race", "global", (29, 32))},
}


@pytest.mark.parametrize("path, launch, expect", corpus_cases())
def test_gwcp_against_hb_on_the_corpus(path: Path, launch: str, expect: list[str]):
    """Race-free kernels: gwcp reports no race. Racy ones: gwcp reports every race hb reports and every expected one."""
    gwcp = {f[:3] for f in observed(run_check(path, launch, "--detector", "gwcp")) if f[0] == "data-race"}
    if expect == ["clean"]:
        assert gwcp == set(), f"{path.name}: gwcp reports races on a race-free kernel: {gwcp}"
        return
    hb = {f[:3] for f in observed(run_check(path, launch, "--detector", "hb")) if f[0] == "data-race"}
    assert hb <= gwcp, f"{path.name}: hb finds {hb - gwcp}, gwcp does not"
    missed = GWCP_MISSES.get(path.name, set())
    wanted = [e for e in map(parse_expectation, expect) if e is not None and e[0] == "data-race" and e[:3] not in missed]
    assert all(any(_matches(e, f) for f in gwcp) for e in wanted), f"{path.name}: gwcp misses an expected race {wanted}"
    assert not any(_matches((*m, None), f) for m in missed for f in gwcp), f"{path.name}: gwcp now finds {missed}"


def _matches(expected: tuple, found: tuple) -> bool:
    kind, space, lines = expected[:3]
    return kind == found[0] and (space is None or space == found[1]) and lines == found[2]
