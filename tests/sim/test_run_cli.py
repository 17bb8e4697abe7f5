"""`gpurace run`: a launch from the command line, its saved arguments, and exit status 2 for bad arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from kernel_files import KERNELS

from gpurace.cli import cli

SCRIPT = Path(sys.executable).parent / "gpurace"
HISTOGRAM = str(KERNELS / "histogram.cu")
HISTOGRAM_ARGS = ["--grid", "4", "--block", "256", "--arg", "buf:3000:iota", "--arg", "buf:64", "--arg", "3000"]


def histogram_reference() -> np.ndarray:
    data = np.arange(3000, dtype=np.uint64)
    return np.bincount((data * 2654435761 % (1 << 32)) % 64, minlength=64)


def test_run_saves_arguments_matching_numpy(tmp_path):
    out = tmp_path / "args.npz"
    proc = subprocess.run(
        [str(SCRIPT), "run", HISTOGRAM, *HISTOGRAM_ARGS, "--save-args", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "histogram" in proc.stdout and "1024 threads" in proc.stdout
    saved = np.load(out)
    assert sorted(saved.files) == ["arg0", "arg1", "arg2"]
    np.testing.assert_array_equal(saved["arg0"], np.arange(3000, dtype=np.uint32))
    assert saved["arg1"].dtype == np.uint32
    np.testing.assert_array_equal(saved["arg1"], histogram_reference())
    assert saved["arg2"].view(np.int32)[0] == 3000  # scalars are saved as their packed bytes


def test_run_in_process_with_dynamic_shared_memory(tmp_path):
    out = tmp_path / "args.npz"
    result = CliRunner().invoke(
        cli,
        ["run", str(KERNELS / "dynamic_shared.cu"), "--grid", "2", "--block", "128", "--shared-bytes", "1536",
         "--arg", "buf:256:iota", "--arg", "buf:256", "--save-args", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    values = np.arange(256).reshape(2, 128)
    np.testing.assert_array_equal(np.load(out)["arg1"], (3 * values[:, ::-1]).reshape(-1))


def test_run_with_a_finding_exits_1_and_reports_the_line():
    result = CliRunner().invoke(cli, ["run", str(KERNELS / "oob_store.cu"), "--grid", "1", "--block", "64", "--arg", "buf:64", "--arg", "64"])
    assert result.exit_code == 1
    assert "out-of-bounds" in result.output
    assert "oob_store.cu:8" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--arg", "buf:3000:iota", "--arg", "buf:64"], "takes 3 argument(s)"),
        (["--arg", "buf:3000:iota", "--arg", "buf:64", "--arg", "3000", "--arg", "1"], "4 given"),
        (["--arg", "buf:many:iota", "--arg", "buf:64", "--arg", "3000"], "COUNT must be an integer"),
        (["--arg", "buf:3000:sorted", "--arg", "buf:64", "--arg", "3000"], "unknown initialiser"),
        (["--arg", "vec:3000", "--arg", "buf:64", "--arg", "3000"], "unknown buffer kind"),
        (["--arg", "buf:3000:iota", "--arg", "buf:64", "--arg", "buf:4"], "non-pointer parameter"),
        (["--arg", "buf:3000:iota", "--arg", "buf:64", "--arg", "2.5"], "expected an integer"),
        (["--arg", "buf:3000:iota", "--arg", "buf:64", "--arg", "9999999999"], "does not fit"),
        (["--arg", "7", "--arg", "buf:64", "--arg", "3000"], "needs a buffer"),
        (["--arg", "auto:sorted", "--arg", "buf:64", "--arg", "3000"], "unknown automatic contents 'sorted'"),
        (["--arg", "buf:3000:iota", "--arg", "buf:64", "--arg", "auto:rand"], "auto:rand fills an automatic buffer; this parameter is not a pointer"),
    ],
)
def test_bad_arguments_exit_2_without_traceback(args, message):
    result = CliRunner().invoke(cli, ["run", HISTOGRAM, "--grid", "4", "--block", "256", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_bad_geometry_exits_2_from_a_subprocess():
    proc = subprocess.run(
        [str(SCRIPT), "run", HISTOGRAM, "--grid", "4,0", "--block", "256", "--arg", "buf:3000", "--arg", "buf:64", "--arg", "3000"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "grid" in proc.stderr
    assert "Traceback" not in proc.stderr
