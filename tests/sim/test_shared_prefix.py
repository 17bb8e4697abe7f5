"""The reverse and flip schedules fork from schedule 0's run at its first instruction whose order matters
(`sim.shared_prefix`), and find exactly what they find when run from the start."""

from __future__ import annotations

import functools
import json
import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus import read_header

import gpurace.cli
from gpurace.check import check
from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.frontend.load import load_module
from gpurace.limits import Limits
from gpurace.report.json_format import to_json
from gpurace.sim import shared_prefix
from gpurace.sim.schedule import SeededSchedule

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
TICKET = KERNELS / "sim" / "ticket_after_reduction.cu"
TICKET_LAUNCH = dict(grid=8, block=64, args=["buf:1024:iota", "buf:8", "buf:1"])
CLAIM = KERNELS / "sim" / "claim_reverse_race.cu"


def claim_launch(n: int) -> dict:
    return dict(grid=1, block=64, args=["buf:1", "buf:64", n])


def findings_json(report) -> list:
    return to_json(report)["findings"]


def runs(report) -> dict:
    return {r["policy"]: r for r in report.stats["schedules"]}


def children() -> str:
    """The processes this one started that are still alive or unreaped."""
    pid = os.getpid()
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().strip()


@pytest.fixture(autouse=True)
def memory_for_a_fork(monkeypatch):
    """These tests are about forking: the machine's free memory (`fits_twice`) must not decide it for them."""
    monkeypatch.setattr(shared_prefix, "fits_twice", lambda: True)


def test_reverse_and_flip_fork_after_the_work_and_report_what_runs_from_the_start_report(monkeypatch):
    module = load_module(TICKET)  # compiled first: a compile forks too
    forks = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    shared = check(module, **TICKET_LAUNCH)
    assert forks == [1]  # the template, in this process; the workers are the template's
    fresh = check(module, **TICKET_LAUNCH, share_prefix=False)
    assert forks == [1]
    assert shared.findings == []
    by_policy = runs(shared)
    assert list(by_policy) == ["min-pc", "reverse", "random", "flip"]
    fork_point = by_policy["reverse"]["min_pc_steps"]
    assert by_policy["flip"]["min_pc_steps"] == fork_point
    assert by_policy["min-pc"]["steps"] / 3 < fork_point < by_policy["reverse"]["steps"]  # the reductions are shared
    assert "min_pc_steps" not in by_policy["random"] and "min_pc_steps" not in by_policy["min-pc"]
    # run from the start, reverse and flip follow min-pc up to the same step: the same runs, the same report
    assert to_json(shared) == to_json(fresh) | {"stats": to_json(shared)["stats"]}
    assert shared.stats["schedules"] == fresh.stats["schedules"]
    assert children() == ""


def test_without_memory_for_a_second_copy_no_fork_is_made_and_the_report_is_the_same(monkeypatch):
    module = load_module(CLAIM)
    forked = check(module, **claim_launch(64))
    monkeypatch.setattr(shared_prefix, "fits_twice", lambda: False)
    forks = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    declined = check(module, **claim_launch(64))
    assert forks == []
    assert [f.kind for f in declined.findings] == ["data-race"]
    assert findings_json(declined) == findings_json(forked)
    assert runs(declined)["reverse"]["min_pc_steps"] == runs(forked)["reverse"]["min_pc_steps"]


def test_a_race_only_the_forked_reverse_schedule_shows():
    report = check(CLAIM, **claim_launch(64))
    (f,) = report.findings
    assert (f.kind, f.space, tuple(sorted(s.loc.line for s in f.sites))) == ("data-race", "global", (16, 19))
    assert f.schedule == {"index": 1, "policy": "reverse", "seed": None}
    assert check(CLAIM, **claim_launch(64), schedules=1).findings == []  # lane 0 wins: one thread's two writes
    assert runs(report)["reverse"]["min_pc_steps"] > 0
    assert findings_json(report) == findings_json(check(CLAIM, **claim_launch(64), share_prefix=False))


def test_a_run_that_never_reaches_a_fork_point_is_the_shared_schedules_run():
    report = check(CLAIM, **claim_launch(0))
    assert report.findings == []
    by_policy = runs(report)
    assert list(by_policy) == ["min-pc", "reverse", "random"]  # nothing contended: no flip
    assert by_policy["reverse"]["min_pc_steps"] == by_policy["reverse"]["steps"] == by_policy["min-pc"]["steps"]
    assert children() == ""


def test_a_forked_schedule_that_fails_fails_the_check_and_leaves_no_process(monkeypatch):
    real = SeededSchedule.__init__

    def failing(self, program, geometry, seed, reverse=False):
        if reverse:
            raise UserError("the reverse schedule cannot start")
        real(self, program, geometry, seed, reverse)

    monkeypatch.setattr(SeededSchedule, "__init__", failing)
    with pytest.raises(UserError, match="the reverse schedule cannot start"):
        check(TICKET, **TICKET_LAUNCH)
    assert children() == ""
    monkeypatch.setattr(SeededSchedule, "__init__", lambda *a, **k: 1 / 0)
    with pytest.raises(RuntimeError, match="(?s)a schedule's process failed.*ZeroDivisionError"):
        check(TICKET, **TICKET_LAUNCH)
    assert children() == ""
    monkeypatch.setattr(SeededSchedule, "__init__", lambda *a, **k: os._exit(5))  # dies without an answer
    with pytest.raises(RuntimeError, match="the process of the reverse schedule ended with wait status 1280"):
        check(TICKET, **TICKET_LAUNCH)
    assert children() == ""


def _corpus(paths) -> list:
    """The corpus files among `paths` with an `@launch`, and their launches."""
    cases = []
    for path in sorted(paths):
        launches = read_header(path).launches
        if launches:
            cases.append(pytest.param(path, launches[0], id=f"{path.parent.name}/{path.stem}"))
    return cases


# The kernels with locks, flags and tickets, and those that fork after real work.
FORKING = _corpus(
    [p for folder in ("schedules", "predictable", "lockset", "scord") for p in (KERNELS / folder).glob("*.cu")]
    + [TICKET, CLAIM, KERNELS / "last_block_sum.cu", KERNELS / "last_block_sum_fenced.cu", KERNELS / "spinlock.cu"]
)


def _run_cli(path: Path, launch: str) -> dict:
    result = CliRunner().invoke(cli, ["check", str(path), *shlex.split(launch), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


@pytest.mark.parametrize("path, launch", FORKING)
def test_forking_changes_no_finding_of_the_corpus(path, launch, monkeypatch):
    shared = _run_cli(path, launch)
    monkeypatch.setattr(gpurace.cli, "run_check", functools.partial(check, share_prefix=False))
    assert _run_cli(path, launch) == shared


def test_a_launch_in_waves_forks_in_its_first_wave_and_keeps_the_policy_in_the_next():
    waves = Limits(resident_threads=128)  # two blocks per wave, four waves (`sim.waves`)
    shared = check(TICKET, **TICKET_LAUNCH, limits=waves)
    fresh = check(TICKET, **TICKET_LAUNCH, limits=waves, share_prefix=False)
    by_policy = runs(shared)
    assert 0 < by_policy["reverse"]["min_pc_steps"] < by_policy["min-pc"]["steps"] / 2  # in the first wave
    # the later waves run under reverse in both (under min-pc they would take 33 steps fewer)
    assert shared.stats["schedules"] == fresh.stats["schedules"]
    assert by_policy["reverse"]["steps"] > by_policy["min-pc"]["steps"] + 20
    assert shared.findings == [] and findings_json(shared) == findings_json(fresh)
