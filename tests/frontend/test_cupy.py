"""CuPy kernels: `gpurace.cupy.check` and `gpurace.cupy.simulate()` on gpurace's stand-ins and on CuPy's own classes.

The kernels are the CUDA sources in tests/kernels/cupy/ (each also a corpus
file with its own header, which `test_expectations.py` runs from the command
line); here their text becomes a `RawKernel`, as a CuPy program holds it. The
stand-ins need no CuPy; the cases with CuPy's own `RawKernel`/`RawModule`
(which import without a GPU) skip when CuPy is not installed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gpurace.cupy
from corpus import read_header
from gpurace.errors import UserError

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "cupy"
HAVE_CUPY = importlib.util.find_spec("cupy") is not None
needs_cupy = pytest.mark.skipif(not HAVE_CUPY, reason="CuPy is not installed (pip install -e '.[test,cupy]')")


def source(name: str) -> str:
    return (KERNELS / f"{name}.cu").read_text()


def kernel(name: str, entry: str, options=()) -> gpurace.cupy.RawKernel:
    return gpurace.cupy.RawKernel(source(name), entry, options=options)


def sites(report) -> list[tuple]:
    """(kind, space, both lines) of each finding, with the file the lines are in."""
    return [
        (f.kind, f.space, sorted(s.loc.line for s in f.sites), {Path(s.loc.file).name for s in f.sites})
        for f in report.findings
    ]


def expected_sites(name: str) -> list[tuple]:
    """The findings the kernel file's header expects, as `sites` gives them (in the cache's copy of the source)."""
    found = []
    for line in read_header(KERNELS / f"{name}.cu").expect:
        if line != "clean":
            kind, space, first, second = line.split()
            found.append((kind, space, sorted([int(first), int(second)])))
    return found


def assert_header_findings(report, name: str) -> None:
    assert [s[:3] for s in sites(report)] == expected_sites(name)
    for *_, files in sites(report):
        assert len(files) == 1 and next(iter(files)).startswith(f"{report.kernel}-")  # the cache's copy of the source


def test_reduction_is_clean_and_sums() -> None:
    x = np.random.default_rng(1).random(256).astype(np.float32)
    out = np.zeros(1, np.float32)
    report = gpurace.cupy.check(kernel("reduce_shared", "block_sum"), (2,), (128,), (x, out, np.int32(256)))
    assert report.clean
    assert out[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)
    assert report.launch["args"] == ["float32[256]", "float32[1]", "int32(256)"]
    assert Path(report.source).read_text() == source("reduce_shared")  # the lines findings name are the string's


def test_reduction_missing_barrier_races_on_shared_memory() -> None:
    x, out = np.ones(256, np.float32), np.zeros(1, np.float32)
    report = gpurace.cupy.check(kernel("reduce_missing_barrier", "block_sum"), 2, 128, (x, out, 256))
    assert_header_findings(report, "reduce_missing_barrier")
    assert expected_sites("reduce_missing_barrier")


def test_histograms() -> None:
    values = np.random.default_rng(2).integers(0, 1000, 128).astype(np.int32)
    bins = np.zeros(8, np.int32)
    report = gpurace.cupy.check(kernel("histogram_atomic", "histogram"), 2, 64, (values, bins, 128, 8))
    assert report.clean
    assert np.array_equal(bins, np.bincount(values % 8, minlength=8))
    racy = gpurace.cupy.check(kernel("histogram_plain", "histogram"), 2, 64, (values, np.zeros(8, np.int32), 128, 8))
    assert_header_findings(racy, "histogram_plain")
    assert expected_sites("histogram_plain")


def test_intra_warp_race() -> None:
    x, y = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    report = gpurace.cupy.check(kernel("warp_shift", "shift_left"), 1, 32, (x, y))
    assert_header_findings(report, "warp_shift")
    assert "same warp" in report.findings[0].cause


def test_options_gpurace_honours() -> None:
    code = """
    #include "scale.h"
    extern "C" __global__ void scale(float* x) { x[threadIdx.x] *= FACTOR * EXTRA; }
    """
    include = KERNELS / "include"
    x = np.ones(32, np.float32)
    options = ("-DEXTRA=3", "-I", str(include), "--std=c++14", "-arch=sm_80", "-lineinfo")
    report = gpurace.cupy.check(gpurace.cupy.RawKernel(code, "scale", options=options), 1, 32, (x,))
    assert report.clean and np.all(x == 6)  # FACTOR is 2 in scale.h


@pytest.mark.parametrize(
    "options, message",
    [
        (("--use_fast_math",), "option '--use_fast_math' is not supported"),
        (("-std=c++20",), r"C\+\+20 is not supported"),
        (("-DX\nY",), "expected NAME or NAME=VALUE"),
        (("-I", "/no/such/directory"), "no such directory"),
        (("-arch=gfx90a",), "expected a GPU architecture"),
        (("-D",), "needs a value"),
    ],
)
def test_other_options_are_refused(options, message) -> None:
    with pytest.raises(UserError, match=message):
        gpurace.cupy.check(kernel("warp_shift", "shift_left", options), 1, 32, (np.zeros(32, np.float32),) * 2)


def test_scalars_are_passed_as_cupy_passes_them() -> None:
    """A Python float is a double in CuPy: a GPU would read the wrong bytes for a float parameter."""
    code = 'extern "C" __global__ void fill(float* x, float v, long long n) { if (threadIdx.x < n) x[threadIdx.x] = v; }'
    fill = gpurace.cupy.RawKernel(code, "fill")
    x = np.zeros(32, np.float32)
    assert gpurace.cupy.check(fill, 1, 32, (x, np.float32(1.5), 16)).clean
    assert np.all(x[:16] == 1.5) and np.all(x[16:] == 0)
    with pytest.raises(UserError, match=r"CuPy passes a Python float as 8 bytes of float64.*numpy\.float32"):
        gpurace.cupy.check(fill, 1, 32, (x, 1.5, 16))
    with pytest.raises(UserError, match=r"CuPy passes numpy\.int32 as 4 bytes.*an int or numpy\.int64/uint64"):
        gpurace.cupy.check(fill, 1, 32, (x, np.float32(1), np.int32(16)))
    with pytest.raises(UserError, match="takes 3 argument"):
        gpurace.cupy.check(fill, 1, 32, (x, np.float32(1)))
    with pytest.raises(UserError, match="C-contiguous"):
        gpurace.cupy.check(fill, 1, 32, (np.zeros(64, np.float32)[::2], np.float32(1), 16))


def test_half_and_size_t_parameters() -> None:
    """`__half` is two opaque bytes in PTX and `size_t` 64 bits like a pointer: the arguments say which."""
    code = r"""
    #include <cuda_fp16.h>
    extern "C" __global__ void to_half(const float* x, __half* y, size_t n, __half bias) {
        size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
        if (i < n) y[i] = __hadd(__float2half(x[i]), bias);
    }
    """
    x, y = np.arange(100, dtype=np.float32), np.zeros(100, np.float16)
    report = gpurace.cupy.check(gpurace.cupy.RawKernel(code, "to_half"), 1, 128, (x, y, 100, np.float16(0.5)))
    assert report.clean and np.array_equal(y, (x + 0.5).astype(np.float16))
    assert report.launch["args"] == ["float32[100]", "float16[100]", "100", "float16(0.5)"]
    with pytest.raises(UserError, match="8 bytes given for a 2-byte value"):
        gpurace.cupy.check(gpurace.cupy.RawKernel(code, "to_half"), 1, 128, (x, y, 100, 0.5))


def test_constant_memory_set_as_get_global_would() -> None:
    code = r"""
    __constant__ float table[4];
    extern "C" __global__ void lookup(const int* idx, float* out) { out[threadIdx.x] = table[idx[threadIdx.x] % 4]; }
    """
    lookup = gpurace.cupy.RawModule(code=code).get_function("lookup")
    out = np.zeros(32, np.float32)
    table = np.array([1, 2, 3, 4], np.float32)
    report = gpurace.cupy.check(lookup, 1, 32, (np.arange(32, dtype=np.int32), out), global_vars={"table": table.tobytes()})
    assert report.clean and np.array_equal(out, np.tile(table, 8))


def test_template_kernel_through_name_expressions() -> None:
    code = """
    template <typename T>
    __global__ void twice(T* x) { x[threadIdx.x] += x[threadIdx.x]; }
    """
    module = gpurace.cupy.RawModule(code=code, name_expressions=["twice<int>", "twice<double>"])
    x = np.arange(32, dtype=np.float64)
    assert gpurace.cupy.check((module, "twice<double>"), 1, 32, (x,)).clean
    assert np.array_equal(x, 2 * np.arange(32))
    assert gpurace.cupy.check(module.get_function("twice<int>"), 1, 32, (np.ones(32, np.int32),)).clean


def test_module_from_a_ptx_file(tmp_path) -> None:
    """`RawModule(path=...)` of PTX with line information: findings name the lines of the source it came from."""
    from gpurace.frontend.compile import compile_to_ptx

    ptx = tmp_path / "warp_shift.ptx"
    ptx.write_text(compile_to_ptx(KERNELS / "warp_shift.cu").text)
    module = gpurace.cupy.RawModule(path=str(ptx))
    x, y = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    report = gpurace.cupy.check(module.get_function("shift_left"), 1, 32, (x, y))
    assert sites(report) == [(*site, {"warp_shift.cu"}) for site in expected_sites("warp_shift")]
    with pytest.raises(UserError, match="cubin holds no PTX"):
        gpurace.cupy.check((gpurace.cupy.RawModule(path=str(tmp_path / "k.cubin")), "k"), 1, 1, ())


def test_kernels_that_are_not_raw_kernels_are_refused() -> None:
    class ReductionKernel:  # named as CuPy's, but not CuPy's
        pass

    class ElementwiseKernel:
        pass

    with pytest.raises(UserError, match="not a CuPy RawKernel"):
        gpurace.cupy.check(ReductionKernel(), 1, 1, ())
    with pytest.raises(UserError, match="not a CuPy RawKernel"):
        gpurace.cupy.check(ElementwiseKernel(), 1, 1, ())
    with pytest.raises(UserError, match="not a CuPy RawKernel"):
        gpurace.cupy.check(print, 1, 1, ())
    with pytest.raises(UserError, match="cupy/complex.cuh"):
        gpurace.cupy.check(gpurace.cupy.RawKernel("", "k", translate_cucomplex=True), 1, 1, ())
    with pytest.raises(UserError, match="launches only inside"):
        kernel("warp_shift", "shift_left")((1,), (32,), (np.zeros(32, np.float32),) * 2)


def test_simulate_collects_the_reports_of_every_launch() -> None:
    values = np.arange(128, dtype=np.int32)
    bins = np.zeros(8, np.int32)
    with gpurace.cupy.simulate() as sim:
        atomic = kernel("histogram_atomic", "histogram")
        atomic((2,), (64,), (values, bins, np.int32(128), np.int32(8)))
        plain = gpurace.cupy.RawModule(code=source("histogram_plain")).get_function("histogram")
        plain((2,), (64,), (values, np.zeros(8, np.int32), np.int32(128), np.int32(8)))
    assert [r.kernel for r in sim.reports] == ["histogram", "histogram"]
    assert sim.reports[0].clean and np.array_equal(bins, np.full(8, 16))
    assert [s[:3] for s in sites(sim.reports[1])] == expected_sites("histogram_plain")
    assert sim.findings == sim.reports[1].findings


@needs_cupy
def test_cupy_raw_kernel_and_module() -> None:
    import cupy

    x = np.random.default_rng(4).random(256).astype(np.float32)
    out = np.zeros(1, np.float32)
    raw = cupy.RawKernel(source("reduce_shared"), "block_sum", options=("-std=c++17",))
    assert gpurace.cupy.check(raw, 2, 128, (x, out, np.int32(256))).clean
    assert out[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)
    module = cupy.RawModule(code=source("reduce_missing_barrier"))
    report = gpurace.cupy.check((module, "block_sum"), 2, 128, (x, np.zeros(1, np.float32), np.int32(256)))
    assert [s[:3] for s in sites(report)] == expected_sites("reduce_missing_barrier")


@needs_cupy
def test_simulate_replaces_cupys_classes_in_the_block() -> None:
    import cupy

    real = cupy.RawKernel
    x, y = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    with gpurace.cupy.simulate() as sim:
        cupy.RawKernel(source("warp_shift"), "shift_left")((1,), (32,), (x, y))
    assert cupy.RawKernel is real
    assert [s[:3] for s in sites(sim.reports[0])] == expected_sites("warp_shift")
