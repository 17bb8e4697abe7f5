"""CuPy's `ElementwiseKernel` under `gpurace.cupy.check`: the source CuPy generates, launched as CuPy launches it.

The kernels are written here as a CuPy program would write them. A pure
elementwise map cannot race (each thread owns element `i`); the racy ones
index `raw` arrays: every thread stores to one element, or reads the
element the next thread writes. Lines are lines of the operation string
(`frontend.cupy_elementwise`), found here by the text on them. The cases
skip when CuPy is not installed (it imports without a GPU).
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

MAP = ("T x, T y", "T z", "z = x * y + 1", "fma_one")
"""A pure map: clean whatever the launch."""

LAST_WINS = ("T x", "raw T total", "total[0] = x", "last_wins")
"""Every thread stores its element into total[0]: racy between any two threads."""

SHIFT_ADD = (
    "T x",
    "raw T a",
    "T next = i + 1 < _ind.size() ? a[i + 1] : T(0);\na[i] = next + x;",
    "shift_add",
)
"""Thread i reads a[i + 1] (line 1), which thread i + 1 writes (line 2)."""

ATOMIC_SUM = ("T x", "raw T total", "atomicAdd(&total[0], x)", "atomic_sum")
"""Every thread adds into total[0] with an atomic: clean, and the sum."""

REVERSE = ("raw T x", "T z", "z = x[_ind.size() - 1 - i]", "reverse")
"""Reads a raw input at another index, writes only element i: clean."""

SHARED = np.zeros(8, np.float32)
"""Memory two arguments of one call view."""


def elementwise(spec, **kwargs):
    import cupy

    return cupy.ElementwiseKernel(*spec, **kwargs)


def line_of(operation: str, text: str) -> int:
    """The line of the operation string that holds `text` (1 for its first line)."""
    return next(n for n, line in enumerate(operation.splitlines(), 1) if text in line)


def sites(report) -> list[tuple]:
    """(kind, space, both lines, file names) of each finding."""
    return [
        (f.kind, f.space, sorted(s.loc.line for s in f.sites), {Path(s.loc.file).name for s in f.sites})
        for f in report.findings
    ]


def test_pure_map_is_clean_and_computes() -> None:
    x = np.arange(1000, dtype=np.float32)
    y = np.linspace(0, 1, 1000, dtype=np.float32)
    z = np.zeros(1000, np.float32)
    report = gpurace.cupy.check(elementwise(MAP), x, y, z)
    assert report.findings == [] and np.allclose(z, x * y + 1, rtol=1e-6, atol=0)  # NVRTC fuses it into one fma
    assert report.launch["block"] == [128, 1, 1] and report.launch["grid"] == [8, 1, 1]  # ceil(1000 / 128)
    assert report.launch["args"] == ["float32[1000]", "float32[1000]", "float32[1000]", "CIndexer[1000]"]


def test_every_thread_storing_one_raw_element_races() -> None:
    x, total = np.arange(300, dtype=np.float32), np.zeros(1, np.float32)
    report = gpurace.cupy.check(elementwise(LAST_WINS), x, total)
    (site,) = sites(report)
    assert site[:3] == ("data-race", "global", [1, 1])
    (name,) = site[3]  # the operation's own file in the cache: NAME-HASH-operation.cu
    assert name.startswith(f"{report.kernel}-") and name.endswith("-operation.cu")
    assert Path(report.findings[0].sites[0].loc.file).read_text() == LAST_WINS[2]
    assert report.findings[0].address.allocation == "total"
    assert total[0] in x


def test_each_schedule_starts_from_the_callers_arrays() -> None:
    """A raw array is a buffer inside a struct argument (`CArray`): other schedules run on copies of it."""
    x, a = np.arange(300, dtype=np.float32), np.ones(300, np.float32)
    report = gpurace.cupy.check(elementwise(SHIFT_ADD), x, a, schedules=3)
    assert len(report.stats["schedules"]) == 3 and [s[:2] for s in sites(report)] == [("data-race", "global")]
    assert np.array_equal(a[:-1], x[:-1] + 1) and a[-1] == x[-1]  # schedule 0 ran the threads in order


def test_reading_the_next_threads_element_races_between_two_lines() -> None:
    x, a = np.arange(300, dtype=np.float32), np.ones(300, np.float32)
    report = gpurace.cupy.check(elementwise(SHIFT_ADD), x, a, block_size=64)
    operation = SHIFT_ADD[2]
    read, write = line_of(operation, "a[i + 1]"), line_of(operation, "a[i] =")
    assert [s[:3] for s in sites(report)] == [("data-race", "global", sorted([read, write]))]
    assert report.launch["block"] == [64, 1, 1] and report.launch["grid"] == [5, 1, 1]


def test_atomics_on_a_raw_output_are_clean() -> None:
    x, total = np.arange(500, dtype=np.int32), np.zeros(1, np.int32)
    report = gpurace.cupy.check(elementwise(ATOMIC_SUM), x, total)
    assert report.findings == [] and total[0] == x.sum()


def test_raw_input_read_at_another_index_is_clean() -> None:
    x, z = np.arange(200, dtype=np.float64), np.zeros(200, np.float64)
    report = gpurace.cupy.check(elementwise(REVERSE), x, z)
    assert report.findings == [] and np.array_equal(z, x[::-1])


def test_multidimensional_arrays_scalars_and_loop_code() -> None:
    """2-D arrays are one loop of all their elements (CuPy's `reduce_dims`); a Python scalar takes the type
    CuPy gives it; `loop_prep` and `after_loop` run in every thread, outside the loop."""
    kernel = elementwise(
        ("T x, T scale", "T z", "z = x * scale + offset", "scaled"),
        loop_prep="const T offset = 3", after_loop="",
    )
    x, z = np.arange(24, dtype=np.float32).reshape(4, 6), np.zeros((4, 6), np.float32)
    report = gpurace.cupy.check(kernel, x, 2.0, z)
    assert report.findings == [] and np.array_equal(z, x * 2 + 3)
    assert report.launch["args"] == ["float32[4, 6]", "float32(2.0)", "float32[4, 6]", "CIndexer[24]"]
    assert report.launch["block"] == [24, 1, 1]  # fewer threads than block_size: CuPy launches as many as elements


def test_size_runs_a_loop_over_raw_arrays_only() -> None:
    kernel = elementwise(("raw T x", "raw T y", "y[i] = x[i] + x[(i + 1) % _ind.size()]", "ring"))
    x, y = np.arange(64, dtype=np.int64), np.zeros(64, np.int64)
    assert gpurace.cupy.check(kernel, x, y, size=64).findings == []
    assert np.array_equal(y, x + np.roll(x, -1))
    racy = elementwise(("raw T x", "raw T y", "y[i % 8] = x[i]", "fold"))
    assert [s[:3] for s in sites(gpurace.cupy.check(racy, x, np.zeros(8, np.int64), size=64))] == [
        ("data-race", "global", [1, 1])
    ]


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((np.zeros(4, np.float32),) * 3, {}, "takes 1 input(s) and 1 output(s), 3 given"),
        ((np.zeros(4, np.float32), np.zeros(4, np.int32)), {}, "TypeError: Type is mismatched"),
        ((np.zeros(4, np.float32), np.zeros(5, np.float32)), {}, "could not be broadcast together with shapes (4,) (5,)"),
        ((np.zeros((4, 5), np.float32), np.zeros(5, np.float32)), {}, "output y has the shape (5,), not the loop's (4, 5)"),
        ((SHARED[:4], SHARED[2:6]), {}, "arguments x and y share memory"),
        ((np.broadcast_to(np.float32(1), (4,)), np.zeros(4, np.float32)), {}, "x: the array is read-only"),
        ((np.zeros(4, np.float32), 1.5), {}, "argument y: an output must be a NumPy array"),
        ((np.zeros(4, np.float32), np.zeros(4, np.float32)), {"size": 4}, "size= can be used only when every array is raw"),
        ((np.zeros(4, np.float32), np.zeros(4, np.float32)), {"block_size": 0}, "block_size must be a positive number"),
        ((np.zeros(0, np.float32), np.zeros(0, np.float32)), {}, "the loop has no elements"),
        (("text", np.zeros(4, np.float32)), {}, "argument x: expected a NumPy array or a number, not str"),
    ],
)
def test_bad_calls_are_user_errors(args, kwargs, message) -> None:
    with pytest.raises(UserError) as error:
        gpurace.cupy.check(elementwise(("T x", "T y", "y = x", "copy")), *args, **kwargs)
    assert message in str(error.value)


def test_unsupported_compile_options_are_refused_by_name() -> None:
    kernel = elementwise(("T x", "T y", "y = x", "copy"), options=("--use_fast_math",))
    with pytest.raises(UserError, match="option '--use_fast_math' is not supported"):
        gpurace.cupy.check(kernel, np.zeros(4, np.float32), np.zeros(4, np.float32))



def test_reduce_dims_false_keeps_the_arrays_dimensions() -> None:
    """With `reduce_dims=False` the `CIndexer` has the arrays' shape and `_ind.get()` their row and column."""
    kernel = elementwise(("T x", "T z", "z = x + _ind.get()[0] * 100 + _ind.get()[1]", "rows"), reduce_dims=False)
    x, z = np.ones((3, 5), np.int32), np.zeros((3, 5), np.int32)
    report = gpurace.cupy.check(kernel, x, z)
    rows, columns = np.indices((3, 5))
    assert report.findings == [] and np.array_equal(z, 1 + rows * 100 + columns)
    assert report.launch["args"][-1] == "CIndexer[3, 5]"


def test_inputs_of_different_shapes_broadcast_as_in_numpy() -> None:
    """A column, a row and a scalar: CuPy broadcasts the non-raw arrays (stride 0 where a dimension is 1)."""
    x, y = np.arange(4, dtype=np.float32)[:, None], np.arange(6, dtype=np.float32)
    z = np.zeros((4, 6), np.float32)
    report = gpurace.cupy.check(elementwise(MAP), x, y, z)
    assert report.findings == [] and np.array_equal(z, x * y + 1)
    assert report.launch["args"] == ["float32[4, 1]", "float32[6]", "float32[4, 6]", "CIndexer[4, 6]"]


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a[::2],  # every other row
        lambda a: a.T,  # transposed
        lambda a: a[::-1, 1:],  # rows reversed: the view's first element is not the lowest address
    ],
)
def test_strided_views_are_read_and_written_in_place(make) -> None:
    rng = np.random.default_rng(8)
    x = make(rng.random((8, 8)).astype(np.float32))
    y = make(rng.random((8, 8)).astype(np.float32))
    out_memory = np.full((8, 8), -1, np.float32)
    z = make(out_memory)
    report = gpurace.cupy.check(elementwise(MAP), x, y, z)
    assert report.findings == [] and np.allclose(z, x * y + 1, rtol=1e-6, atol=0)
    assert np.count_nonzero(out_memory != -1) == z.size  # nothing outside the view was written


def test_omitted_outputs_are_allocated_as_cupy_allocates_them() -> None:
    """Under `simulate()` a call returns what CuPy's returns: the output of the loop's shape and the type the
    parameters decide (`float64 z` here, whatever the inputs)."""
    import cupy

    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    with gpurace.cupy.simulate() as sim:
        half = cupy.ElementwiseKernel("T x", "float64 z", "z = x / 2.0", "half")
        z = half(x)
        pair = cupy.ElementwiseKernel("T x, T w", "T doubled, T squared", "doubled = x * 2 + w; squared = x * x", "pair")
        doubled, squared = pair(x[:, None, :2], np.zeros((1, 5, 1), np.int32))  # broadcast to (3, 5, 2)
        ring = cupy.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[(i + 1) % 12]", "ring")
        shifted = ring(x.reshape(-1), size=12)
    assert z.dtype == np.float64 and np.array_equal(z, x / 2.0)
    assert doubled.shape == squared.shape == (3, 5, 2) and doubled.dtype == np.int32
    assert np.array_equal(squared, np.broadcast_to(x[:, None, :2] ** 2, (3, 5, 2)))
    assert np.array_equal(shifted, np.roll(x.reshape(-1), -1))
    assert all(r.clean for r in sim.reports) and sim.reports[0].launch["args"][1] == "float64[3, 4] (allocated)"


def test_an_output_whose_elements_overlap_races() -> None:
    """A view with stride 0 makes every element of the output one location: the threads of a pure map race on it."""
    target = np.zeros(1, np.float32)
    z = np.lib.stride_tricks.as_strided(target, (64,), (0,))
    report = gpurace.cupy.check(elementwise(("T x", "T z", "z = x", "copy")), np.arange(64, dtype=np.float32), z)
    assert [s[:3] for s in sites(report)] == [("data-race", "global", [1, 1])]


def test_omitted_outputs_that_cannot_be_sized_or_typed_are_refused() -> None:
    with pytest.raises(UserError, match="a raw output's size is unknown"):
        gpurace.cupy.check(elementwise(("T x", "raw T y", "y[i] = x", "to_raw")), np.zeros(4, np.float32))
    with pytest.raises(UserError, match="KeyError"):  # U appears among the outputs only: CuPy cannot tell its type
        gpurace.cupy.check(elementwise(("T x", "U y", "y = x", "untyped")), np.zeros(4, np.float32))
