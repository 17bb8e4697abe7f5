"""Suppressions files (`--suppressions`): the format, its errors, which findings a rule matches, and the commands."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_samples import deadlock_without_lines, make_report, out_of_bounds, race
from rich.console import Console

from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.report.json_format import to_json
from gpurace.report.suppressions import Suppressions, suppress
from gpurace.report.text import render_text

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "programs"
TRACE = ROOT / "tests" / "traces" / "barrier_missing.trace"
GPURACE = str(Path(sys.executable).with_name("gpurace"))


def rules(text: str) -> Suppressions:
    return Suppressions.parse(text, "ci.supp")


def suppressed(text: str, finding, checked=None) -> bool:
    kept, count = rules(text).split([finding], checked)
    assert count == (not kept)
    return not kept


# ------------------------------------------------------------------ the format and its errors


def test_comments_and_blank_lines_are_ignored():
    parsed = rules("# a comment\n\n   \ndata-race  reduce.cu:8   # trailing comment\n*  src/*.cu  lib/*.cu\n")
    assert [(r.kind, [(loc.glob, loc.line) for loc in r.locations], r.origin) for r in parsed.rules] == [
        ("data-race", [("reduce.cu", 8)], "ci.supp:4"),
        ("*", [("src/*.cu", None), ("lib/*.cu", None)], "ci.supp:5"),
    ]


@pytest.mark.parametrize(
    "line, message",
    [
        ("data-race", "ci.supp:2: a suppression is `KIND LOCATION [LOCATION]`"),
        ("data-race a.cu b.cu c.cu", "(a location is PATH_GLOB or PATH_GLOB:LINE), got 4 fields"),
        ("datarace a.cu", "ci.supp:2: unknown finding kind 'datarace'"),
        ("data-race a.cu:x", "ci.supp:2: 'a.cu:x': the line after ':' must be a positive number"),
        ("data-race a.cu:0", "ci.supp:2: 'a.cu:0': the line after ':' must be a positive number"),
        ("data-race a.cu:", "ci.supp:2: 'a.cu:': the line after ':' must be a positive number"),
        ("data-race :12", "ci.supp:2: ':12': a location needs a path"),
    ],
)
def test_a_mistake_is_an_error_naming_file_and_line(line, message):
    with pytest.raises(UserError) as error:
        rules(f"# first line\n{line}\n")
    assert str(error.value).startswith("ci.supp:2: ") and message in str(error.value)


def test_an_unreadable_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(UserError, match=r"--suppressions: cannot read .*missing\.supp"):
        Suppressions.load(str(tmp_path / "missing.supp"))
    binary = tmp_path / "binary.supp"
    binary.write_bytes(b"\xff\xfe data-race")
    with pytest.raises(UserError, match="is not a UTF-8 text file"):
        Suppressions.load(str(binary))


# ------------------------------------------------------------------ matching


def test_kind_and_one_location_match_any_site(source_file):
    finding = race(source_file)  # write at line 8, read at line 2 (inlined from line 9)
    assert suppressed("data-race reduce.cu:8", finding)
    assert suppressed("data-race reduce.cu:2", finding)
    assert suppressed("* reduce.cu", finding)
    assert not suppressed("data-race reduce.cu:9", finding)  # the call site is not the line a report leads with
    assert not suppressed("out-of-bounds reduce.cu", finding)


def test_paths_match_whole_trailing_components(source_file):
    finding = out_of_bounds(source_file)
    parent = source_file.parent.name
    for glob in ("reduce.cu", f"{parent}/reduce.cu", "*/reduce.cu", "red*.cu", "*", str(source_file)):
        assert suppressed(f"out-of-bounds {glob}:10", finding), glob
    for glob in ("educe.cu", "other/reduce.cu", "reduce.c"):
        assert not suppressed(f"out-of-bounds {glob}:10", finding), glob


def test_two_locations_need_both_sites_in_either_order(source_file):
    finding = race(source_file)
    assert suppressed("data-race reduce.cu:8 reduce.cu:2", finding)
    assert suppressed("data-race reduce.cu:2 reduce.cu:8", finding)
    assert not suppressed("data-race reduce.cu:8 reduce.cu:8", finding)
    assert not suppressed("* reduce.cu reduce.cu", out_of_bounds(source_file))  # one site cannot match two


def test_a_finding_without_source_positions_is_never_suppressed():
    assert not suppressed("* *", deadlock_without_lines())


def test_suppress_counts_what_it_took_out_and_the_renderers_say_so(source_file):
    report = suppress(make_report(source_file, [race(source_file), out_of_bounds(source_file)]), rules("data-race *"))
    assert [f.kind for f in report.findings] == ["out-of-bounds"]
    assert to_json(report)["stats"]["suppressed"] == 1
    out = io.StringIO()
    render_text(report, Console(file=out, width=200))
    assert out.getvalue().splitlines()[-1] == "1 error in reduce (grid 1x1x1, block 256x1x1) (1 suppressed)"


def test_without_a_file_nothing_changes(source_file):
    report = suppress(make_report(source_file, [race(source_file)]), None)
    assert len(report.findings) == 1 and "suppressed" not in report.stats


# ------------------------------------------------------------------ the commands


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "gpurace.supp"
    path.write_text(text)
    return str(path)


REDUCE_CHECK = ["check", str(ROOT / "examples" / "reduce.cu"), "--grid", "2", "--block", "256",
                "--arg", "buf:512:iota", "--arg", "buf:1", "--arg", "512"]  # fmt: skip


def test_check_leaves_out_suppressed_findings_and_exits_clean(tmp_path):
    result = CliRunner().invoke(cli, [*REDUCE_CHECK, "--suppressions", write(tmp_path, "data-race examples/reduce.cu:22\n")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "no issues found in reduce (grid 2x1x1, block 256x1x1) (1 suppressed)"


def test_check_keeps_findings_no_rule_names(tmp_path):
    supp = write(tmp_path, "data-race reduce.cu:21\n")
    result = CliRunner().invoke(cli, [*REDUCE_CHECK, "--format", "json", "--suppressions", supp])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert len(report["findings"]) == 1 and report["stats"]["suppressed"] == 0


def test_a_mistake_in_the_file_exits_2_with_file_and_line(tmp_path):
    supp = write(tmp_path, "# ok\ndata-race reduce.cu:22\nrace reduce.cu\n")
    result = CliRunner().invoke(cli, [*REDUCE_CHECK, "--suppressions", supp])
    assert result.exit_code == 2
    assert f"gpurace: error: {supp}:3: unknown finding kind 'race'" in result.output


def test_analyze_takes_the_same_file(tmp_path):
    result = CliRunner().invoke(cli, ["analyze", str(TRACE), "--suppressions", write(tmp_path, "data-race barrier_missing.trace:6\n")])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("(1 suppressed)")


def test_exec_leaves_out_suppressed_findings_and_keeps_the_program_status(tmp_path):
    supp = write(tmp_path, "data-race repeated_race.cu:24  # every thread stores the same sum\n")
    report = tmp_path / "report.json"
    args = ["exec", "repeated_race.cu", "--suppressions", supp, "--format", "json", "--output", str(report), "--", "2"]
    run = subprocess.run([GPURACE, *args], cwd=PROGRAMS, capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == "round 0: 2016\nround 1: 4032\nscale 1\n", run.stderr
    data = json.loads(report.read_text())
    assert data["findings"] == [] and data["stats"]["suppressed"] == 1
