"""The limits that bound a run once it has started: wall-clock time (`--timeout`) and call depth.

Each ends the run with a finding that names the limit and where the threads
were; the stack-overflow kernels in tests/kernels/limits/ are checked by the
expectation runner, the timeout here, since where the threads are when time
runs out depends on the machine.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpurace.cli import cli

KERNELS = Path(__file__).parent / "kernels" / "limits"


def check_json(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["check", *args, "--format", "json"])
    return result.exit_code, json.loads(result.stdout)


def test_a_run_past_its_time_budget_ends_with_a_timeout_finding() -> None:
    code, report = check_json(str(KERNELS / "volatile_counter.cu"), "--grid", "1", "--block", "32", "--arg", "buf:32", "--timeout", "1")
    assert code == 1
    kinds = [f["kind"] for f in report["findings"]]
    assert "timeout" in kinds, kinds
    timeout = report["findings"][kinds.index("timeout")]
    assert "wall-clock budget of 1 s" in timeout["cause"] and "--timeout" in timeout["cause"]
    assert {a["line"] for a in timeout["accesses"]} <= {9, 10}


def test_the_time_budget_ends_the_exploration_of_schedules() -> None:
    code, report = check_json(str(KERNELS / "volatile_counter.cu"), "--grid", "1", "--block", "32", "--arg", "buf:32", "--timeout", "1", "--schedules", "3")
    assert code == 1
    assert report["launch"]["schedules"] == {"count": 1, "seed": 0, "planned": 3, "ended_by": "timeout"}
    text = CliRunner().invoke(cli, ["check", str(KERNELS / "volatile_counter.cu"), "--grid", "1", "--block", "32",
                                    "--arg", "buf:32", "--timeout", "1", "--schedules", "3"]).stdout  # fmt: skip
    assert "1 of 3 schedules per launch (seed 0; the time budget ended the exploration)" in text


def test_without_a_time_budget_the_step_budget_still_ends_the_run() -> None:
    code, report = check_json(
        str(KERNELS / "volatile_counter.cu"), "--grid", "1", "--block", "1", "--arg", "buf:1", "--timeout", "0", "--max-steps", "500"
    )
    assert code == 1
    assert [f["kind"] for f in report["findings"]] == ["livelock"]
    assert "step budget of 500" in report["findings"][0]["cause"]
