"""Write-write races of two stores of the same value: labelled, kept apart from the others, and droppable.

The kernels are in tests/kernels/same_value/: each header's `@expect` lines
give the findings (with severity) and `@expect_cause` the cause of every
finding. Every race detector must agree on them, since the label is about the
values stored, not about how a detector orders accesses.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpus import read_header
from gpurace.cli import cli
from gpurace.detect.findings import ERROR, SAME_VALUE, WARNING, Finding, FindingSet, Site

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "same_value"
FILES = sorted(KERNELS.glob("*.cu"))
DETECTORS = ("auto", "hb", "gwcp", "tsan", "lockset", "interval")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout


def check_json(path: Path, *options: str) -> dict:
    code, out = run("check", path, *options, "--format", "json")
    report = json.loads(out)
    assert code == (1 if report["findings"] else 0)
    return report


def launch(path: Path) -> list[str]:
    return shlex.split(read_header(path).launches[0])


def summary(report: dict) -> set[tuple]:
    return {
        (f["kind"], f["space"], tuple(sorted(a["line"] for a in f["accesses"])), f["severity"]) for f in report["findings"]
    }


def expected(path: Path) -> set[tuple]:
    out = set()
    for text in read_header(path).expect:
        if text == "clean":
            continue
        kind, space, a, b, severity = text.split()
        out.add((kind, space, tuple(sorted((int(a), int(b)))), severity))
    return out


CASES = [
    pytest.param(path, detector, id=f"{path.stem}-{detector}")
    for path in FILES
    for detector in DETECTORS
    if not (detector == "interval" and read_header(path).fences)  # interval refuses fences
]


@pytest.mark.parametrize("path, detector", CASES)
def test_every_detector_labels_same_value_races(path: Path, detector: str) -> None:
    report = check_json(path, *launch(path), "--detector", detector)
    assert summary(report) == expected(path)
    causes = read_header(path).extra.get("expect_cause", [])
    for f in report["findings"]:
        assert [f["cause"]] == causes
        assert f["same_value"] == (f["severity"] == WARNING)
        assert all(a["op"] == "write" for a in f["accesses"])


@pytest.mark.parametrize("detector", DETECTORS)
def test_different_values_from_two_lines_are_an_error(detector: str) -> None:
    """two_lines.cu with `in` = {0, 1}: within each line every thread still stores one value, but the two lines
    store different ones; the later line's store is compared with what the earlier one left in memory."""
    path = KERNELS / "two_lines.cu"
    report = check_json(path, "--grid", "1", "--block", "64", "--arg", "buf:2:iota", "--arg", "buf:64", "--detector", detector)
    assert summary(report) == {
        ("data-race", "shared", (21, 27), ERROR),
        ("data-race", "shared", (21, 21), WARNING),
        ("data-race", "shared", (27, 27), WARNING),
    }
    error = next(f for f in report["findings"] if f["severity"] == ERROR)
    assert error["cause"] == "no synchronisation between the two accesses"
    assert error["same_value"] is False


@pytest.mark.parametrize("model", ("ptx", "scord"))
def test_label_under_every_model(model: str) -> None:
    path = KERNELS / "two_lines.cu"
    report = check_json(path, *launch(path), "--model", model)
    assert {f["cause"] for f in report["findings"]} == {SAME_VALUE}


def _finding(line: int, same: bool) -> Finding:
    site = Site(pc=line, thread=(0, 0, 0), block=(0, 0, 0), warp=0, lane=0, op="write", scope=None, loc=None,
                instruction="st.shared.u32", function="k")  # fmt: skip
    other = Site(pc=line + 1, thread=(1, 0, 0), block=(0, 0, 0), warp=0, lane=1, op="write", scope=None, loc=None,
                 instruction="st.shared.u32", function="k")  # fmt: skip
    cause = SAME_VALUE if same else "no synchronisation between the two accesses"
    return Finding("data-race", WARNING if same else ERROR, cause, (site, other), space="shared", same_value=same)


@pytest.mark.parametrize("order", [(True, False), (False, True)])
def test_merged_finding_is_benign_only_if_every_instance_was(order: tuple[bool, bool]) -> None:
    found = FindingSet()
    for same in order:
        found.add(_finding(10, same), 3)
    (merged,) = found.sorted()
    assert (merged.severity, merged.cause, merged.same_value, merged.count) == (
        ERROR, "no synchronisation between the two accesses", False, 6
    )


def test_same_value_instances_stay_a_warning() -> None:
    found = FindingSet()
    found.add(_finding(10, True), 2)
    found.add(_finding(10, True), 5)
    (merged,) = found.sorted()
    assert (merged.severity, merged.cause, merged.same_value, merged.count) == (WARNING, SAME_VALUE, True, 7)


def test_benign_same_value_drops_them_and_says_how_many() -> None:
    path = KERNELS / "two_lines.cu"
    code, out = run("check", path, *launch(path), "--benign-same-value")
    assert code == 0
    assert "no issues found in two_lines (grid 1x1x1, block 64x1x1) (3 same-value races dropped)" in out
    report = check_json(path, *launch(path), "--benign-same-value")
    assert report["findings"] == []
    assert report["stats"]["same_value_dropped"] == 3


def test_benign_same_value_keeps_races_of_different_values() -> None:
    path = KERNELS / "two_lines.cu"
    options = ["--grid", "1", "--block", "64", "--arg", "buf:2:iota", "--arg", "buf:64", "--benign-same-value"]
    code, out = run("check", path, *options)
    assert code == 1
    assert "1 error in two_lines (grid 1x1x1, block 64x1x1) (2 same-value races dropped)" in out
    report = check_json(path, *options)
    assert summary(report) == {("data-race", "shared", (21, 27), ERROR)}
    assert report["stats"]["same_value_dropped"] == 2


def test_warnings_only_exit_1_and_read_as_warnings() -> None:
    """Like the volatile-is-not-atomic warnings, same-value races are findings: without the option the run fails."""
    path = KERNELS / "flag_shared.cu"
    code, out = run("check", path, *launch(path))
    assert code == 1
    assert "flag_shared.cu:20:9: warning: data race on shared memory (found[+0]) [data-race]" in out
    assert f"  cause: {SAME_VALUE}" in out
    assert "1 warning in flag_shared" in out


def test_sarif_level_is_warning() -> None:
    path = KERNELS / "flag_global_fenced.cu"
    code, out = run("check", path, *launch(path), "--format", "sarif")
    assert code == 1
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["level"] == "warning"
    assert result["message"]["text"] == SAME_VALUE
    assert result["properties"]["same_value"] is True
    code, out = run("check", path, *launch(path), "--format", "sarif", "--benign-same-value")
    assert code == 0
    log = json.loads(out)["runs"][0]
    assert log["results"] == []


def test_analyze_labels_and_drops_recorded_traces(tmp_path: Path) -> None:
    """A recorded trace keeps the values stored, so lanes of one store compare; it has no memory contents,
    so a store is never compared with an earlier instruction's (those races stay errors)."""
    path = KERNELS / "flag_shared.cu"
    trace = tmp_path / "flag.trace"
    code, _ = run("check", path, *launch(path), "--record", trace)
    assert code == 1
    code, out = run("analyze", trace, "--detector", "hb", "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert {(f["severity"], f["cause"]) for f in report["findings"]} == {(WARNING, SAME_VALUE)}
    code, out = run("analyze", trace, "--detector", "hb", "--format", "json", "--benign-same-value")
    assert code == 0
    assert json.loads(out)["stats"]["same_value_dropped"] == 1
