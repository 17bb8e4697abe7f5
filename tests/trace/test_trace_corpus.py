"""The hand-written traces in tests/traces/: each file's `# @expect` header lines are the exact set of findings.

Every trace runs through the real command line (`gpurace analyze --format
json`); findings are compared by kind, memory space and the two source
lines (lines of the trace file itself where a line names no `@ FILE:LINE`).
`# @expect ...` lines give the verdict of the default detector,
`# @expect[NAME] ...` lines the verdict of `--detector NAME`; a trace may state
verdicts for any set of detectors, each checked on its own.
`# @expect clean` means nothing is reported and the exit status is 0.
The paper figures (`figures/`) state the verdict of every detector.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.check import DETECTORS
from gpurace.cli import cli

ROOT = Path(__file__).resolve().parent.parent / "traces"
TRACES = sorted(ROOT.rglob("*.trace"))
FIGURES = sorted((ROOT / "figures").glob("*.trace"))
DEFAULT = "default"
_EXPECT = re.compile(r"# @expect(?:\[(\w+)\])? (.*)")


def expectations(path: Path) -> dict[str, set[tuple]]:
    """Detector (DEFAULT for plain `@expect`) -> the expected findings as (kind, space, sorted lines)."""
    out: dict[str, set[tuple]] = {}
    for line in path.read_text().splitlines():
        m = _EXPECT.fullmatch(line.strip())
        if m is None:
            continue
        found = out.setdefault(m.group(1) or DEFAULT, set())
        words = m.group(2).split()
        if words != ["clean"]:
            found.add((words[0], words[1], tuple(sorted(int(w) for w in words[2:]))))
    return out


CASES = [(path, detector) for path in TRACES for detector in sorted(expectations(path))]


def test_corpus_has_racy_and_clean_traces():
    verdicts = [bool(found) for path in TRACES for found in expectations(path).values()]
    assert len(TRACES) >= 10 and any(verdicts) and not all(verdicts)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.stem)
def test_trace_states_expectations(path: Path):
    named = set(expectations(path))
    assert named, "trace without @expect"
    assert named <= {DEFAULT, *DETECTORS}, f"unknown detector in {sorted(named)}"


@pytest.mark.parametrize("path", FIGURES, ids=lambda p: p.stem)
def test_figure_states_every_detector(path: Path):
    assert set(expectations(path)) == {DEFAULT, *DETECTORS} - {"auto", "interval"}


@pytest.mark.parametrize("path, detector", CASES, ids=[f"{p.stem}-{d}" for p, d in CASES])
def test_trace_expectation(path: Path, detector: str):
    args = ["analyze", str(path), "--format", "json"]
    if detector != DEFAULT:
        args += ["--detector", detector]
    result = CliRunner().invoke(cli, args)
    expected = expectations(path)[detector]
    assert result.exit_code == (1 if expected else 0), result.output
    report = json.loads(result.output)
    observed = {(f["kind"], f["space"], tuple(sorted(a["line"] for a in f["accesses"]))) for f in report["findings"]}
    assert observed == expected
    assert len(observed) == len(report["findings"])
