"""Instructions the simulator does not support stop the run with exit status 2 and a message naming
the instruction and its source line, only when they are executed."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from gpurace.cli import cli

VIDEO = r"""
__global__ void k(unsigned* out, unsigned a, int which) {
  if (which < 2)
    out[threadIdx.x] = __vabsdiffu4(a, threadIdx.x);  // line 4: a video instruction
  else
    out[threadIdx.x] = 7;
}
"""


def run(tmp_path, source, *args):
    path = tmp_path / "k.cu"
    path.write_text(source)
    return CliRunner().invoke(cli, ["run", str(path), "--grid", "1", "--block", "32", *args])


def test_an_unsupported_instruction_is_a_clear_error_when_executed(tmp_path):
    result = run(tmp_path, VIDEO, "--arg", "buf:32", "--arg", "1", "--arg", "1")
    assert result.exit_code == 2
    assert "the simulator does not support `vabsdiff4" in result.output
    assert "k.cu:4" in result.output
    assert "Traceback" not in result.output


def test_an_unsupported_instruction_that_never_runs_does_not_stop_the_kernel(tmp_path):
    result = run(tmp_path, VIDEO, "--arg", "buf:32", "--arg", "1", "--arg", "5", "--save-args", str(tmp_path / "o.npz"))
    assert result.exit_code == 0, result.output
    assert (np.load(tmp_path / "o.npz")["arg0"] == 7).all()
