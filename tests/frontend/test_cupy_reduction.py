"""CuPy's `ReductionKernel` under `gpurace.cupy.check` and `simulate()`: the source CuPy generates, launched as CuPy
launches it, with results compared to NumPy's.

The kernels are written as a CuPy program would write them. CuPy's own
template (a shared-memory tree reduction) is race-free; the racy kernels
write a raw output from `map_expr` or `post_map_expr`, which many threads
run. Lines are lines of the generated source (`frontend.cupy_reduction`),
found here by their text. CuPy hands some reductions to CUB unless its
reduction accelerators are cleared (`frontend.cupy_reduction`): the cases
clear them, and one checks the refusal when they are not. The cases skip
when CuPy is not installed (it imports without a GPU).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gpurace.cupy
from gpurace.errors import UserError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cupy") is None, reason="CuPy is not installed (pip install -e '.[test,cupy]')"
)

SUM = ("T x", "T y", "x", "a + b", "y = a", "0", "total")
"""CuPy's documented example: a plain sum."""

DOT = ("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "dot")
"""Two inputs, broadcast together."""

MEAN = ("T x", "T y", "x", "a + b", "y = a / (_in_ind.size() / _out_ind.size())", "0", "mean_double", "double")
"""Sums in double whatever the input type (`reduce_type`), divided by the elements reduced per output."""

LAST_OUTPUT = ("T x", "T y, raw T last", "x", "a + b", "y = a, last[0] = a", "0", "sum_and_last")
"""Every output's thread also stores its sum into last[0]: racy when there are several outputs."""

SEEN = ("T x", "T y, raw T seen", "(seen[0] = x, x)", "a + b", "y = a", "0", "sum_and_seen")
"""Every thread stores each input it maps into seen[0]: racy."""

NO_IDENTITY = ("T x", "T y", "x", "a + b", "y = a", None, "no_identity")
"""A sum without an identity: an empty input has no result."""

RAW_INPUT = ("raw T x, T w", "T y", "w", "a + b", "y = a", "0", "raw_in")
"""A raw input beside the reduced one: CuPy cannot transpose it to reduce a last axis."""


@pytest.fixture(autouse=True)
def without_cub():
    """CuPy's default hands large contiguous reductions to CUB; the kernel gpurace checks is the one without it."""
    from cupy._core import _accelerator

    saved = _accelerator.get_reduction_accelerators()
    _accelerator.set_reduction_accelerators([])
    yield
    _accelerator.set_reduction_accelerators(saved)


def reduction(spec):
    import cupy

    return cupy.ReductionKernel(*spec)


def line_of(report, text: str) -> int:
    """The line of the report's generated source that holds `text`."""
    return next(n for n, line in enumerate(Path(report.source).read_text().splitlines(), 1) if text in line)


def sites(report) -> list[tuple]:
    """(kind, space, both lines, allocation) of each finding."""
    return [(f.kind, f.space, sorted(s.loc.line for s in f.sites), f.address.allocation) for f in report.findings]


def test_full_reduction_is_clean_and_sums() -> None:
    x = np.arange(1000, dtype=np.int64)
    y = np.zeros((), np.int64)
    report = gpurace.cupy.check(reduction(SUM), x, y)
    assert report.findings == [] and y == x.sum()
    assert report.launch["grid"] == [1, 1, 1] and report.launch["block"] == [512, 1, 1]  # CuPy's _get_block_specs
    assert report.launch["args"] == ["int64[1000]", "int64[]", "CIndexer[1000]", "CIndexer[]", "int32(1)"]
    assert report.launch["generated_from"] == "ReductionKernel total"
    assert Path(report.source).name.startswith("total-") and "__syncthreads()" in Path(report.source).read_text()


@pytest.mark.parametrize(
    "shape, axis, keepdims",
    [((6, 10), 1, False), ((6, 10), 0, False), ((3, 4, 5), (0, 2), False), ((3, 4, 5), 1, True), ((3, 4, 5), None, True)],
)
def test_axes_and_keepdims_reduce_as_numpy_does(shape, axis, keepdims) -> None:
    x = np.random.default_rng(5).integers(-50, 50, shape).astype(np.int32)
    expected = x.sum(axis=axis, keepdims=keepdims)
    y = np.zeros(expected.shape, np.int32)
    report = gpurace.cupy.check(reduction(SUM), x, y, axis=axis, keepdims=keepdims)
    assert report.findings == [] and np.array_equal(y, expected)


def test_strided_inputs_and_broadcasting() -> None:
    """A transposed view and a column broadcast against it: the CArrays CuPy passes have their strides."""
    base = np.random.default_rng(6).random((8, 12)).astype(np.float64)
    x, w = base.T[::2], np.linspace(1, 2, 4)[:, None]  # x is (6, 8) with strides (16, 96); w is (4, 1)
    x = x[:4]
    z = np.zeros(8)
    report = gpurace.cupy.check(reduction(DOT), x, w, z, axis=0)
    assert report.findings == [] and np.allclose(z, (x * w).sum(axis=0), rtol=1e-12)
    assert report.launch["args"][0] == "float64[4, 8] strides [16, 96]"


def test_reversed_and_sliced_input_reduces_over_its_own_elements() -> None:
    """Negative strides: the CArray's pointer is the view's first element, inside the memory the array spans."""
    base = np.arange(90, dtype=np.int64).reshape(9, 10)
    x = base[::-2, 1::3]  # (5, 3)
    y = np.zeros(5, np.int64)
    report = gpurace.cupy.check(reduction(SUM), x, y, axis=1)
    assert report.findings == [] and np.array_equal(y, x.sum(axis=1))
    assert np.array_equal(base, np.arange(90).reshape(9, 10))  # the input's memory is as it was


def test_reduce_type_and_index_sizes_in_post_map() -> None:
    x = np.random.default_rng(7).random((5, 40)).astype(np.float32)
    y = np.zeros(5, np.float32)
    report = gpurace.cupy.check(reduction(MEAN), x, y, axis=1)
    assert report.findings == [] and np.allclose(y, x.astype(np.float64).mean(axis=1), rtol=1e-6)
    assert "typedef double _type_reduce;" in Path(report.source).read_text()


def test_simulate_returns_the_result_cupy_returns() -> None:
    import cupy

    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    with gpurace.cupy.simulate() as sim:
        kernel = cupy.ReductionKernel(*SUM)
        y = kernel(x, axis=(0, 2))
        kept = kernel(x, axis=2, keepdims=True)
        given = np.zeros(4, np.float32)
        same = kernel(x, axis=(0, 2), out=given)
    assert y.dtype == np.float32 and np.array_equal(y, x.sum(axis=(0, 2)))
    assert kept.shape == (3, 4, 1) and np.array_equal(kept, x.sum(axis=2, keepdims=True))
    assert same is given and np.array_equal(given, y)
    assert [r.clean for r in sim.reports] == [True, True, True]
    assert sim.reports[0].launch["args"][1] == "float32[4] (allocated)"
    assert cupy.ReductionKernel is cupy._core._reduction.ReductionKernel  # CuPy's own class again after the block
    with pytest.raises(UserError, match="launches only inside it"):
        kernel(x)


def test_post_map_expr_writing_one_raw_element_races() -> None:
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    y, last = np.zeros(8, np.float32), np.zeros(1, np.float32)
    report = gpurace.cupy.check(reduction(LAST_OUTPUT), x, y, last, axis=1)
    post_map = line_of(report, "POST_MAP(_s);")  # the macro's use: post_map_expr is its body
    assert sites(report) == [("data-race", "global", [post_map, post_map], "last")]
    assert {Path(s.loc.file).name.split("-")[0] for s in report.findings[0].sites} == {"sum_and_last"}
    assert report.launch["generated_from"] == "ReductionKernel sum_and_last"
    assert np.array_equal(y, x.sum(axis=1)) and last[0] in y


def test_one_output_makes_post_map_expr_clean() -> None:
    """With one output only one thread runs POST_MAP: the same kernel is clean."""
    x, y, last = np.arange(48, dtype=np.float32), np.zeros((), np.float32), np.zeros(1, np.float32)
    report = gpurace.cupy.check(reduction(LAST_OUTPUT), x, y, last)
    assert report.findings == [] and y == last[0] == x.sum()


def test_map_expr_writing_one_raw_element_races() -> None:
    x, y, seen = np.arange(40, dtype=np.float32), np.zeros((), np.float32), np.zeros(1, np.float32)
    report = gpurace.cupy.check(reduction(SEEN), x, y, seen)
    mapped = line_of(report, "(seen[0] = x, x)")
    assert sites(report) == [("data-race", "global", [mapped, mapped], "seen")]
    assert y == x.sum()


def test_cub_reductions_are_refused_with_the_way_to_check_them() -> None:
    from cupy._core import _accelerator

    _accelerator.set_reduction_accelerators(["cub"])
    with pytest.raises(UserError, match=r"CuPy would run this call with CUB's block reduction.*set_reduction_accelerators"):
        gpurace.cupy.check(reduction(SUM), np.arange(1000, dtype=np.float32), np.zeros((), np.float32))
    small = np.zeros((), np.float32)  # fewer than 128 elements reduced: CuPy's own kernel even with CUB on
    assert gpurace.cupy.check(reduction(SUM), np.arange(100, dtype=np.float32), small).clean and small == 4950


@pytest.mark.parametrize(
    "spec, args, kwargs, message",
    [
        (SUM, (np.zeros(4, np.float32),) * 3, {}, "takes 1 input(s) and 1 output(s), 3 given"),
        (SUM, (np.zeros((2, 3), np.float32), np.zeros(3, np.float32)), {"axis": 1}, "output y has the shape (3,), not"),
        (SUM, (np.zeros((2, 3), np.float32), np.zeros(2, np.float32)), {"axis": 2}, "AxisError"),
        (SUM, (np.zeros(4, np.float32),), {"out": np.zeros((), np.int32)}, "TypeError: Type is mismatched"),
        (DOT, (np.zeros(4), np.zeros(5), np.zeros(())), {}, "could not be broadcast together with shapes (4,) (5,)"),
        (NO_IDENTITY, (np.zeros(0), np.zeros(())), {}, "which has no identity"),
        (LAST_OUTPUT, (np.zeros((2, 3)),), {"axis": 1}, "a raw output's size is unknown"),
        (RAW_INPUT, (np.zeros(3), np.zeros((2, 3)), np.zeros(2)), {"axis": 1}, "with a raw input"),
        (SUM, (np.zeros((2, 3)), np.zeros(2)), {"axis": 1, "out": np.zeros(2)}, "out= is for a kernel of one output"),
    ],
)
def test_bad_calls_are_user_errors(spec, args, kwargs, message) -> None:
    with pytest.raises(UserError) as error:
        gpurace.cupy.check(reduction(spec), *args, **kwargs)
    assert message in str(error.value)
