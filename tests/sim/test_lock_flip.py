"""The default check's `flip` schedule: the runner-up of every contended atomic wins it.

The kernels in tests/kernels/schedules/*_winner_* take a lock or draw a ticket
in an if/else on the block index whose else-branch (block 1's) is laid out
first, so `min-pc`, `reverse` and seed 0's random schedule all let block 1 win;
the race needs block 0 to win. The default check watches schedule 0, learns
who won each contended address, and adds a schedule where the other warp does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurace.check import check
from gpurace.report.json_format import to_json
from gpurace.sim.contention import Contention
from gpurace.sim.engine import Policy
from gpurace.sim.launch import simulate

SCHEDULES = Path(__file__).resolve().parents[1] / "kernels" / "schedules"
LAUNCH = dict(grid=2, block=1, args=["buf:1"])
FLIP = {"index": 3, "policy": "flip", "seed": None}


def lines(finding) -> tuple:
    return tuple(sorted(s.loc.line for s in finding.sites))


@pytest.mark.parametrize(
    "name, where",
    [("lock_winner_read_then_write.cu", (22, 26)), ("ticket_winner_read_then_write.cu", (25, 30))],
)
@pytest.mark.parametrize("detector", ["auto", "hb"])
def test_the_default_check_finds_a_race_only_the_other_winner_shows(name, where, detector):
    path = SCHEDULES / name
    assert check(path, **LAUNCH, detector=detector, schedules=3).clean  # min-pc, reverse, random: block 1 wins
    report = check(path, **LAUNCH, detector=detector)
    (f,) = report.findings
    assert (f.kind, f.space, lines(f)) == ("data-race", "global", where)
    assert {s.block for s in f.sites} == {(0, 0, 0), (1, 0, 0)}
    assert f.schedule == FLIP
    assert report.launch["schedules"] == {"count": 4, "seed": 0}
    assert [r["policy"] for r in report.stats["schedules"]] == ["min-pc", "reverse", "random", "flip"]


def test_the_race_free_twin_is_clean_in_either_order():
    report = check(SCHEDULES / "lock_winner_write_inside.cu", **LAUNCH)
    assert report.findings == []
    assert [r["policy"] for r in report.stats["schedules"]] == ["min-pc", "reverse", "random", "flip"]


def winners(path) -> tuple:
    """The flip gates a schedule-0 run of `path` gives."""
    watch = Contention()
    check(path, **LAUNCH, schedules=1, sinks=[watch])
    return watch.contended(), watch.flip_gates()


def test_contention_names_the_first_winner_and_the_runner_up():
    contended, gates = winners(SCHEDULES / "lock_winner_read_then_write.cu")
    assert contended == 1  # the lock word; `seen` and `data` are written plainly
    ((winner, _, runner, _),) = gates
    assert (winner, runner) == (1, 0)  # block 1's branch is laid out first


def test_flip_lets_the_runner_up_take_the_lock(tmp_path):
    """The order in which blocks enter the critical section, recorded inside it, comes out reversed."""
    path = tmp_path / "k.cu"
    path.write_text(
        r"""
__global__ void k(int* lock, int* order, int* next) {
  if (blockIdx.x == 0) { while (atomicCAS(lock, 0, 1) != 0) {} }
  else { while (atomicCAS(lock, 0, 2) != 0) {} }
  __threadfence();
  order[*next] = blockIdx.x;
  *next += 1;
  __threadfence();
  atomicExch(lock, 0);
}
"""
    )
    launch = dict(grid=3, block=1, args=["buf:1", "buf:3", "buf:1"])
    watch = Contention()
    check(path, **launch, schedules=1, sinks=[watch])
    observed = tuple(simulate(path, **launch).args[1])
    flipped = tuple(simulate(path, **launch, policy=Policy("flip", gates=watch.flip_gates())).args[1])
    assert sorted(observed) == sorted(flipped) == [0, 1, 2]
    assert observed[0] != flipped[0]  # another block took the lock first


def test_flip_keeps_progress_when_the_runner_up_waits_for_the_winner(tmp_path):
    """Block 1 counts first (its branch is laid out first) and then raises a flag block 0 waits for before it
    counts: held back, block 1 would never let block 0 reach the counter, so its gate opens."""
    path = tmp_path / "k.cu"
    path.write_text(
        r"""
__global__ void k(int* count, int* flag) {
  if (blockIdx.x == 0) {
    while (atomicAdd(flag, 0) == 0) {}
    atomicAdd(count, 1);
  } else {
    atomicInc((unsigned*)count, 100u);
    atomicExch(flag, 1);
  }
}
"""
    )
    report = check(path, grid=2, block=1, args=["buf:1", "buf:1"])
    assert report.findings == []
    runs = report.stats["schedules"]
    assert [r["policy"] for r in runs] == ["min-pc", "reverse", "random", "flip"]
    assert runs[3]["steps"] < 1000


def test_a_kernel_without_contention_gets_no_flip_schedule(tmp_path):
    path = tmp_path / "k.cu"
    # the old values are read (so the order of the atomics matters: three schedules), but no address has two warps
    path.write_text("__global__ void k(int* c, int* old) { old[blockIdx.x] = atomicAdd(&c[blockIdx.x], 1); }\n")
    report = check(path, grid=4, block=1, args=["buf:4", "buf:4"])
    assert report.launch["schedules"] == {"count": 3, "seed": 0}


def test_the_default_check_with_flip_is_reproducible():
    path = SCHEDULES / "ticket_winner_read_then_write.cu"
    a, b = check(path, **LAUNCH), check(path, **LAUNCH)
    for r in (a, b):
        r.stats.pop("seconds")
        for run in r.stats["schedules"]:
            run.pop("seconds", None)
    assert to_json(a) == to_json(b)
