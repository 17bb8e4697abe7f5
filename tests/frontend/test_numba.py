"""Numba-CUDA kernels: `gpurace check FILE.py` (compiled in a child process) and `gpurace.numba.check`.

The kernels are in tests/kernels/numba/, each with a header stating its
launch and the expected findings (or error), in the corpus format
(tests/kernels/README.md) written with `#`. Every CLI case compiles its
kernel in a child process (about a second of numba-cuda); the API cases
compile each kernel once per argument types in this process.
"""

from __future__ import annotations

import importlib.util
import json
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from corpus import read_header
import gpurace.numba
from gpurace.cli import cli
from gpurace.numba.simulation import report_text
from test_expectations import assert_findings

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "numba"
HAVE_NUMBA = importlib.util.find_spec("numba_cuda") is not None
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba-cuda is not installed (pip install -e '.[test,numba]')")

CLI_CASES = [
    pytest.param(path, id=path.stem) for path in sorted(KERNELS.glob("*.py")) if read_header(path).launches
]


def run_cli(path: Path, *options: str):
    return CliRunner().invoke(cli, ["check", str(path), *options, "--format", "json"])


@needs_numba
@pytest.mark.parametrize("path", CLI_CASES)
def test_command_line_expectations(path: Path) -> None:
    header = read_header(path)
    result = run_cli(path, *shlex.split(header.launches[0]))
    if "expect_error" in header.extra:
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        for text in header.extra["expect_error"]:
            assert text in result.stderr, result.stderr
        return
    assert result.exit_code == (0 if header.expect == ["clean"] else 1), result.output
    report = json.loads(result.stdout)
    assert_findings(path, report, header.expect)
    words = shlex.split(header.launches[0])
    assert report["launch"]["args"] == [words[i + 1] for i, w in enumerate(words) if w == "--arg"]


def test_python_files_need_the_numba_extra(monkeypatch) -> None:
    import gpurace.frontend.numba_kernels as numba_kernels

    monkeypatch.setattr(numba_kernels.importlib.util, "find_spec", lambda name: None)
    result = run_cli(KERNELS / "reduce_shared.py", "--grid", "1", "--block", "128", "--arg", "f32:128", "--arg", "f32:1")
    assert result.exit_code == 2
    assert "install gpurace[numba]" in result.stderr


def test_other_commands_refuse_python_files() -> None:
    result = CliRunner().invoke(cli, ["kernels", str(KERNELS / "reduce_shared.py")])
    assert result.exit_code == 2
    assert "gpurace check" in result.stderr


# --------------------------------------------------------------------------
# gpurace.numba.check
# --------------------------------------------------------------------------


def import_kernel(name: str):
    """The module of kernel file NAME.py, imported in this process (our own files)."""
    spec = importlib.util.spec_from_file_location(name, KERNELS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def kernels():
    """The kernel files' modules, imported once (ours, so in this process)."""
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (pip install -e '.[test,numba]')")
    names = (
        "reduce_shared", "reduce_missing_barrier", "histogram_plain", "histogram_atomic", "matrix_scale", "warp_shift",
        "device_function_store", "warp_shuffle_sum", "matmul_tiled", "atomic_ops", "float_max_atomic", "float_max_plain",
    )  # fmt: skip
    return {name: import_kernel(name) for name in names}


def sites(report) -> list[tuple]:
    """(kind, space, both lines, the files) of each finding."""
    return [
        (f.kind, f.space, sorted(s.loc.line for s in f.sites), {Path(s.loc.file).name for s in f.sites})
        for f in report.findings
    ]


def test_reduction_with_barriers_is_clean_and_sums(kernels) -> None:
    x = np.random.default_rng(1).random(256).astype(np.float32)
    out = np.zeros(1, np.float32)
    report = gpurace.numba.check(kernels["reduce_shared"].block_sum, 2, 128, x, out)
    assert report.clean
    assert out[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)
    assert report.kernel == "block_sum" and report.launch["args"] == ["float32[256]", "float32[1]"]


def test_reduction_missing_barrier_races_on_shared_memory(kernels) -> None:
    x, out = np.ones(256, np.float32), np.zeros(1, np.float32)
    report = gpurace.numba.check(kernels["reduce_missing_barrier"].block_sum, 2, 128, x, out)
    assert sites(report) == [("data-race", "shared", [20, 20], {"reduce_missing_barrier.py"})]


def test_histograms(kernels) -> None:
    values = np.random.default_rng(2).integers(0, 1000, 128).astype(np.int32)
    bins = np.zeros(8, np.int32)
    report = gpurace.numba.check(kernels["histogram_atomic"].histogram, 2, 64, values, bins)
    assert report.clean
    assert np.array_equal(bins, np.bincount(values % 8, minlength=8))
    racy = gpurace.numba.check(kernels["histogram_plain"].histogram, 2, 64, values, np.zeros(8, np.int32))
    assert sites(racy) == [("data-race", "global", [13, 13], {"histogram_plain.py"})]


def test_cpu_tensors_stand_for_arrays_and_receive_the_results(kernels) -> None:
    """A tensor that speaks DLPack (as a PyTorch CPU tensor does) is the array sharing its memory."""
    from dlpack_tensor import Tensor

    values = np.random.default_rng(3).integers(0, 1000, 128).astype(np.int32)
    bins = Tensor(np.zeros(8, np.int32))
    report = gpurace.numba.check(kernels["histogram_atomic"].histogram, 2, 64, Tensor(values), bins)
    assert report.clean and np.array_equal(bins.read(), np.bincount(values % 8, minlength=8))
    assert report.launch["args"] == ["int32[128]", "int32[8]"]


def test_numba_s_own_volatile_loads_are_not_races(kernels) -> None:
    """cuda.atomic.max on floats is Numba's compare-and-swap loop, whose first load is ld.volatile: morally strong
    against the other loops' atom.cas under the PTX model, so the `cuda` model's "volatile is not atomic"
    warnings are left out (counted), unless a model is asked for; the plain twin races."""
    from gpurace.frontend.numba_kernels import VOLATILE_DROPPED, VOLATILE_NOT_ATOMIC

    values = np.random.default_rng(3).random(128).astype(np.float32)
    best = np.zeros(1, np.float32)
    report = gpurace.numba.check(kernels["float_max_atomic"].largest, 2, 64, values, best)
    assert report.clean and report.stats[VOLATILE_DROPPED] >= 1 and best[0] == values.max()
    best[:] = 0
    strict = gpurace.numba.check(kernels["float_max_atomic"].largest, 2, 64, values, best, model="cuda")
    assert {(f.kind, f.severity, f.cause) for f in strict.findings} == {("data-race", "warning", VOLATILE_NOT_ATOMIC)}
    racy = gpurace.numba.check(kernels["float_max_plain"].largest, 2, 64, values, np.zeros(1, np.float32))
    assert sorted(sites(racy)) == [("data-race", "global", [15, 16], {"float_max_plain.py"}), ("data-race", "global", [16, 16], {"float_max_plain.py"})]


def test_intra_warp_race(kernels) -> None:
    x = np.arange(32, dtype=np.float32)
    report = gpurace.numba.check(kernels["warp_shift"].shift_left, 1, 32, x, np.zeros(32, np.float32))
    assert sites(report) == [("data-race", "shared", [16, 17], {"warp_shift.py"})]
    assert "same warp" in report.findings[0].cause


def test_two_dimensional_array_and_scalars(kernels) -> None:
    """Shape and strides reach the kernel in Numba's ABI: the result equals NumPy's."""
    m = np.arange(12 * 16, dtype=np.float64).reshape(12, 16)
    expected = m * 0.5 + np.arange(12)[:, None]
    report = gpurace.numba.check(kernels["matrix_scale"].scale_rows, (2, 2), (8, 8), m, 12, 0.5, True)
    assert report.clean
    assert np.array_equal(m, expected)
    untouched = np.ones((12, 16))
    gpurace.numba.check(kernels["matrix_scale"].scale_rows, (2, 2), (8, 8), untouched, 12, 0.5, False)
    assert np.array_equal(untouched, np.ones((12, 16)))


def test_findings_name_the_python_file_and_lines(kernels) -> None:
    x, out = np.arange(64, dtype=np.float32), np.zeros(4, np.float32)
    text = report_text(gpurace.numba.check(kernels["device_function_store"].last_writer, 1, 64, x, out))
    assert "device_function_store.py:11:1: error: data race on global memory (out[+0])" in text
    assert "    a[i] = v" in text  # the Python line itself
    assert re.search(r"in device_function_store::store inlined from \S*device_function_store\.py:20:", text)
    assert "[abi:" not in text


def test_tiled_matmul(kernels) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.random((16, 16)).astype(np.float32), rng.random((16, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    assert gpurace.numba.check(kernels["matmul_tiled"].matmul, (2, 2), (8, 8), a, b, c).clean
    assert np.allclose(c, a @ b, rtol=1e-5)


def test_other_atomics(kernels) -> None:
    values = np.random.default_rng(4).integers(-1000, 1000, 128).astype(np.int32)
    out = np.array([-(2**31), 2**31 - 1, 0, 0, 0], np.int32)
    assert gpurace.numba.check(kernels["atomic_ops"].atomic_ops, 2, 64, values, out).clean
    assert out[0] == values.max() and out[1] == values.min() and out[2] == 7
    assert 1 <= out[3] <= 128  # the first thread to swap wrote its index + 1
    assert out[4] == np.count_nonzero(values % 2 == 0)


def test_api_refusals(kernels) -> None:
    from gpurace.errors import UserError

    kernel = kernels["histogram_atomic"].histogram
    with pytest.raises(UserError, match="C-contiguous"):
        gpurace.numba.check(kernel, 1, 32, np.zeros(64, np.int32)[::2], np.zeros(8, np.int32))
    with pytest.raises(UserError, match="takes 2 argument"):
        gpurace.numba.check(kernel, 1, 32, np.zeros(64, np.int32))
    with pytest.raises(UserError, match="not a @cuda.jit kernel"):
        gpurace.numba.check(print, 1, 32)


def test_warp_shuffle_sum(kernels) -> None:
    x = np.arange(128, dtype=np.float32)
    out = np.zeros(1, np.float32)
    assert gpurace.numba.check(kernels["warp_shuffle_sum"].warp_sum, 2, 64, x, out).clean
    assert out[0] == x.sum()


# --------------------------------------------------------------------------
# gpurace.numba.simulate
# --------------------------------------------------------------------------


@needs_numba
def test_simulate_runs_launches_on_device_arrays() -> None:
    """Host code as written for a GPU: a kernel with an explicit signature (compiled at launch, not at import),
    cuda.to_device, a launch, cuda.synchronize, copy_to_host."""
    from numba import cuda

    real = cuda.to_device, cuda.jit
    with gpurace.numba.simulate() as simulation:
        module = import_kernel("explicit_signature")
        x = np.arange(100, dtype=np.float32)
        d_x = cuda.to_device(x)
        module.mul[2, 64](d_x, 100, 0.5)
        cuda.synchronize()
        assert np.array_equal(d_x.copy_to_host(), x * 0.5)
        host = np.zeros(100, np.float32)
        d_x.copy_to_host(host)
        assert np.array_equal(host, x * 0.5)
    assert [(r.kernel, r.clean) for r in simulation.reports] == [("mul", True)]
    assert (cuda.to_device, cuda.jit) == real


def test_simulate_answers_for_the_simulated_device() -> None:
    """Host code asks the device before it launches: its compute capability is the architecture kernels are
    compiled for, its limits those of every CUDA device; the real functions are back after the block."""
    from numba import cuda
    from numba.cuda.cudadrv import devices

    real = cuda.get_current_device, cuda.current_context, devices.get_context
    with gpurace.numba.simulate(arch="sm_80"):
        device = cuda.get_current_device()
        assert device.compute_capability == (8, 0) and device.name == b"gpurace simulated sm_80"
        assert cuda.current_context().device is device is devices.get_context().device
        assert (device.WARP_SIZE, device.MAX_THREADS_PER_BLOCK, device.MULTIPROCESSOR_COUNT) == (32, 1024, 1)
        cuda.current_context().synchronize()
    with gpurace.numba.simulate():
        assert cuda.get_current_device().compute_capability == (7, 5)
    assert (cuda.get_current_device, cuda.current_context, devices.get_context) == real


def test_simulate_inspect_asm_gives_the_simulated_ptx(kernels) -> None:
    """GPU test suites check code generation with `inspect_asm`: by signature (an explicit one compiles), or
    all of them, keyed as Numba keys them; the PTX is the one the launches simulate."""
    from numba import cuda, float32, int32

    with gpurace.numba.simulate():
        module = import_kernel("explicit_signature")
        assert set(module.mul.inspect_asm()) == {(float32[::1], int32, float32)}
        histogram = kernels["histogram_atomic"].histogram
        values, bins = np.arange(64, dtype=np.int32), np.zeros(8, np.int32)
        histogram[1, 64](values, bins)
        (ptx,) = histogram.inspect_asm().values()
        assert "atom.global.add" in ptx and ptx == histogram.inspect_asm((int32[::1], int32[::1]))


def test_simulate_inspect_llvm_gives_numba_s_ir(kernels) -> None:
    """Tests of code generation also read `inspect_llvm`: Numba's LLVM IR, keyed as `inspect_asm`, with the
    intrinsic calls the PTX was generated from."""
    from numba import int32

    with gpurace.numba.simulate():
        histogram = kernels["histogram_atomic"].histogram
        histogram[1, 64](np.arange(64, dtype=np.int32), np.zeros(8, np.int32))
        irs = histogram.inspect_llvm()
        assert set(irs) == set(histogram.inspect_asm()) == {(int32[::1], int32[::1])}
        (ir,) = irs.values()
        assert "atomicrmw add" in ir and "define" in ir
        assert ir == histogram.inspect_llvm((int32[::1], int32[::1]))


def test_simulate_raises_numba_s_typing_error_at_decoration() -> None:
    """A kernel with an explicit signature compiles where it is decorated, as on a GPU: a test that expects
    Numba's TypingError there gets it; the launch reuses the compiled kernel."""
    from numba import cuda
    from numba.core.errors import TypingError

    def vote(mask, out):
        everyone = cuda.all_sync(mask[0], 1)
        if cuda.threadIdx.x == 0:
            out[0] = everyone

    with gpurace.numba.simulate() as simulation:
        with pytest.raises(TypingError, match="all_sync"):
            cuda.jit("void(float32[::1], int32[::1])")(vote)
        kernel = cuda.jit("void(uint32[::1], int32[::1])")(vote)
        assert len(gpurace.numba._compiled[kernel]) == 1
        out = np.zeros(1, np.int32)
        kernel[1, 32](np.full(1, 0xFFFFFFFF, np.uint32), out)
    assert out[0] == 1 and simulation.reports[0].clean


def test_simulate_raises_with_the_report(kernels) -> None:
    from numba import cuda

    values = np.arange(128, dtype=np.int32)
    with pytest.raises(gpurace.numba.RacesFound) as raised:
        with gpurace.numba.simulate():
            bins = cuda.device_array(8, np.int32)
            kernels["histogram_plain"].histogram[2, 64](cuda.to_device(values), bins)
    assert re.search(r"histogram_plain\.py:13:1: error: data race on global memory \(bins\[", str(raised.value))
    assert len(raised.value.reports) == 1


@needs_numba
def test_readme_example_runs(tmp_path) -> None:
    """The README's example, run from a file of its own (Numba reads a kernel's source for its line information)."""
    readme = (KERNELS.parent.parent.parent / "README.md").read_text()
    section = readme[readme.index("## Python kernels (Numba)") :]
    (example,) = re.findall(r"```py\n(.*?)```", section[: section.index("\n## ", 1)], flags=re.S)
    script = tmp_path / "readme_example.py"
    script.write_text(example)
    runpy.run_path(str(script))


@needs_numba
def test_pytest_plugin_runs_a_gpu_test_module_unchanged() -> None:
    suite = KERNELS / "host_code_suite.py"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "gpurace.numba.pytest_plugin", "-p", "no:cacheprovider", "-q", str(suite)],
        capture_output=True, text=True, cwd=suite.parent,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 2 passed" in result.stdout
    assert "FAILED host_code_suite.py::test_racy_histogram" in result.stdout
    assert "RacesFound: host_code_suite.py:25:1: error: data race on global memory (bins[+0])" in result.stdout
