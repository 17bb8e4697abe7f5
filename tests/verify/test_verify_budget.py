"""`gpurace verify`'s solver budget: deterministic resource units, so verdicts and report bytes never depend on the
machine or its load, and a budget too small to decide gives "unknown" with the reason, never "race-free"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.frontend.load import load_module
from gpurace.verify import verify_module
from gpurace.verify.queries import OUT_OF_TIME

ROOT = Path(__file__).resolve().parent.parent.parent
VERIFY_DIR = ROOT / "tests" / "kernels" / "verify"
SCRIPT = Path(sys.executable).parent / "gpurace"


def _verify_in_process_of_its_own(path: Path, *options: str, hash_seed: str) -> subprocess.CompletedProcess:
    """A fresh interpreter per run, each with its own string hashing (the order of sets of names may differ)."""
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    command = [str(SCRIPT), "verify", str(path), "--format", "json", *options]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=600)


def test_two_runs_give_byte_identical_reports():
    """Alarms with witnesses and a confirmation by the simulator, a proof, in two processes: the same bytes."""
    path = VERIFY_DIR / "loaded_index.cu"
    first, second = (_verify_in_process_of_its_own(path, "--grid", "2", "--block", "64", hash_seed=seed) for seed in ("1", "2"))
    assert first.returncode == second.returncode == 1, first.stderr.decode()
    assert first.stdout == second.stdout
    objects = {o["object"]: o for o in json.loads(first.stdout)["kernels"][0]["objects"]}
    assert objects["data"]["verdict"] == "race-free"
    assert objects["bins"]["alarms"] and {a["status"] for a in objects["bins"]["alarms"]} == {"confirmed"}


def test_a_budget_too_small_gives_unknown_with_the_reason_never_race_free():
    """The grid-stride loop for any launch needs millions of units (it is proved with the header's budget)."""
    path = VERIFY_DIR / "strided_loop_any_launch.cu"
    result = CliRunner().invoke(cli, ["verify", str(path), "--query-budget", "1", "--format", "json"])
    assert result.exit_code == 4, result.output
    (obj,) = json.loads(result.stdout)["kernels"][0]["objects"]
    assert obj["verdict"] == "unknown"
    assert obj["reason"].startswith("the solver spent its budget (1 million resource units, --query-budget) on ")
    assert obj["reason"].endswith("strided_loop_any_launch.cu:9 against tests/kernels/verify/strided_loop_any_launch.cu:9")


def test_the_wall_clock_limit_is_off_by_default_and_states_itself_when_it_ends_a_question():
    path = VERIFY_DIR / "strided_loop_any_launch.cu"
    result = CliRunner().invoke(cli, ["verify", str(path), "--query-timeout", "0.1", "--query-budget", "100000", "--format", "json"])
    assert result.exit_code == 4, result.output
    (obj,) = json.loads(result.stdout)["kernels"][0]["objects"]
    assert obj["verdict"] == "unknown" and "wall-clock limit (--query-timeout)" in obj["reason"]


def test_a_spent_command_budget_leaves_every_question_unknown_and_runs_no_witness():
    """`--timeout` bounds verify too: once the command's deadline has passed, no question is answered (nothing that
    needs one is called race-free) and no alarm is confirmed by running the simulator."""
    module = load_module(VERIFY_DIR / "loaded_index.cu")
    (verdict,), _ = verify_module(module, kernel=None, grid=(2, 1, 1), block=(64, 1, 1), deadline=time.monotonic() - 1)
    objects = {o.name: o for o in verdict.objects}
    assert objects["bins"].verdict == "unknown" and objects["bins"].reason.startswith(OUT_OF_TIME)
    assert not objects["bins"].alarms  # a race with a confirmed witness without the deadline
    assert objects["data"].verdict == "race-free"  # only read: no question to ask


def test_the_timeout_option_reaches_the_questions(monkeypatch):
    """The command's `--timeout` is the deadline the questions see: here its clock reads past any deadline once
    the file is compiled (the compilation keeps the real clock)."""
    class Late:
        @staticmethod
        def monotonic() -> float:
            return 1e18  # long past any deadline

    monkeypatch.setattr("gpurace.verify.queries.time", Late)
    path = VERIFY_DIR / "strided_loop_any_launch.cu"
    result = CliRunner().invoke(cli, ["verify", str(path), "--timeout", "600", "--format", "json"])
    assert result.exit_code == 4, result.output
    (obj,) = json.loads(result.stdout)["kernels"][0]["objects"]
    assert obj["verdict"] == "unknown" and obj["reason"].startswith(OUT_OF_TIME)


def test_budget_must_be_a_positive_number_of_millions():
    result = CliRunner().invoke(cli, ["verify", str(VERIFY_DIR / "strided_loop.cu"), "--query-budget", "0"])
    assert result.exit_code == 2 and "--query-budget" in result.output
