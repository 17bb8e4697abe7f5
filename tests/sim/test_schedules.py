"""Schedule exploration: seeded schedules, their progress guarantees, and `check --schedules N`.

The kernels in tests/kernels/schedules/ hide a race from schedule 0 (the
default min-pc policy decides a lock or a flag one way) that the reversed
schedule 1 or a seeded one exposes; their race-free twins stay clean under
every schedule. (The predictive gwcp detector, the default for such kernels,
finds the lock-order races from schedule 0 already; these tests name `hb`
where they are about schedules.) Here each is
checked with one schedule (clean: the race really is hidden), with several
(the race, with kind, space, both lines and the schedule that first exposed
it), and the seeded policy is held to the engine's progress guarantees.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from kernel_files import module, run

from gpurace.check import check, schedule_policy
from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.report.json_format import from_json, to_json
from gpurace.report.sarif import to_sarif
from gpurace.search import search
from gpurace.search.union import FindingUnion
from gpurace.sim.engine import Policy
from gpurace.sim.launch import simulate

SCHEDULES = Path(__file__).resolve().parents[1] / "kernels" / "schedules"
SEEDED = [schedule_policy(0, i) for i in range(1, 7)]


def lines(finding) -> tuple:
    return tuple(sorted(s.loc.line for s in finding.sites))


def races(report) -> list:
    """The report's races: what these kernels are about (cta_lock_write_* also read a shared word never initialised)."""
    return [f for f in report.findings if f.kind == "data-race"]


# (file, launch, the finding's space and lines, the first schedule of seed 0 that exposes it, detector)
HIDDEN = [
    ("lock_order_write_outside.cu", dict(grid=2, block=32, args=["buf:1", "buf:1"]), "global", (13, 16), 1, "hb"),
    ("flag_claim_unfenced.cu", dict(grid=2, block=32, args=["buf:1", "buf:1"]), "global", (15, 19), 2, "hb"),
    ("cta_lock_write_outside.cu", dict(grid=1, block=64, args=["buf:1"]), "shared", (14, 17), 1, "hb"),
    ("ticket_read_before_barrier.cu", dict(grid=1, block=64, args=["buf:1", "buf:65"]), "shared", (14, 15), 1, "interval"),
]
FLAG = SCHEDULES / "flag_claim_unfenced.cu"  # found first by schedule 2, the first random one, under every detector


def described(index: int) -> dict:
    """What a finding records as schedule `index` of seed 0."""
    policy = schedule_policy(0, index)
    return {"index": index, "policy": policy.kind, "seed": policy.seed if policy.kind == "random" else None}
TWINS = [
    ("lock_order_write_inside.cu", dict(grid=2, block=32, args=["buf:1", "buf:1"])),
    ("flag_claim_fenced.cu", dict(grid=2, block=32, args=["buf:1", "buf:1"])),
    ("cta_lock_write_inside.cu", dict(grid=1, block=64, args=["buf:1"])),
    ("ticket_read_after_barrier.cu", dict(grid=1, block=64, args=["buf:1", "buf:65"])),
]


@pytest.mark.parametrize("name, launch, space, where, first, detector", HIDDEN, ids=[h[0] for h in HIDDEN])
def test_a_race_the_default_schedule_hides_is_found_by_a_seeded_one(name, launch, space, where, first, detector):
    path = SCHEDULES / name
    assert check(path, **launch, detector=detector, schedules=1).clean  # schedule 0 alone: hidden
    assert check(path, **launch, detector=detector, schedules=first).clean  # the schedules before the first that exposes it
    report = check(path, **launch, detector=detector, schedules=4)
    (f,) = races(report)
    assert (f.kind, f.space, lines(f)) == ("data-race", space, where)
    assert f.schedule == described(first)
    assert report.launch["detector"] == detector
    assert report.launch["schedules"] == {"count": 4, "seed": 0}
    runs = report.stats["schedules"]
    assert [r["index"] for r in runs] == [0, 1, 2, 3]
    assert runs[first]["new"] == 1 and sum(r["new"] for r in runs) == len(report.findings)
    assert report.stats["steps"] == sum(r["steps"] for r in runs)


@pytest.mark.parametrize("name, launch", TWINS, ids=[t[0] for t in TWINS])
def test_race_free_twins_are_clean_under_every_schedule(name, launch):
    report = check(SCHEDULES / name, **launch, schedules=12)
    assert races(report) == []
    assert len(report.stats["schedules"]) == 12


def test_seeded_schedules_decide_a_lock_both_ways(tmp_path):
    """Which block takes the lock first varies: the blocks' tickets taken inside the lock come out in both orders
    (and the reversed schedule takes the other order from min-pc's)."""
    text = r"""
__global__ void k(int* lock, int* order, int* next) {
  if (threadIdx.x != 0) return;
  while (atomicCAS(lock, 0, 1) != 0) {}
  __threadfence();
  order[*next] = blockIdx.x;
  *next += 1;
  __threadfence();
  atomicExch(lock, 0);
}
"""
    path = tmp_path / "k.cu"
    path.write_text(text)
    seen = {}
    for policy in [Policy(), *SEEDED]:
        res = simulate(path, grid=2, block=32, args=["buf:1", "buf:2", "buf:1"], policy=policy)
        assert res.findings == []
        seen[policy] = tuple(res.args[1])
    assert set(seen.values()) == {(0, 1), (1, 0)}
    assert seen[Policy()] == (0, 1) and seen[Policy("reverse")] == (1, 0)


def test_the_same_seed_gives_the_same_schedules_and_findings():
    path = SCHEDULES / "lock_order_write_outside.cu"
    launch = dict(grid=2, block=32, args=["buf:1", "buf:1"], schedules=6)
    a, b = check(path, **launch), check(path, **launch)
    assert a.stats["schedules"] == b.stats["schedules"]
    assert [(f.key, f.count, f.schedule) for f in a.findings] == [(f.key, f.count, f.schedule) for f in b.findings]
    other = check(path, **launch, seed=1)
    assert [r["seed"] for r in other.stats["schedules"]] != [r["seed"] for r in a.stats["schedules"]]
    assert other.stats["schedules"][0]["policy"] == "min-pc"  # schedule 0 is the default whatever the seed


def test_schedule_seeds_are_distinct_and_schedules_0_and_1_are_min_pc_and_reverse():
    assert schedule_policy(7, 0) == Policy()
    assert schedule_policy(7, 1) == Policy("reverse")
    seeds = {schedule_policy(seed, i).seed for seed in range(4) for i in range(2, 20)}
    assert len(seeds) == 4 * 18


def test_every_schedule_starts_from_the_same_input():
    """Arrays given as arguments: every schedule sees them as given; the caller's copy ends as schedule 0 left it."""
    path = SCHEDULES / "ticket_read_after_barrier.cu"
    ticket, out = np.zeros(1, dtype=np.int32), np.zeros(65, dtype=np.int32)
    report = check(path, grid=1, block=64, args=[ticket, out], schedules=3)
    assert report.clean
    assert ticket[0] == 64  # not 3 * 64: schedules 1 and 2 ran on copies of the zeroed counter
    assert np.all(out[1:] == 0)  # under min-pc thread 0 draws ticket 0


def test_the_union_records_the_first_schedule_and_sums_counts():
    reports = [check(FLAG, grid=2, block=32, args=["buf:1", "buf:1"], schedules=1)]
    union = FindingUnion()
    racy = check(FLAG, grid=2, block=32, args=["buf:1", "buf:1"], schedules=3)
    (race,) = racy.findings
    found_by = [{"index": i, "policy": "random", "seed": i} for i in (5, 6)]
    assert union.add(reports[0], schedule={"index": 0, "policy": "min-pc", "seed": None}) == 0
    assert [union.add(racy, schedule=s) for s in found_by] == [1, 0]
    (merged,) = union.findings(None)
    assert merged.schedule == found_by[0]
    assert merged.count == 2 * race.count
    assert race.schedule["index"] == 2  # the report given to the union is not modified
    assert union.barriers() is None


def test_redundant_barriers_are_reported_only_when_no_schedule_needed_them(tmp_path):
    """A barrier every schedule executes and none needs is redundant; one needed under some schedule is not."""
    path = tmp_path / "k.cu"
    path.write_text(
        "__global__ void k(int* ticket, int* out) {\n"
        "  __shared__ int first;\n"
        "  int t = atomicAdd(ticket, 1);\n"
        "  if (t == 0) first = threadIdx.x;\n"
        "  __syncthreads();\n"  # line 5: orders the write of `first` with thread 0's read only when another thread wrote it
        "  if (threadIdx.x == 0) out[0] = first;\n"
        "  __syncthreads();\n"  # line 7: orders nothing
        "}\n"
    )
    one = check(path, grid=1, block=64, args=["buf:1", "buf:1"], redundant_barriers=True, schedules=1)
    assert sorted((f.kind, lines(f)) for f in one.findings) == [("redundant-barrier", (5,)), ("redundant-barrier", (7,))]
    many = check(path, grid=1, block=64, args=["buf:1", "buf:1"], redundant_barriers=True, schedules=4)
    (f,) = many.findings
    assert (f.kind, lines(f)) == ("redundant-barrier", (7,))
    assert f.schedule["index"] == 0
    assert many.stats["barriers"]["executed"] == one.stats["barriers"]["executed"]


@pytest.mark.parametrize("policy", SEEDED, ids=[f"seed{p.seed}" for p in SEEDED])
@pytest.mark.parametrize(
    "name", ["progress_warp_lock.cu", "progress_flag_wait.cu", "lock_per_block.cu", "lock_per_lane.cu", "livelock_flag.cu"]
)
def test_seeded_schedules_keep_the_progress_guarantees(name, policy):
    """Spin locks taken by every lane of a warp, flags set by another block: they finish, with the same results;
    a flag nobody sets is still a livelock found by the no-progress rule."""
    reference = run(name, max_steps=10_000)
    other = run(name, policy=policy, max_steps=10_000)
    assert [f.kind for f in other.findings] == [f.kind for f in reference.findings]
    if name == "livelock_flag.cu":
        assert other.stats.steps < 10_000
        return
    for mine, theirs in zip(reference.args, other.args):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))


@pytest.mark.parametrize("policy", SEEDED[:2], ids=[f"seed{p.seed}" for p in SEEDED[:2]])
@pytest.mark.parametrize("name", ["deadlock_partial_barrier.cu", "deadlock_warp_vs_block.cu", "barrier_two_statements.cu"])
def test_seeded_schedules_report_the_same_stuck_kernels(name, policy):
    assert [(f.kind, lines(f)) for f in run(name, policy=policy).findings] == [
        (f.kind, lines(f)) for f in run(name).findings
    ]


def test_seeded_schedules_stay_vectorised():
    """Warps run fused wherever nothing synchronises: a hold costs a few steps while the held warp catches up,
    never one run per warp (32 warps here: 32 times the steps of min-pc)."""
    args = ["buf:1024:iota", "buf:1024:iota", "buf:1024", 1024]
    reference = simulate(module("vector_add_float.cu"), grid=4, block=256, args=args)
    steps = []
    for policy in SEEDED:
        seeded = simulate(module("vector_add_float.cu"), grid=4, block=256, args=args, policy=policy)
        np.testing.assert_array_equal(seeded.args[2], reference.args[2])
        assert seeded.stats.thread_instructions == reference.stats.thread_instructions
        steps.append(seeded.stats.steps)
    assert min(steps) == reference.stats.steps  # no warp held: exactly min-pc's steps
    assert max(steps) < 4 * reference.stats.steps


def test_reports_show_the_schedule():
    path = FLAG
    report = check(path, grid=2, block=32, args=["buf:1", "buf:1"], schedules=4)
    seed = schedule_policy(0, 2).seed
    data = to_json(report)
    assert data["findings"][0]["schedule"] == {"index": 2, "policy": "random", "seed": seed}
    assert from_json(data).findings[0].schedule == report.findings[0].schedule
    (result,) = to_sarif(report)["runs"][0]["results"]
    assert result["properties"]["schedule"]["index"] == 2
    text = CliRunner().invoke(
        cli, ["check", str(path), "--grid", "2", "--block", "32", "--arg", "buf:1", "--arg", "buf:1", "--schedules", "4"]
    )
    assert text.exit_code == 1
    assert f"exposed by: schedule 2 (seed {seed})" in text.stdout
    assert "4 schedules per launch (seed 0): 1 finding first exposed by another schedule than schedule 0" in text.stdout


def test_cli_json_and_exit_codes():
    launch = ["check", str(FLAG), "--grid", "2", "--block", "32", "--arg", "buf:1", "--arg", "buf:1", "--format", "json"]
    one = CliRunner().invoke(cli, [*launch, "--schedules", "1"])
    assert one.exit_code == 0 and json.loads(one.stdout)["findings"] == []
    many = CliRunner().invoke(cli, launch)  # the default: three schedules, and flip since the blocks contend
    assert json.loads(many.stdout)["launch"]["schedules"] == {"count": 4, "seed": 0}
    assert many.exit_code == 1
    (f,) = json.loads(many.stdout)["findings"]
    assert f["schedule"]["index"] == 2
    bad = CliRunner().invoke(cli, [*launch, "--schedules", "0"])
    assert bad.exit_code == 2 and "--schedules" in bad.stderr


def test_api_refuses_zero_or_too_many_schedules_and_negative_seeds():
    with pytest.raises(UserError, match="--schedules must be from 1 to 1024, got 0"):
        check(SCHEDULES / "lock_order_write_inside.cu", grid=2, block=32, schedules=0)
    with pytest.raises(UserError, match="--schedules must be from 1 to 1024, got 1025"):
        check(SCHEDULES / "lock_order_write_inside.cu", grid=2, block=32, schedules=1025)
    with pytest.raises(UserError, match="--seed must not be negative, got -1"):
        check(SCHEDULES / "lock_order_write_inside.cu", grid=2, block=32, seed=-1)


def test_search_checks_several_schedules_of_every_candidate(tmp_path):
    """With --search, each candidate input runs every schedule; findings carry the input and the schedule."""
    path = tmp_path / "k.cu"
    path.write_text(
        "__global__ void k(int* lock, int* data, int writer) {\n"
        "  if (threadIdx.x != 0) return;\n"
        "  if (blockIdx.x == writer % 2) *data = 1;\n"  # line 3: outside the lock
        "  while (atomicCAS(lock, 0, 1) != 0) {}\n"
        "  __threadfence();\n"
        "  if (blockIdx.x != writer % 2) *data = 2;\n"  # line 6: inside
        "  __threadfence();\n"
        "  atomicExch(lock, 0);\n"
        "}\n"
    )
    report = search(path, grid=2, block=32, args=["buf:1", "buf:1", "auto"], population=2, generations=1, schedules=3)
    (f,) = report.findings
    assert (f.kind, f.space, lines(f)) == ("data-race", "global", (3, 6))
    assert f.input is not None and f.schedule is not None
    assert report.launch["schedules"] == {"count": 3, "seed": 0}
    replay = check(path, grid=f.input["grid"], block=f.input["block"], args=f.input["args"], schedules=f.schedule["index"] + 1)
    assert f.key in {g.key for g in replay.findings}


def test_the_default_exploration_stops_at_a_livelock_but_asked_for_schedules_all_run():
    """A flag nobody sets: schedule 0 spends its whole step budget. The default three schedules stop there
    (each would spend it again); schedules asked for all run."""
    path = Path(__file__).resolve().parents[1] / "kernels" / "sim" / "livelock_counting.cu"
    launch = dict(grid=1, block=32, args=["buf:1", "buf:32"], max_steps=3000)
    default = check(path, **launch)
    assert [f.kind for f in default.findings] == ["livelock"]
    assert default.launch["schedules"] == {"count": 1, "seed": 0, "planned": 3, "ended_by": "livelock"}
    assert len(default.stats["schedules"]) == 1
    asked = check(path, **launch, schedules=3)
    assert asked.launch["schedules"] == {"count": 3, "seed": 0}
    assert [r["policy"] for r in asked.stats["schedules"]] == ["min-pc", "reverse", "random"]
