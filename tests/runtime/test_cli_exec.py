"""`gpurace exec` on the command line: the program's output untouched, the report apart, gpurace's exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
GPURACE = str(Path(sys.executable).with_name("gpurace"))


def gpurace(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([GPURACE, *args], cwd=cwd, capture_output=True, text=True)


def test_program_arguments_output_report_and_status():
    run = gpurace("exec", "repeated_race.cu", "--", "2", "9", cwd=PROGRAMS)
    assert run.stdout == "round 0: 2016\nround 1: 4032\nscale 9\n"
    assert run.returncode == 1
    assert "repeated_race.cu:24:5: warning: data race on global memory" in run.stderr
    assert "cause: both threads wrote the same value" in run.stderr
    assert "exposed by: launch 2 of publish (grid 1x1x1, block 64x1x1) at repeated_race.cu:35" in run.stderr
    assert run.stderr.rstrip().endswith("1 warning in repeated_race.cu (4 launches)")


def test_error_exitcode_and_json_report_in_a_file(tmp_path):
    out = tmp_path / "report.json"
    run = gpurace("exec", "repeated_race.cu", "--error-exitcode", "7", "--format", "json", "--output", str(out), cwd=PROGRAMS)
    assert run.returncode == 7 and run.stdout == "round 0: 2016\nscale 1\n"
    report = json.loads(out.read_text())
    (finding,) = report["findings"]
    assert finding["kind"] == "data-race" and finding["launch"]["kernel"] == "publish"
    assert report["launch"]["launches"] == 2 and report["launch"]["status"] == 0


def test_a_clean_program_keeps_its_own_status_and_prints_no_report():
    run = gpurace("exec", "exit_code.cu", cwd=PROGRAMS)
    assert run.returncode == 3 and run.stderr == ""
    assert run.stdout.splitlines()[-1] == "no error"


def test_an_unsupported_call_stops_the_program_with_status_2():
    run = gpurace("exec", "unsupported_call.cu", cwd=PROGRAMS)
    assert run.returncode == 2
    assert "gpurace: error: unsupported_call.cu:" in run.stderr and "is not supported" in run.stderr


def test_a_read_before_the_first_allocation_names_it():
    """The first allocation sits just above the device function addresses; a read below it is still
    described by the allocation it missed, not as a function pointer read as data."""
    run = gpurace("exec", "stencil_reads_before_start.cu", "--format", "json", cwd=PROGRAMS)
    assert run.returncode == 1
    (finding,) = json.loads(run.stderr)["findings"]
    assert finding["kind"] == "out-of-bounds" and finding["space"] == "global"
    assert finding["cause"].endswith("128 bytes before the start of `cudaMalloc#1` (512 bytes)")


def test_a_whole_program_gets_an_hour_by_default_and_one_launch_five_minutes():
    exec_help = " ".join(gpurace("exec", "--help", cwd=PROGRAMS).stdout.split())
    check_help = " ".join(gpurace("check", "--help", cwd=PROGRAMS).stdout.split())
    assert "a verification's questions still open are unknown. [default: 3600.0; x>=0]" in exec_help
    assert "a verification's questions still open are unknown. [default: 300.0; x>=0]" in check_help
