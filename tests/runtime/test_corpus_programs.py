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


def test_exec_runs_a_launch_larger_than_resident_threads_in_waves():
    """`examples/sum_app.cu` summing 4,096 numbers launches 16 blocks; with 512 threads resident it runs in
    eight waves on the program's own device memory, prints what the whole launch prints, and reports the same
    race as often."""
    from gpurace.limits import Limits

    app = ROOT / "examples" / "sum_app.cu"
    whole = exec_program(app, args=["4096"], capture_output=True)
    waves = exec_program(app, args=["4096"], capture_output=True, limits=Limits(resident_threads=512))
    assert waves.errors == [] and waves.launches == 1
    assert waves.stdout == whole.stdout and "sum of 0..4095" in waves.stdout
    (race,) = waves.findings
    assert (race.kind, race.space, [s.loc.line for s in race.sites]) == ("data-race", "shared", [28, 28])
    (same,) = whole.findings
    assert race.count == same.count  # every block's instances, counted once, in waves as whole
