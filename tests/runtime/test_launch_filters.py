"""`gpurace exec`'s launch filters: which launches are checked, and that the others still run exactly.

`alternating_race.cu` launches `fill` (clean) and `publish` in turn for four
rounds: launches 1, 3, 5, 7 are `fill`, 2, 4, 6, 8 `publish`, which races in
4 and 8 only. `kernel_out_of_bounds.cu` makes one launch, which faults.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from corpus import read_header
from gpurace.errors import UserError
from gpurace.runtime import exec_program
from gpurace.runtime.filters import LaunchFilter
from gpurace.runtime.launch import LaunchOutcome

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
ALTERNATING = PROGRAMS / "alternating_race.cu"
OUT_OF_BOUNDS = PROGRAMS / "kernel_out_of_bounds.cu"
GPURACE = str(Path(sys.executable).with_name("gpurace"))


def expected_stdout(path: Path) -> list[str]:
    return read_header(path).extra["stdout"]


@cache
def race_count_per_launch() -> int:
    """How many instances of the race one racy launch of `publish` shows (the unfiltered run has two)."""
    (finding,) = exec_program(ALTERNATING, capture_output=True).findings
    assert finding.launch["index"] == 4
    return finding.count // 2


def run(path: Path = ALTERNATING, **filters):
    outcomes = []
    result = exec_program(path, capture_output=True, on_launch=outcomes.append, **filters)
    assert result.errors == [] and result.stdout.splitlines() == expected_stdout(path), result.stderr
    return result, outcomes


def test_excluding_the_racy_kernel_gives_a_clean_run_with_the_same_output():
    result, outcomes = run(kernel_exclude="publish")
    assert result.findings == [] and result.exit_code() == 0
    assert (result.launches, result.checked) == (8, 4)
    assert [o.left_out_by for o in outcomes] == [None, "--kernel-exclude"] * 4


def test_skip_and_count_choose_among_the_launches_of_the_named_kernel():
    result, outcomes = run(kernel_name="^publish$", launch_skip=2)
    (finding,) = result.findings
    assert finding.launch["index"] == 8 and finding.count == race_count_per_launch()
    assert result.checked == 2
    assert [o.left_out_by for o in outcomes] == ["--kernel-name", "--launch-skip"] * 2 + ["--kernel-name", None] * 2


def test_unchecked_launches_replay_too_and_keep_the_results_exact():
    result, outcomes = run(PROGRAMS / "repeated_launches.cu", launch_count=1)
    assert result.findings == [] and result.checked == 1 and result.replayed == 13
    assert [o.launch["index"] for o in outcomes if o.replayed][:3] == [3, 4, 5]


def test_count_alone_checks_the_first_launches():
    result, outcomes = run(kernel_name="pub", launch_count=1)
    assert result.findings == [] and result.checked == 1
    assert [o.left_out_by for o in outcomes][1:4] == [None, "--kernel-name", "--launch-count"]


def test_skip_and_count_without_a_kernel_filter_count_every_launch():
    result, _ = run(launch_skip=3, launch_count=2)
    (finding,) = result.findings
    assert finding.launch["index"] == 4 and finding.count == race_count_per_launch()
    assert result.checked == 2


def test_the_mangled_name_matches_too():
    result, _ = run(kernel_name=r"^_Z7publishPKiPii$")
    assert result.checked == 4 and len(result.findings) == 1


def test_an_unchecked_fault_still_reaches_the_program_as_its_cuda_error():
    result, outcomes = run(OUT_OF_BOUNDS, launch_count=0)
    assert result.findings == [] and result.checked == 0 and result.exit_code() == 0
    assert [o.left_out_by for o in outcomes] == ["--launch-count"]


def test_the_report_says_how_many_launches_were_checked():
    result, _ = run(kernel_exclude="fill")
    report = result.report("alternating_race.cu", {})
    assert report.kernel == "alternating_race.cu (8 launches, 4 checked)"
    assert report.stats == {"launches": 8, "checked_launches": 4}


@pytest.mark.parametrize(
    "filters, message",
    [
        (dict(kernel_name="pub(lish"), "--kernel-name: 'pub(lish' is not a valid regular expression"),
        (dict(kernel_exclude="*"), "--kernel-exclude: '*' is not a valid regular expression"),
        (dict(skip=-1), "--launch-skip: expected a non-negative integer"),
        (dict(count=1.5), "--launch-count: expected a non-negative integer"),
    ],
)
def test_bad_filters_are_errors_naming_the_option(filters, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace("*", r"\*")):
        LaunchFilter(**filters)


def test_a_bad_regex_on_the_command_line_exits_2_before_building():
    run = subprocess.run([GPURACE, "exec", "--kernel-name", "[", "missing.cu"], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.startswith("gpurace: error: --kernel-name: '[' is not a valid regular expression")


def test_progress_lines_describe_each_launch():
    launch = {"index": 12, "kernel": "reduce", "grid": [64, 1, 1], "block": [256, 1, 1], "host": "app.cu:41"}
    assert LaunchOutcome(launch, None, 1).describe() == "launch 12 of reduce (grid 64x1x1, block 256x1x1) at app.cu:41: checked, 1 finding"
    assert LaunchOutcome(launch, "--launch-skip", 0).describe().endswith("at app.cu:41: not checked (--launch-skip)")
    assert LaunchOutcome(launch, None, 0, replayed=True).describe().endswith("at app.cu:41: checked, 0 findings, replayed")


def test_progress_lines_go_to_a_terminal_only():
    """On a terminal, a line per launch; piped, none (the other tests of `exec` read a clean stderr)."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [GPURACE, "exec", "alternating_race.cu", "--kernel-name", "publish", "--launch-count", "1"],
            cwd=PROGRAMS,
            stdout=subprocess.PIPE,
            stderr=follower,
        )
        os.close(follower)
        stdout = process.communicate(timeout=300)[0].decode()
        terminal = _read_all(leader)
    finally:
        os.close(leader)
    assert stdout.splitlines() == expected_stdout(ALTERNATING) and process.returncode == 0
    lines = [line for line in terminal.splitlines() if line.startswith("gpurace: launch")]
    assert len(lines) == 8
    assert lines[1] == "gpurace: launch 2 of publish (grid 1x1x1, block 64x1x1) at alternating_race.cu:34: checked, 0 findings"
    assert lines[3].endswith(": not checked (--launch-count)")


def _read_all(fd: int) -> str:
    """What the process wrote to the terminal `fd` (it has ended)."""
    chunks = []
    while select.select([fd], [], [], 1.0)[0]:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the other side is closed and everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_what_an_unchecked_launch_writes_counts_as_written():
    """`fill` writes the buffer `scale` reads, and no copy does: left unchecked, `fill` must still record its
    writes, or the checked `scale` would read `tmp` as never written."""
    pipeline = PROGRAMS / "initialized_by_kernel.cu"
    for options in (dict(launch_skip=1), dict(kernel_name="^scale$"), dict(schedules=3)):
        result = exec_program(pipeline, capture_output=True, **options)
        assert result.findings == [] and result.stdout.splitlines() == expected_stdout(pipeline), options
