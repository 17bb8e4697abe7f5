"""Triton kernels from the command line: `gpurace check FILE.py --kernel NAME --grid N --arg ... --meta NAME=VALUE`.

The file is imported and compiled in a forked child (`frontend.triton_files`).
The kernels are those of tests/kernels/triton/ that carry an `# @launch`
line; their `# @expect` headers give kind, memory space and both Python
lines of each finding, or `clean`. `autotuned_scale.py` has one launch per
autotuning configuration (`@launch_configN`, `@expect_configN`); files that
stop their own import are written per test. The cases skip when Triton is
not installed.
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


def test_a_configuration_with_a_pre_hook_is_refused() -> None:
    """The hook would prepare the child's arrays, not the launch's: the command line refuses it by name."""
    options = ["--kernel", "tuned_row_max", "--grid", "2", "--arg", "f32:6,40", "--arg", "f32:6", "--arg", "6", "--arg", "40"]
    result = run_cli(KERNELS / "pipelined_rows.py", *options)
    assert result.exit_code == 2, result.output
    assert "has a pre_hook" in result.stderr and "gpurace.triton.check does" in result.stderr


def test_meta_options_are_refused_for_other_files() -> None:
    numba_file = KERNELS.parent / "numba" / "reduce_shared.py"
    result = run_cli(numba_file, "--grid", "1", "--block", "32", "--arg", "f32:32", "--arg", "f32:1", "--meta", "BLOCK=32")
    assert result.exit_code == 2
    assert "--meta, --num-warps and --config configure Triton kernels; this file does not import triton" in result.stderr
    result = run_cli(numba_file, "--grid", "1", "--block", "32", "--arg", "f32:32", "--arg", "f32:1", "--config", "0")
    assert result.exit_code == 2 and "--config configure Triton kernels" in result.stderr


AUTOTUNED = KERNELS / "autotuned_scale.py"


@pytest.mark.parametrize("config", [0, 1])
def test_autotuning_configuration_chosen_by_config(config) -> None:
    """Configuration 1's block overlaps the next program's: `--config 1` finds the race, `--config 0` nothing;
    each runs with its configuration's warps and heuristics compute EVEN from the arguments."""
    header = read_header(AUTOTUNED)
    expect = header.extra[f"expect_config{config}"]
    result = run_cli(AUTOTUNED, *shlex.split(header.extra[f"launch_config{config}"][0]))
    assert result.exit_code == (0 if expect == ["clean"] else 1), result.output
    report = json.loads(result.stdout)
    assert_findings(AUTOTUNED, report, expect)
    assert all(Path(a["file"]).resolve() == AUTOTUNED for f in report["findings"] for a in f["accesses"])
    assert report["launch"]["autotune_config"] == config
    warps = (4, 2)[config]  # the file's triton.Config(..., num_warps=...)
    assert report["launch"]["num_warps"] == warps and report["launch"]["block"] == [warps * 32, 1, 1]


def test_autotuned_kernel_defaults_to_its_first_configuration() -> None:
    result = run_cli(AUTOTUNED, *launch_words(AUTOTUNED, "launch_config1"))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["findings"] == [] and report["launch"]["autotune_config"] == 0


def test_heuristics_kernel_without_a_race() -> None:
    """The @launch_clean line: chunks of 128 fill the heuristic's block exactly (the racy launch is a CASES one)."""
    path = KERNELS / "heuristic_chunks.py"
    result = run_cli(path, *shlex.split(read_header(path).extra["launch_clean"][0]))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["findings"] == [] and "autotune_config" not in report["launch"]


def launch_words(path: Path, key: str) -> list[str]:
    """The options of `path`'s first `@key` header line, less any `--config N`."""
    words = shlex.split(getattr(read_header(path), key)[0] if key == "launches" else read_header(path).extra[key][0])
    return words[: words.index("--config")] if "--config" in words else words


@pytest.mark.parametrize(
    "path, key, config, message",
    [
        (AUTOTUNED, "launch_config0", "2", "--config: the kernel has 2 autotuning configuration(s), 0 to 1; got 2"),
        (AUTOTUNED, "launch_config0", "-1", "--config: the kernel has 2 autotuning configuration(s), 0 to 1; got -1"),
        (KERNELS / "heuristic_chunks.py", "launches", "0", "--config 0: kernel chunks is not autotuned (@triton.autotune)"),
    ],
)
def test_config_out_of_range_or_without_autotuning_exits_2(path, key, config, message) -> None:
    result = run_cli(path, *launch_words(path, key), "--config", config)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output


KERNEL_AFTER = """
@triton.jit
def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets))
"""


def write_kernel_file(tmp_path: Path, code: str) -> Path:
    path = tmp_path / "kernel_file.py"
    path.write_text(f"import triton\nimport triton.language as tl\n{code}\n{KERNEL_AFTER}")
    return path


COPY = ["--kernel", "copy", "--grid", "1", "--arg", "f32:64", "--arg", "f32:64", "--meta", "BLOCK=64"]


@pytest.mark.parametrize(
    "code, message",
    [
        ("import sys\nsys.exit(3)", "importing the file failed: its code called sys.exit(3)"),
        ("raise ValueError('no GPU here')", "importing the file failed: ValueError: no GPU here"),
        ("raise KeyboardInterrupt", "importing the file failed: KeyboardInterrupt"),
        ("import os\nos._exit(4)", "the child process that ran it exited with status 4 before it finished"),
        # (pytest's faulthandler, which the forked child inherits, would print its stack first)
        ("import faulthandler, os, signal\nfaulthandler.disable()\nos.kill(os.getpid(), signal.SIGSEGV)",
         "the child process that ran it was killed by signal 11 (SIGSEGV)"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "the child process that ran it was killed by signal 9 (SIGKILL)"),
    ],
)
def test_a_file_that_stops_its_import_is_named_for_what_it_did(tmp_path, code, message) -> None:
    """Not an overrun of the memory or time budget: what the file's code did, and the file."""
    result = run_cli(write_kernel_file(tmp_path, code), *COPY)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "kernel_file.py" in result.stderr, result.stderr
    assert "memory" not in result.stderr and "longer than" not in result.stderr and "Traceback" not in result.output
    assert result.stdout == ""


def test_an_abort_names_the_memory_budget_as_what_ends_native_code_so(tmp_path) -> None:
    result = run_cli(write_kernel_file(tmp_path, "import os\nos.abort()"), *COPY)
    assert result.exit_code == 2, result.output
    assert "was killed by signal 6 (SIGABRT) before it finished; native code that outgrows the memory budget" in result.stderr


def test_memory_overrun_while_importing_is_named_as_one(tmp_path) -> None:
    result = run_cli(write_kernel_file(tmp_path, "hoard = bytearray(1 << 50)"), *COPY)
    assert result.exit_code == 2, result.output
    assert "importing the file and compiling its Triton kernel ran out of memory: a compile may use" in result.stderr


def test_what_the_file_prints_stays_out_of_the_report(tmp_path) -> None:
    result = run_cli(write_kernel_file(tmp_path, "print('loading kernels')"), *COPY)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["findings"] == []
