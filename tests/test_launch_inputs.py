"""Inputs beyond plain parameters: pointers to arrays, `__device__` variables (`--global`), structs with pointer
fields (`struct:`) and automatic dynamic shared memory, from the command line and the Python API."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gpurace
from gpurace.check import check
from gpurace.cli import cli
from gpurace.frontend.compile import compile_to_ptx, find_nvcc

INPUTS = Path(__file__).parent / "kernels" / "inputs"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def check_json(*args) -> dict:
    result = invoke("check", *args, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


# ---------------------------------------------------------------- automatic buffers with contents


def test_automatic_buffers_take_contents_at_their_start(tmp_path):
    """`auto:PATTERN` fills the first AUTO_FILL_BYTES of an automatic buffer (the rest stays zero): a kernel
    copying from far into it sees the pattern there and zeros past it."""
    from gpurace.sim.memory import AUTO_FILL_BYTES

    path = tmp_path / "k.cu"
    path.write_text("__global__ void k(const int* in, int* out, long long far) {\n"
                    "  out[threadIdx.x] = in[threadIdx.x]; out[64 + threadIdx.x] = in[far + threadIdx.x]; }\n")
    last = AUTO_FILL_BYTES // 4 - 32
    for spec, head, tail in (("auto", 0, 0), ("auto:ones", 1, 1), ("auto:iota", 5, last + 5)):
        out = np.zeros(128, np.int32)
        report = check(str(path), kernel="k", grid=(1, 1, 1), block=(64, 1, 1), args=[spec, out, last])
        assert report.findings == []
        assert out[5] == head and out[64 + 5] == tail and out[64 + 40] == 0, spec  # past the filled start: zero
    out = np.zeros(128, np.int32)
    check(str(path), kernel="k", grid=(1, 1, 1), block=(64, 1, 1), args=["auto:rand", out, 0], seed=3)
    assert 0 <= out.min() and out.max() <= 1000 and len(set(out[:64])) > 40


# ---------------------------------------------------------------- __device__ variables


def test_automatic_buffers_for_device_pointers_are_reported():
    report = check_json(INPUTS / "device_ptr_histogram.cu", "--grid", "2", "--block", "64")
    assert [b["name"] for b in report["stats"]["buffers"]] == ["in (const int*)", "__device__ bins (int*)"]
    assert "global_vars" not in report["launch"]


def test_device_pointers_are_automatic_only_when_every_argument_is():
    # an explicit argument: `bins` keeps its initial value, null, and every access through it is out of bounds
    report = check_json(INPUTS / "device_ptr_histogram.cu", "--grid", "1", "--block", "32", "--arg", "buf:32")
    assert {f["kind"] for f in report["findings"]} == {"out-of-bounds"}
    report = check_json(
        INPUTS / "device_ptr_histogram.cu", "--grid", "1", "--block", "32", "--arg", "buf:32", "--global", "bins=auto"
    )
    assert report["launch"]["global_vars"] == {"bins": "auto"}
    assert [b["name"] for b in report["stats"]["buffers"]] == ["__device__ bins (int*)"]
    assert {f["kind"] for f in report["findings"]} == {"data-race"}


@pytest.mark.parametrize(
    "option, message",
    [
        ("nope=buf:4", "--global nope: no __device__ or __constant__ variable named 'nope'"),
        ("bins", "--global 'bins': expected NAME=SPEC"),
        ("bins=7", "--global 'bins=7' for __device__ bins (int*): a pointer parameter needs a buffer"),
        ("table=buf:4:nonsense", "unknown initialiser 'nonsense'"),
    ],
)
def test_bad_global_options_exit_2_naming_the_option(option, message):
    result = invoke("check", INPUTS / "device_ptr_histogram.cu", "--grid", "1", "--block", "32", "--global", option)
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output


def test_a_variable_given_twice_is_an_error():
    result = invoke(
        "check", INPUTS / "device_ptr_copy.cu", "--grid", "1", "--block", "32", "--arg", "32",
        "--global", "src=buf:32", "--global", "src=buf:32",
    )  # fmt: skip
    assert result.exit_code == 2 and "src is given twice" in result.output
    result = invoke(
        "check", INPUTS / "device_ptr_copy.cu", "--grid", "1", "--block", "32", "--arg", "32",
        "--global", "src=buf:32", "--global", "::src=buf:32",
    )  # fmt: skip
    assert result.exit_code == 2 and "--global ::src: src is given twice" in result.output


def test_python_global_vars_are_updated_in_place_once_per_check():
    src, dst = np.arange(64, dtype=np.int32), np.full(64, 5, np.int32)
    report = check(INPUTS / "device_ptr_copy.cu", grid=2, block=32, args=[64], global_vars={"src": src, "dst": dst}, schedules=2)
    assert report.clean and (dst == 2 * src).all()
    assert report.launch["global_vars"] == {"src": "int32[64]", "dst": "int32[64]"}


def test_a_ptx_file_has_no_automatic_device_pointers_but_takes_them_given(tmp_path):
    ptx = tmp_path / "copy.ptx"
    ptx.write_text(compile_to_ptx(INPUTS / "device_ptr_copy.cu").text)
    report = check_json(ptx, "--grid", "1", "--block", "32")
    assert "buffers" not in report["stats"] and {f["kind"] for f in report["findings"]} == {"out-of-bounds"}
    report = check_json(ptx, "--grid", "1", "--block", "32", "--arg", "32", "--global", "src=buf:32", "--global", "dst=buf:32")
    assert report["findings"] == []


# ---------------------------------------------------------------- structs with pointer fields


def test_automatic_struct_fields_are_reported():
    result = invoke("check", INPUTS / "struct_fields_shift.cu", "--grid", "2", "--block", "64")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "automatic buffer job.in (const float*): 512 bytes used, 1 page touched" in lines
    assert "automatic buffer job.out (float*): 516 bytes used, 1 page touched" in lines
    assert "automatic value job.n (int) = 128" in lines


def test_python_struct_fields_as_a_dict():
    keys, vals = np.arange(64, dtype=np.int32), np.zeros(64, np.float32)
    result = gpurace.run(
        INPUTS / "struct_fields_nested.cu", grid=2, block=32, args=[{"io": {"keys": keys, "vals": vals}, "n": 64, "scale": 0.5}]
    )
    assert result.clean and (vals == 0.5 * keys).all()


def test_a_struct_whose_layout_is_unknown_stays_zero_under_auto(tmp_path):
    source = tmp_path / "flags.cu"
    source.write_text((INPUTS / "struct_fields_unreadable.cu").read_text())
    result = invoke("run", source, "--grid", "1", "--block", "32")
    assert result.exit_code == 1  # a write through the null pointer
    assert "automatic value f (Flags) = all zero bytes (cannot tell the layout of Flags:" in result.stdout


def test_save_args_of_a_struct_holds_the_field_addresses(tmp_path):
    saved = tmp_path / "args.npz"
    result = invoke(
        "run", INPUTS / "struct_fields_nested.cu", "--grid", "1", "--block", "32",
        "--arg", "struct:io.keys=buf:32,io.vals=buf:32,n=32,scale=1", "--save-args", saved,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    raw = np.load(saved)["arg0"].tobytes()  # Job: io.keys, io.vals, n, scale
    assert np.frombuffer(raw[:16], np.uint64).all() and np.frombuffer(raw[16:20], np.int32)[0] == 32


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc is needed for a file with host code")
def test_layouts_of_a_file_with_host_code_come_from_nvcc(tmp_path):
    source = tmp_path / "app.cu"
    source.write_text(
        (INPUTS / "struct_fields_shift.cu").read_text()
        + "int main() { Job job{}; shift<<<1, 32>>>(job); return cudaDeviceSynchronize(); }\n"
    )
    report = check_json(source, "--grid", "1", "--block", "32")
    assert [b["name"] for b in report["stats"]["buffers"]] == ["job.in (const float*)", "job.out (float*)"]


# ---------------------------------------------------------------- pointers to arrays


def test_pointer_to_arrays_takes_buffers_of_its_scalars():
    report = check_json(INPUTS / "rows_neighbour.cu", "--grid", "2", "--block", "64")
    assert report["stats"]["buffers"] == [{"name": "x (float (*)[64])", "bytes_used": 512, "pages": 1}]
    result = invoke("run", INPUTS / "rows_scale.cu", "--grid", "1", "--block", "64", "--arg", "buf:64:iota", "--arg", "i32:64", "--arg", "1")
    assert result.exit_code == 0, result.output


# ---------------------------------------------------------------- automatic dynamic shared memory


def test_automatic_dynamic_shared_memory_is_measured_and_reported():
    report = check_json(INPUTS / "extern_shared_reverse.cu", "--grid", "2", "--block", "128")
    assert report["launch"]["shared_bytes"] == 512
    assert report["stats"]["dynamic_shared"] == {"name": "tile", "bytes": 512, "first_run_bytes": 49152}
    result = invoke("check", INPUTS / "extern_shared_reverse.cu", "--grid", "2", "--block", "128")
    assert "automatic dynamic shared memory tile: 512 bytes per block (the most a first run with 49152 bytes used)" in result.stdout


def test_given_shared_bytes_are_used_as_they_are():
    report = check_json(INPUTS / "extern_shared_reverse.cu", "--grid", "1", "--block", "128", "--shared-bytes", "0")
    assert "dynamic_shared" not in report["stats"] and {f["kind"] for f in report["findings"]} == {"out-of-bounds"}
    report = check_json(INPUTS / "extern_shared_reverse.cu", "--grid", "1", "--block", "128", "--shared-bytes", "1024")
    assert report["launch"]["shared_bytes"] == 1024 and report["findings"] == []


def test_kernels_without_extern_shared_get_none():
    report = check_json(INPUTS / "rows_neighbour.cu", "--grid", "1", "--block", "64")
    assert report["launch"]["shared_bytes"] == 0 and "dynamic_shared" not in report["stats"]


def test_constant_variables_take_values_too(tmp_path):
    source = tmp_path / "constant.cu"
    source.write_text(
        "struct P { const float *w; int n; };\n__constant__ P params;\n__constant__ float *scale;\n"
        "__global__ void k(float *out) { int i = threadIdx.x; if (i < params.n) out[i] = params.w[i] * *scale; }\n"
    )
    out = np.zeros(32, np.float32)
    result = gpurace.run(
        source, grid=1, block=32, args=[out], global_vars={"params": "struct:w=f32:32:iota,n=32", "scale": np.array([2.0], np.float32)}
    )
    assert result.clean and (out == 2 * np.arange(32)).all()


def test_the_first_run_for_dynamic_shared_memory_leaves_the_callers_arrays_alone(tmp_path):
    source = tmp_path / "accumulate.cu"
    source.write_text(
        "extern __shared__ int tile[];\n__device__ int *total;\n"
        "__global__ void k(int *out) { tile[threadIdx.x] = 1; __syncthreads();\n"
        "  if (threadIdx.x == 0) { out[0] += tile[5]; *total += 1; } }\n"
    )
    out, total = np.zeros(1, np.int32), np.zeros(1, np.int32)
    result = gpurace.run(source, grid=1, block=32, args=[out], global_vars={"total": total})
    assert result.clean and result.dynamic_shared.bytes == 128
    assert out[0] == 1 and total[0] == 1  # one run's worth, not two


# ---------------------------------------------------------------- array variables filled with a pattern

TABLES = r"""
struct pair { int a, b; };
__constant__ short table[2][8] = {{7}};
__device__ pair pairs[4];
__device__ int count;

__global__ void copy(int* out) {
  out[threadIdx.x] = table[threadIdx.x / 8][threadIdx.x % 8] + pairs[0].a + count;
}
"""


@pytest.mark.parametrize("fill, expected", [("iota", np.arange(16)), ("ones", np.ones(16)), ("zeros", np.zeros(16))])
def test_auto_pattern_fills_every_element_of_an_array_variable(tmp_path, fill, expected):
    path = tmp_path / "k.cu"
    path.write_text(TABLES)
    out = np.zeros(16, np.int32)
    report = check(str(path), grid=1, block=16, args=[out], global_vars={"table": f"auto:{fill}"})
    assert report.findings == [] and report.launch["global_vars"] == {"table": f"auto:{fill}"}
    assert out.tolist() == expected.tolist()
    out = np.zeros(16, np.int32)
    check(str(path), grid=1, block=16, args=[out])
    assert out.tolist() == [7] + [0] * 15  # as declared


@pytest.mark.parametrize(
    "option, message",
    [
        ("table=auto:nonsense", "unknown automatic contents 'nonsense' (use zeros, ones, iota, rand)"),
        ("pairs=auto:ones", "auto:ones fills an array of numbers, and the elements of this one are not known to be"),
        ("count=auto:ones", "auto:ones fills an automatic buffer; this parameter is not a pointer"),
    ],
)
def test_auto_patterns_only_fill_arrays_of_numbers(tmp_path, option, message):
    path = tmp_path / "k.cu"
    path.write_text(TABLES)
    result = invoke("check", path, "--grid", "1", "--block", "16", "--arg", "buf:16", "--global", option)
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output
