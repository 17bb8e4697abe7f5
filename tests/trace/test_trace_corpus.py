"""The hand-written traces in tests/traces/: each file's `# @expect` header lines are the exact set of findings.

Every trace runs through the real command line (`gpurace analyze --format
json`); findings are compared by kind, memory space and the two source
lines (lines of the trace file itself where a line names no `@ FILE:LINE`).
`# @expect clean` means nothing is reported and the exit status is 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.cli import cli

TRACES = sorted((Path(__file__).resolve().parent.parent / "traces").glob("*.trace"))


def expectations(path: Path) -> set[tuple]:
    out = set()
    for line in path.read_text().splitlines():
        if not line.startswith("# @expect "):
            continue
        words = line.split()[2:]
        if words != ["clean"]:
            out.add((words[0], words[1], tuple(sorted(int(w) for w in words[2:]))))
    return out


def test_corpus_has_racy_and_clean_traces():
    verdicts = [bool(expectations(p)) for p in TRACES]
    assert len(TRACES) >= 10 and any(verdicts) and not all(verdicts)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.stem)
def test_trace_expectation(path: Path):
    assert any(line.startswith("# @expect ") for line in path.read_text().splitlines()), "trace without @expect"
    result = CliRunner().invoke(cli, ["analyze", str(path), "--format", "json"])
    expected = expectations(path)
    assert result.exit_code == (1 if expected else 0), result.output
    report = json.loads(result.output)
    observed = {(f["kind"], f["space"], tuple(sorted(a["line"] for a in f["accesses"]))) for f in report["findings"]}
    assert observed == expected
    assert len(observed) == len(report["findings"])
