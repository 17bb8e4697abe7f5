"""Calls through function pointers: resolved to the functions of the file the pointer is proved to hold, else unknown."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpurace.cli import cli

UNCONSTRAINED = """
typedef void (*update_fn)(float*, unsigned);
__device__ void own(float* v, unsigned i) { v[i] = 0.0f; }
__global__ void apply(float* v, update_fn f) { f(v, threadIdx.x); }
"""

ONE_CANDIDATE_EXCLUDED = """
#include "cuda.h"
typedef void (*update_fn)(float*, unsigned);
__device__ void own(float* v, unsigned i) { v[i] = 0.0f; }
__device__ void first(float* v, unsigned i) { v[0] = 0.0f; }
__global__ void apply(float* v, update_fn f) {
    __requires(f == own);
    if (f == first) v[threadIdx.x + 1] = 1.0f;
    f(v, threadIdx.x);
}
"""


def verify(tmp_path: Path, source: str) -> tuple[int, dict]:
    path = tmp_path / "k.cu"
    path.write_text(source)
    result = CliRunner().invoke(cli, ["verify", str(path), "-G", "--grid", "1", "--block", "64", "--format", "json", "--no-confirm"])
    return result.exit_code, json.loads(result.stdout)


def test_a_pointer_that_may_hold_any_function_is_unknown(tmp_path):
    # the pointer may hold a function of another file: nothing can be said about what it touches
    status, report = verify(tmp_path, UNCONSTRAINED)
    (kernel,) = report["kernels"]
    assert status == 4
    assert "function pointer" in kernel["unknown"] and "k.cu:4" in kernel["unknown"]


def test_only_the_functions_the_pointer_can_hold_are_run(tmp_path):
    # `first` writes v[0] for every thread, but __requires rules it out as the target
    status, report = verify(tmp_path, ONE_CANDIDATE_EXCLUDED)
    (kernel,) = report["kernels"]
    assert kernel["unknown"] is None
    assert [(o["object"], o["verdict"]) for o in kernel["objects"]] == [("v", "race-free")]
    assert status == 0
