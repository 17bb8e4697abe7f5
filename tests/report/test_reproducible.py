"""Reports are reproducible: one check run twice writes the same bytes in every format, and timings appear only
when asked for (`stats=True`, the `--stats` option)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from gpurace.check import check
from gpurace.cli import cli
from gpurace.report.json_format import to_json
from gpurace.report.sarif import to_sarif
from gpurace.report.text import render_text

ROOT = Path(__file__).resolve().parents[2]
LOCK = "tests/kernels/check/lock_block_fence_across_blocks.cu"
CASES = {
    "barrier": ["check", "tests/kernels/check/reduce_no_last_barrier.cu", "--grid", "1", "--block", "128",
                "--arg", "buf:128:iota", "--arg", "buf:1"],
    # No --schedules: the default check of a kernel with atomics and fences runs three schedules, and flip
    # since the blocks contend for the lock.
    "lock": ["check", LOCK, "--grid", "4", "--block", "64", "--arg", "buf:1", "--arg", "buf:1"],
    "search": ["check", "tests/kernels/search/offset_shift.cu", "--grid", "2", "--block", "64", "--search",
               "--generations", "2"],
    "analyze": ["analyze", "tests/traces/barrier_missing.trace"],
}  # fmt: skip


def report_bytes(argv: list[str]) -> bytes:
    """Standard output of `gpurace ARGV` run in-process (every case finds a race: exit status 1)."""
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 1, result.output
    return result.stdout_bytes


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
@pytest.mark.parametrize("case", CASES)
def test_the_same_check_writes_the_same_bytes(case, fmt, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = [*CASES[case], "--format", fmt]
    first = report_bytes(argv)
    assert report_bytes(argv) == first
    assert b"seconds" not in first
    assert os.fsencode(ROOT) not in first, "no absolute path of the checkout: paths below the cwd are relative"


def test_the_lock_case_runs_the_default_schedules(monkeypatch):
    monkeypatch.chdir(ROOT)
    data = json.loads(report_bytes([*CASES["lock"], "--format", "json"]))
    assert data["launch"]["schedules"]["count"] == 4


@pytest.mark.parametrize("case", ["lock", "search"])
def test_reports_do_not_depend_on_the_hash_seed(case):
    """Set and dict orders of strings change with PYTHONHASHSEED from one process to the next; reports must not."""
    gpurace = Path(sys.executable).with_name("gpurace")
    outputs = {
        subprocess.run(
            [str(gpurace), *CASES[case], "--format", "json"],
            cwd=ROOT,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1 and b'"findings"' in outputs.pop()


@pytest.fixture(scope="module")
def lock_report():
    return check(ROOT / LOCK, grid=4, block=64, args=["buf:1", "buf:1"])


def test_timings_are_written_only_with_stats(lock_report):
    assert lock_report.stats["seconds"] >= 0  # measured always, reported on request
    assert "seconds" not in to_json(lock_report)["stats"]
    assert "seconds" in to_json(lock_report, stats=True)["stats"]
    assert "seconds" not in to_sarif(lock_report)["runs"][0]["properties"]["stats"]
    assert "seconds" in to_sarif(lock_report, stats=True)["runs"][0]["properties"]["stats"]
    assert to_json(lock_report)["stats"]["steps"] == lock_report.stats["steps"], "the counters are always there"


def test_text_statistics_line_only_with_stats(lock_report):
    def text(**options) -> str:
        out = io.StringIO()
        render_text(lock_report, Console(file=out, width=100), **options)
        return out.getvalue()

    assert "statistics:" not in text()
    (line,) = [line for line in text(stats=True).splitlines() if line.startswith("statistics:")]
    assert re.fullmatch(r"statistics: 256 threads, \d+ steps, \d+ thread-instructions, \d+ events in [0-9.]+ s", line)


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_the_stats_option_adds_the_timings(fmt, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, [*CASES["barrier"], "--format", fmt, "--stats"])
    assert result.exit_code in (0, 1), result.output
    if fmt == "text":
        assert re.search(r"^statistics: .* in [0-9.]+ s$", result.stdout, re.M)
    else:
        assert '"seconds":' in result.stdout
