"""One runner for the race-detection expectations written in the kernel headers.

Every corpus file (tests/kernels/**/*.cu and *.hip, examples/*.cu) with an `@launch` and
`@expect` lines is checked through the real command line (`gpurace check ...
--format json`): the set of findings must be exactly the expected one, by
kind, memory space and source lines. `@expect` holds for the default model;
`@expect_ptx` and `@expect_scord` (when present) for the other presets.
Where the barrier-interval detector applies, both detectors must agree.

A file written for GPUVerify (first lines `//pass` or `//xfail:...` and
`//--blockDim=... --gridDim=...`) needs no `@launch`: it is run with no launch
options, so the command must take the launch from that header (and every
argument is automatic); the report's `header_expect` must be its label.
`@expect_error TEXT` lines say the launch must fail with exit status 2 and a
message containing each TEXT.

The kernels with predictable races and schedule-dependent races
(`predictable/`, `schedules/`) are also checked with the default detector and
schedules (their `@launch` without `--detector` and `--schedules`): the
default check must find every race their headers expect and nothing on their
race-free twins.

Expectation syntax: `clean`, or `KIND [SPACE] LINE [LINE] [SEVERITY]`, e.g.
`data-race shared 22 22`, `barrier-divergence 12`, `data-race global 8 8 warning`,
`redundant-barrier 14` (a performance note; it leaves the exit status 0).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpus import hip_marks, read_header
from gpurace.cli import cli

ROOT = Path(__file__).resolve().parent.parent
SPACES = {"shared", "global", "local", "const", "param"}
FILES = sorted(
    p for p in [*ROOT.glob("tests/kernels/**/*.cu"), *ROOT.glob("tests/kernels/**/*.hip"), *ROOT.glob("examples/*.cu")]
)
GPUVERIFY_LABEL = re.compile(r"^//(pass|xfail:\S+)\s*$")
GPUVERIFY_DIMS = re.compile(r"^//--.*--(?:blockDim|gridDim)=|^//--(?:blockDim|gridDim)=")


def gpuverify_label(path: Path) -> str | None:
    """The `//pass` / `//xfail:...` label of a file whose first two lines are a GPUVerify header, else None."""
    first, second = (path.read_text().splitlines() + ["", ""])[:2]
    label = GPUVERIFY_LABEL.match(first)
    return label.group(1) if label and GPUVERIFY_DIMS.match(second) else None


def launch_of(header, path: Path) -> str | None:
    """The launch options: the `@launch` line, or none at all for a file with a GPUVerify header."""
    if header.launches:
        return header.launches[0]
    return "" if gpuverify_label(path) else None


def parse_expectation(text: str) -> tuple | None:
    """`data-race shared 22 22 warning` -> ("data-race", "shared", (22, 22), "warning"); `clean` -> None."""
    words = text.split()
    if words == ["clean"]:
        return None
    kind, rest = words[0], words[1:]
    space = rest.pop(0) if rest and rest[0] in SPACES else None
    severity = rest.pop() if rest and rest[-1] in ("error", "warning", "performance") else None
    lines = tuple(sorted(int(w) for w in rest))
    return (kind, space, lines, severity)


def expected_for(header, model: str) -> list[str] | None:
    if model == "cuda":
        return header.expect or None
    return header.extra.get(f"expect_{model}")


def observed(report: dict) -> list[tuple]:
    out = []
    for f in report["findings"]:
        lines = tuple(sorted(a["line"] for a in f["accesses"]))
        out.append((f["kind"], f["space"], lines, f["severity"]))
    return out


def matches(expected: tuple, found: tuple) -> bool:
    kind, space, lines, severity = expected
    return (
        kind == found[0]
        and (space is None or space == found[1])
        and lines == found[2]
        and (severity is None or severity == found[3])
    )


def run_check(path: Path, launch: str, *extra: str) -> dict:
    result = CliRunner().invoke(cli, ["check", str(path), *shlex.split(launch), "--format", "json", *extra])
    assert result.exit_code in (0, 1), f"{path.name}: exit {result.exit_code}\n{result.output}"
    report = json.loads(result.stdout)
    assert result.exit_code == (1 if any(f["severity"] != "performance" for f in report["findings"]) else 0)
    return report


DEFAULT_DIRS = ("predictable", "schedules")
_CHOICES = re.compile(r"--(?:detector|schedules)[ =]\S+")

CASES = []
DEFAULT_CASES = []
ERROR_CASES = []
for path in FILES:
    header = read_header(path)
    launch = launch_of(header, path)
    if launch is None:
        continue
    for model in ("cuda", "ptx", "scord"):
        exp = expected_for(header, model)
        if exp:
            CASES.append(pytest.param(path, launch, model, exp, id=f"{path.parent.name}/{path.stem}-{model}", marks=hip_marks(path)))
    if path.parent.name in DEFAULT_DIRS and header.expect:
        DEFAULT_CASES.append(
            pytest.param(path, _CHOICES.sub("", launch), header.expect, id=f"{path.parent.name}/{path.stem}", marks=hip_marks(path))
        )
    if "expect_error" in header.extra:
        ERROR_CASES.append(
            pytest.param(path, launch, header.extra["expect_error"], id=f"{path.parent.name}/{path.stem}", marks=hip_marks(path))
        )


def assert_findings(path: Path, report: dict, expect: list[str]) -> None:
    """The report's findings are exactly the expected ones."""
    found = observed(report)
    wanted = [e for e in (parse_expectation(t) for t in expect) if e is not None]
    unmatched = list(found)
    for e in wanted:
        hit = next((f for f in unmatched if matches(e, f)), None)
        assert hit is not None, f"{path.name}: expected {e}, found {found}\n" + json.dumps(report["findings"], indent=1)[:3000]
        unmatched.remove(hit)
    assert not unmatched, f"{path.name}: unexpected findings {unmatched}\n" + json.dumps(report["findings"], indent=1)[:3000]


def corpus_cases(synchronising_only: bool = False) -> list:
    """(path, launch, expectations) of every corpus kernel with an `@launch` and `@expect`, for detector
    cross-checks; kernels expected to livelock are left out (minutes of simulation that say nothing about
    races); `synchronising_only`: only kernels with atomics or fences."""
    cases = []
    for path in FILES:
        header = read_header(path)
        launch = launch_of(header, path)
        if launch is None or not header.expect or (synchronising_only and not (header.atomics or header.fences)):
            continue
        if any(e.split()[0] == "livelock" for e in header.expect):
            continue
        cases.append(pytest.param(path, launch, header.expect, id=f"{path.parent.name}/{path.stem}", marks=hip_marks(path)))
    return cases


@pytest.mark.parametrize("path, launch, model, expect", CASES)
def test_expectations(path: Path, launch: str, model: str, expect: list[str]) -> None:
    report = run_check(path, launch, "--model", model)
    assert_findings(path, report, expect)
    found = observed(report)
    label = gpuverify_label(path)
    if label is not None:
        assert report["launch"]["header_expect"] == label
    if model == "cuda" and report["launch"]["detector"] == "interval":
        other = run_check(path, launch, "--model", model, "--detector", "hb")
        assert sorted(observed(other)) == sorted(found), f"{path.name}: hb and interval disagree"


@pytest.mark.parametrize("path, launch, expect", DEFAULT_CASES)
def test_default_check(path: Path, launch: str, expect: list[str]) -> None:
    assert_findings(path, run_check(path, launch), expect)


def test_default_check_covers_racy_and_race_free_kernels() -> None:
    verdicts = {case.values[2] == ["clean"] for case in DEFAULT_CASES}
    assert len(DEFAULT_CASES) >= 16 and verdicts == {True, False}


@pytest.mark.parametrize("path, launch, messages", ERROR_CASES)
def test_expected_errors(path: Path, launch: str, messages: list[str]) -> None:
    result = CliRunner().invoke(cli, ["check", str(path), *shlex.split(launch), "--format", "json"])
    assert result.exit_code == 2, f"{path.name}: exit {result.exit_code}\n{result.output}"
    assert result.stdout == ""
    for text in messages:
        assert text in result.stderr, f"{path.name}: {text!r} not in {result.stderr!r}"
