"""Kernel-only files in GPUVerify's style through `gpurace check`/`run`/`kernels` and the Python API.

The kernels live in tests/kernels/gpuverify/ (test_expectations.py runs each
of them once with no launch options); these tests cover how the header meets
the command line and what `__assert`/`__requires`/`__assume` do to a run.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gpurace
from gpurace.check import check
from gpurace.cli import cli
from gpurace.errors import PreconditionViolated, UserError

KERNELS = Path(__file__).resolve().parent / "kernels" / "gpuverify"


def _invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _json(result) -> dict:
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_explicit_dimensions_win_over_the_header():
    # One thread cannot race with itself; the header's 256 threads do (tests/kernels/gpuverify/neighbour_race.cu).
    report = _json(_invoke("check", KERNELS / "neighbour_race.cu", "--grid", "1", "--block", "1", "--format", "json"))
    assert (report["launch"]["grid"], report["launch"]["block"]) == ([1, 1, 1], [1, 1, 1])
    assert report["findings"] == []
    assert report["launch"]["header_expect"] == "xfail:BOOGIE_ERROR"


def test_one_explicit_dimension_and_the_other_from_the_header():
    report = _json(_invoke("check", KERNELS / "neighbour_race.cu", "--block", "32", "--format", "json"))
    assert (report["launch"]["grid"], report["launch"]["block"]) == ([2, 2, 1], [32, 1, 1])


def test_without_header_or_options_the_launch_is_refused(tmp_path):
    f = tmp_path / "plain.cu"
    f.write_text("__global__ void k(int *a) { a[threadIdx.x] = 1; }\n")
    result = _invoke("check", f)
    assert result.exit_code == 2
    assert f"{f}: no launch dimensions: pass --grid and --block, or start the file with a GPUVerify header" in result.stderr
    result = _invoke("run", f, "--grid", "2")
    assert result.exit_code == 2 and "pass --block," in result.stderr


def test_a_header_with_only_a_label_needs_the_options(tmp_path):
    f = tmp_path / "label.cu"
    f.write_text("//pass\n#include <cuda.h>\n__global__ void k(int *a) { a[threadIdx.x] = 1; }\n")
    assert "pass --grid and --block" in _invoke("check", f).stderr
    report = _json(_invoke("check", f, "--grid", "1", "--block", "8", "--format", "json"))
    assert report["launch"]["header_expect"] == "pass"


def test_run_takes_the_launch_from_the_header():
    result = _invoke("run", KERNELS / "assert_holds.cu")
    assert result.exit_code == 0, result.output
    assert "asserts_hold: 192 threads (grid 3x1x1, block 32x2x1)" in result.stdout


def test_malformed_header_exits_2_naming_file_and_line(tmp_path):
    f = tmp_path / "bad.cu"
    f.write_text("//pass\n//--blockDim=[64,x] --gridDim=1\n__global__ void k() {}\n")
    for command in ("check", "run", "kernels"):
        result = _invoke(command, f)
        assert result.exit_code == 2
        assert f"{f}:2: --blockDim=[64,x]: expected a positive integer" in result.stderr
        assert "Traceback" not in result.output


def test_header_defines_reach_the_compiler_and_the_command_line_overrides_them():
    # reverse_tiles.cu declares `__shared__ int tile[TILE]` and its header says -DTILE=64.
    listing = json.loads(_invoke("kernels", KERNELS / "reverse_tiles.cu", "--format", "json").stdout)
    assert listing["kernels"][0]["shared_bytes"] == 64 * 4
    listing = json.loads(_invoke("kernels", KERNELS / "reverse_tiles.cu", "-D", "TILE=16", "--format", "json").stdout)
    assert listing["kernels"][0]["shared_bytes"] == 16 * 4


def test_reports_of_files_without_header_have_no_label(tmp_path):
    f = tmp_path / "plain.cu"
    f.write_text("__global__ void k(int *a) { a[threadIdx.x] = 1; }\n")
    report = _json(_invoke("check", f, "--grid", "1", "--block", "8", "--format", "json"))
    assert "header_expect" not in report["launch"]


def test_failed_assert_is_a_finding_and_the_threads_carry_on():
    a = np.zeros(64, np.int32)
    result = gpurace.run(KERNELS / "assert_fails.cu", grid=8, block=8, args=[a])
    (f,) = result.findings
    assert f.kind == "assertion-failure" and f.count == 4  # gid 60..63
    assert f.cause == "__assert(gid < 60) failed"
    assert f.sites[0].loc.line == 11 and f.sites[0].block == (7, 0, 0) and f.sites[0].thread == (4, 0, 0)
    assert (a == np.arange(64)).all()  # the failing threads still wrote their element


def test_violated_requires_raises_precondition_violated_from_the_api():
    with pytest.raises(PreconditionViolated) as e:
        check(KERNELS / "requires_violated.cu", grid=2, block=64, args=["auto", "96"])
    assert isinstance(e.value, UserError)
    assert "violates __requires(n % 64 == 0 && n >= 64) at " in str(e.value)
    assert "requires_violated.cu:11 " in str(e.value)
    assert check(KERNELS / "requires_violated.cu", grid=2, block=64, args=["auto", "128"]).clean


def test_requires_is_checked_for_every_thread(tmp_path):
    f = tmp_path / "per_thread.cu"
    f.write_text(
        "#include <cuda.h>\n"
        "__global__ void k(int *a, int n) {\n"
        "  __requires(threadIdx.x < n);\n"
        "  a[threadIdx.x] = n;\n"
        "}\n"
    )
    assert check(f, grid=1, block=32, args=["auto", "32"]).clean
    with pytest.raises(PreconditionViolated, match=r"per_thread.cu:3 \(thread \(31,0,0\) of block \(0,0,0\)\)"):
        check(f, grid=1, block=32, args=["auto", "31"])


def test_assume_stops_a_run_that_breaks_it_also_in_a_called_function(tmp_path):
    f = tmp_path / "assumed.cu"
    f.write_text(
        "#include <cuda.h>\n"
        "__device__ __noinline__ void put(int *a, int v) { __assume(v < 16); a[threadIdx.x] = v; }\n"
        "__global__ void k(int *a, const int *b) {\n"
        "  int v = b[threadIdx.x];\n"
        "  __assume(v >= 0);\n"
        "  put(a, v);\n"
        "}\n"
    )
    b = np.full(32, 15, dtype=np.int32)
    assert check(f, grid=1, block=32, args=["auto", b]).clean
    b[3] = -1
    with pytest.raises(PreconditionViolated, match=r"violates __assume\(v >= 0\) at .*assumed.cu:5 \(thread \(3,0,0\)"):
        check(f, grid=1, block=32, args=["auto", b])
    with pytest.raises(PreconditionViolated, match=r"violates __assume\(v < 16\) at .*assumed.cu:2 "):
        check(f, grid=1, block=32, args=["auto", np.full(32, 16, dtype=np.int32)])
    result = _invoke("check", f, "--grid", "1", "--block", "32", "--arg", "i32:32", "--arg", "i32:32:iota")
    assert result.exit_code == 2 and "violates __assume(v < 16)" in result.output, result.output


def test_verifier_only_predicate_fails_only_when_executed(tmp_path):
    f = tmp_path / "guarded.cu"
    f.write_text(
        "#include <cuda.h>\n"
        "__global__ void k(int *a, int check) {\n"
        "  a[threadIdx.x] = 1;\n"
        "  if (check) __assert(__read(a));\n"
        "}\n"
    )
    assert check(f, grid=1, block=32, args=["auto", "0"]).clean
    with pytest.raises(UserError, match=r"guarded.cu:4: not supported: GPUVerify predicate __read\(\) can only be checked statically"):
        check(f, grid=1, block=32, args=["auto", "1"])
