"""Corpus files that are whole programs (host code with `main`) give under `exec` the findings their `check`
expectations state: the launch the program makes is found, checked and reported as `check` reports it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_expectations import matches, parse_expectation

from corpus import read_header
from gpurace.runtime import exec_program

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(
    p for p in [*ROOT.glob("tests/kernels/**/*.cu"), *ROOT.glob("examples/*.cu")] if "int main" in p.read_text()
)


def test_the_corpus_has_whole_programs():
    assert {p.name for p in PROGRAMS} >= {"reduce_host.cu", "template_launch.cu", "sum_app.cu"}


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_exec_finds_what_check_expects(path: Path):
    result = exec_program(path, capture_output=True)
    assert result.errors == [] and result.launches >= 1, result.stderr
    found = []
    for f in result.findings:
        lines = tuple(sorted(s.loc.line for s in f.sites if s.loc is not None))
        found.append((f.kind, f.space, lines, f.severity))
    wanted = [e for e in map(parse_expectation, read_header(path).expect) if e is not None]
    assert len(found) == len(wanted), found
    for e in wanted:
        assert any(matches(e, f) for f in found), (e, found)
