"""`gpurace check a.cu b.cu`: files compiled as relocatable device code and linked as nvlink links them.

The kernel's file calls `extern __device__` functions and reads `extern
__device__` variables that the other file defines; races inside the other
file's functions are reported at its lines; a reference no file defines, or a
name two files define, is refused with exit status 2 and a message naming it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.frontend.link import load_linked
from gpurace.sim.launch import simulate

KERNEL = """\
extern __device__ void store(int *s, int i);
extern __device__ int bias;
__global__ void k(int *out)
{
    __shared__ int s[64];
    store(s, threadIdx.x);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x] + bias;
}
"""

CLEAN = """\
__device__ int bias = 100;
__device__ void store(int *s, int i)
{
    s[i] = i;
}
"""

RACY = CLEAN.replace("s[i] = i;", "s[i] = i;\n    if (i % 2)\n        s[i - 1] = i;")

# Each file has a `static` helper of the same name and a string literal (`$str` in both PTX modules).
PRIVATE_A = """\
extern __device__ int other(int x);
static __device__ __noinline__ int helper(int x) { return x + 1; }
__global__ void k(int *out)
{
    int t = threadIdx.x;
    out[t] = helper(t) * 1000 + other(t);
    if (t == 99)
        printf("a %d\\n", t);
}
"""

PRIVATE_B = """\
static __device__ __noinline__ int helper(int x) { return x + 2; }
__device__ int other(int x)
{
    if (x == 99)
        printf("b %d\\n", x);
    return helper(x);
}
"""


def _files(tmp_path, **sources):
    paths = []
    for name, text in sources.items():
        path = tmp_path / f"{name}.cu"
        path.write_text(text)
        paths.append(str(path))
    return paths


def _check(*argv):
    return CliRunner().invoke(cli, ["check", *argv, "--grid", "1", "--block", "64", "--arg", "buf:64", "--format", "json"])


def test_a_race_in_a_function_of_the_other_file_is_reported_at_its_line(tmp_path):
    a, b = _files(tmp_path, a=KERNEL, b=RACY)
    result = _check(a, b)
    assert result.exit_code == 1, result.output
    (finding,) = json.loads(result.output)["findings"]
    assert finding["kind"] == "data-race" and finding["space"] == "shared"
    assert sorted((access["file"], access["line"]) for access in finding["accesses"]) == [(b, 4), (b, 6)]


def test_the_race_free_twin_is_clean(tmp_path):
    a, b = _files(tmp_path, a=KERNEL, b=CLEAN)
    result = _check(a, b)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["findings"] == []


def test_extern_variables_take_the_other_files_definition_and_initial_value(tmp_path):
    a, b = _files(tmp_path, a=KERNEL, b=CLEAN)
    out = np.zeros(64, dtype=np.int32)
    simulate(load_linked([a, b]), grid=1, block=64, args=[out])
    assert (out == np.arange(64) + 100).all()


def test_names_private_to_each_file_stay_apart(tmp_path):
    a, b = _files(tmp_path, a=PRIVATE_A, b=PRIVATE_B)
    out = np.zeros(8, dtype=np.int32)
    simulate(load_linked([a, b]), grid=1, block=8, args=[out])
    t = np.arange(8)
    assert (out == (t + 1) * 1000 + t + 2).all()


def test_a_function_no_file_defines_names_it_and_the_calling_line(tmp_path):
    a, b = _files(tmp_path, a=KERNEL, b="__device__ int bias = 1;\n")
    result = _check(a, b)
    assert result.exit_code == 2, result.output
    assert f"{a}:6" in result.output
    assert "calls the device function store" in result.output and "which none of the files" in result.output
    assert "Traceback" not in result.output


def test_a_variable_no_file_defines_names_it(tmp_path):
    a, b = _files(tmp_path, a=KERNEL, b=CLEAN.replace("__device__ int bias = 100;\n", ""))
    result = _check(a, b)
    assert result.exit_code == 2, result.output
    assert "uses the __device__ variable bias" in result.output and f"{a}:8" in result.output


def test_one_file_alone_says_to_give_the_defining_file(tmp_path):
    (a,) = _files(tmp_path, a=KERNEL.replace("extern __device__ int bias;", "__device__ int bias;"))
    result = _check(a)
    assert result.exit_code == 2, result.output
    assert "calls store, whose body is not in the PTX: it is declared but defined in no file given" in result.output
    assert "Give the file that defines it too" in result.output


@pytest.mark.parametrize(
    "mine, other, message",
    [
        (KERNEL, CLEAN + "__global__ void k(int *out) {}\n", "the kernel k is defined in both"),
        (KERNEL + "__device__ void store(int *s, int i) { s[i] = 0; }\n", CLEAN, "the device function store is defined in both"),
        (KERNEL + "__device__ int bias = 7;\n", CLEAN, "the __device__ variable bias is defined in both"),
    ],
)
def test_a_name_defined_twice_is_refused(tmp_path, mine, other, message):
    a, b = _files(tmp_path, a=mine, b=other)
    result = _check(a, b)
    assert result.exit_code == 2, result.output
    assert message in result.output and a in result.output and b in result.output


def test_inline_functions_every_file_instantiates_are_one(tmp_path):
    shared = "template <int N> __device__ __noinline__ int scaled(int x) { return N * x; }\n"
    a, b = _files(
        tmp_path,
        a=shared + "extern __device__ int twice(int);\n__global__ void k(int *out) { out[threadIdx.x] = scaled<3>(twice(threadIdx.x)); }\n",
        b=shared + "__device__ int twice(int x) { return scaled<2>(x) + scaled<3>(0); }\n",
    )
    out = np.zeros(4, dtype=np.int32)
    simulate(load_linked([a, b]), grid=1, block=4, args=[out])
    assert list(out) == [0, 6, 12, 18]
