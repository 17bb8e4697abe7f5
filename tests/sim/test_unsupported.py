"""Instructions the simulator does not support stop the run with exit status 2 and a message naming
the instruction and its source line, only when they are executed."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from gpurace.cli import cli

INDIRECT = r"""
__device__ int twice(int x) { return 2 * x; }
__device__ int thrice(int x) { return 3 * x; }
__global__ void k(int* out, int which) {
  if (which < 2) {
    int (*f)(int) = which ? twice : thrice;  // line 6: takes function addresses
    out[threadIdx.x] = f(threadIdx.x);
  } else
    out[threadIdx.x] = 7;
}
"""


def run(tmp_path, source, *args):
    path = tmp_path / "k.cu"
    path.write_text(source)
    return CliRunner().invoke(cli, ["run", str(path), "--grid", "1", "--block", "32", *args])


def test_function_pointers_are_a_clear_error_when_used(tmp_path):
    result = run(tmp_path, INDIRECT, "--arg", "buf:32", "--arg", "1")
    assert result.exit_code == 2
    assert "function pointers (indirect calls) are not supported" in result.output
    assert "k.cu:6" in result.output
    assert "Traceback" not in result.output


def test_an_unsupported_instruction_that_never_runs_does_not_stop_the_kernel(tmp_path):
    result = run(tmp_path, INDIRECT, "--arg", "buf:32", "--arg", "5", "--save-args", str(tmp_path / "o.npz"))
    assert result.exit_code == 0, result.output
    assert (np.load(tmp_path / "o.npz")["arg0"] == 7).all()
