"""Triton kernels from the command line: `gpurace check FILE.py --kernel NAME --grid N --arg ... --meta NAME=VALUE`.

The file is imported and compiled in a forked child (`frontend.triton_files`).
The kernels are those of tests/kernels/triton/ that carry an `# @launch`
line; their `# @expect` headers give kind, memory space and both Python
lines of each finding, or `clean`. The cases skip when Triton is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpus import read_header
from gpurace.cli import cli
from test_expectations import assert_findings

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "triton"
CASES = [pytest.param(path, id=path.stem) for path in sorted(KERNELS.glob("*.py")) if read_header(path).launches]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None,
    reason="Triton is not installed (pip install -e '.[test,triton]')",
)


def run_cli(path: Path, *options: str):
    return CliRunner().invoke(cli, ["check", str(path), *options, "--format", "json"])


def test_cases_cover_racy_and_clean_kernels() -> None:
    expects = [read_header(case.values[0]).expect for case in CASES]
    assert ["clean"] in expects and any(e != ["clean"] for e in expects)


@pytest.mark.parametrize("path", CASES)
def test_command_line_expectations(path: Path) -> None:
    header = read_header(path)
    result = run_cli(path, *shlex.split(header.launches[0]))
    assert result.exit_code == (0 if header.expect == ["clean"] else 1), result.output
    report = json.loads(result.stdout)
    assert_findings(path, report, header.expect)
    for finding in report["findings"]:
        assert all(Path(access["file"]).resolve() == path for access in finding["accesses"]), finding
    words = shlex.split(header.launches[0])
    assert report["launch"]["args"] == [words[i + 1] for i, w in enumerate(words) if w == "--arg"]
    assert report["launch"]["num_warps"] == 4


def test_num_warps_sets_the_block() -> None:
    result = run_cli(KERNELS / "vector_add.py", *shlex.split(read_header(KERNELS / "vector_add.py").launches[0]), "--num-warps", "2")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["findings"] == [] and report["launch"]["num_warps"] == 2
    assert report["launch"]["block"] == [64, 1, 1]


STORE = ["--grid", "3", "--arg", "f32:256:iota", "--arg", "f32:256", "--arg", "256"]


@pytest.mark.parametrize(
    "options, message",
    [
        (["--kernel", "nope", *STORE, "--meta", "BLOCK=128"], "no Triton kernel 'nope' (the file's Triton kernels: tag)"),
        (["--kernel", "tag", *STORE], "no value for meta-parameter 'BLOCK': pass --meta BLOCK=VALUE"),
        (["--kernel", "tag", *STORE, "--meta", "BLOCK"], "--meta 'BLOCK': expected NAME=VALUE"),
        (["--kernel", "tag", *STORE, "--meta", "BLOCK=128", "--meta", "WIDTH=4"], "has no parameter 'WIDTH'"),
        (["--kernel", "tag", *STORE[:-2], "--meta", "BLOCK=128"], "no value for parameter 'n'"),
        (["--kernel", "tag", *STORE, "--meta", "BLOCK=128", "--num-warps", "3"], "num_warps must be a power of two"),
        (["--kernel", "tag", *STORE, "--meta", "BLOCK=128", "--block", "32"], "not --block"),
        (["--kernel", "tag", "--grid", "3", "--arg", "buf:256", "--arg", "f32:256", "--arg", "256", "--meta", "BLOCK=128"],
         "needs its element type"),
    ],
)
def test_user_errors_exit_2_without_traceback(options, message) -> None:
    result = run_cli(KERNELS / "overlapping_store.py", *options)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert result.stdout == ""


def test_meta_options_are_refused_for_other_files() -> None:
    numba_file = KERNELS.parent / "numba" / "reduce_shared.py"
    result = run_cli(numba_file, "--grid", "1", "--block", "32", "--arg", "f32:32", "--arg", "f32:1", "--meta", "BLOCK=32")
    assert result.exit_code == 2
    assert "--meta and --num-warps configure Triton kernels; this file does not import triton" in result.stderr
