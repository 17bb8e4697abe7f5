"""NumPy arrays as CuPy hands them to the kernels it generates (`ElementwiseKernel`, `ReductionKernel`).

CuPy does not pass the caller's arrays to a generated kernel as they are: it
broadcasts the non-raw ones to one shape (`broadcast`), a reduction
transposes its inputs so that the reduced axes come first (`transpose`),
and both merge the dimensions they can walk as one (`reduce_dims`); every
one of these is a view over the caller's memory. CuPy does this in `cdef`
functions of its Cython core (`cupy/_core/_kernel.pyx`, `internal.pyx`,
`core.pyx`, `_reduction.pyx`), which Python cannot call, so this module
reproduces them as CuPy 14 has them, on NumPy views: a `KernelArray`'s view
has the shape, strides and data pointer of the `cupy.ndarray` CuPy would
pass, and its `c_contiguous` is the flag CuPy keeps with it (which CuPy
carries unchanged through `reduce_dims`, and which names the `CArray`
template the kernel is compiled with). Contiguity is CuPy's own test
(`internal.get_c_contiguity`), which is not quite NumPy's.

A `CArray` is passed by value: data pointer, size, then shape and strides
in bytes (`carray`). gpurace's buffer behind it is the caller's memory the
array spans (`span`), so strided views work and the caller's array is
updated in place after the run; the pointer points at the view's first
element inside that span, which for negative strides is not its start.
Arguments whose memory overlaps get a buffer each in the simulator, which
would hide the races between them and make the copy back ambiguous:
`check_no_overlap` refuses an output that shares memory with another
argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gpurace.errors import UserError
from gpurace.sim.arg_values import Buffer, StructArg


@dataclass(frozen=True)
class KernelArray:
    """An array argument as CuPy passes it: `view` (shape, strides and data pointer), the `c_contiguous` flag CuPy
    holds for it, and the caller's `array` whose memory it views."""

    view: np.ndarray
    c_contiguous: bool
    array: np.ndarray

    @property
    def f_contiguous(self) -> bool:
        """CuPy's `_update_f_contiguity`: a C-contiguous array is F-contiguous when at most one dimension exceeds 1."""
        if self.view.size == 0:
            return True
        if self.c_contiguous:
            return sum(n != 1 for n in self.view.shape) <= 1
        return _c_contiguity(self.view.shape[::-1], self.view.strides[::-1], self.view.itemsize)

    def reshaped(self, shape, strides, *, update_c_contiguity: bool) -> KernelArray:
        """The view with other `shape` and `strides` over the same data pointer, as CuPy's `_view` makes it:
        with its contiguity recomputed, or (`update_c_contiguity=False`, as `reduce_dims` does) carried over."""
        view = as_strided(self.view, tuple(shape), tuple(strides), writeable=False)
        flag = _c_contiguity(view.shape, view.strides, view.itemsize) if update_c_contiguity else self.c_contiguous
        return KernelArray(view, flag, self.array)


def kernel_array(array: np.ndarray) -> KernelArray:
    """The caller's array as CuPy first sees it."""
    return KernelArray(array, _c_contiguity(array.shape, array.strides, array.itemsize), array)


def _c_contiguity(shape, strides, itemsize: int) -> bool:
    """CuPy's `_update_c_contiguity`: every empty array is contiguous, else `internal.get_c_contiguity`."""
    from cupy._core import internal

    return math.prod(shape) == 0 or bool(internal.get_c_contiguity(list(shape), list(strides), itemsize))


def broadcast(values: list, raw: list[bool]) -> tuple[list, tuple[int, ...]]:
    """CuPy's `_broadcast`: the non-raw `KernelArray`s among `values` broadcast to one shape (dimensions of size 1
    and missing leading ones get stride 0, and contiguity is recomputed), with that shape; raw arrays and scalars
    are left as they are. Shapes that do not broadcast are a UserError with CuPy's message."""
    arrays = [v for v, r in zip(values, raw) if isinstance(v, KernelArray) and not r]
    try:
        shape = np.broadcast_shapes(*(a.view.shape for a in arrays))
    except ValueError:
        shapes = " ".join(str(v.view.shape) if isinstance(v, KernelArray) else "()" for v in values)
        raise UserError(f"operands could not be broadcast together with shapes {shapes}") from None
    out = []
    for v, r in zip(values, raw):
        if isinstance(v, KernelArray) and not r and v.view.shape != shape:
            lead = len(shape) - v.view.ndim
            kept = [s if n == shape[lead + j] else 0 for j, (n, s) in enumerate(zip(v.view.shape, v.view.strides))]
            strides = [0] * lead + kept
            v = v.reshaped(shape, strides, update_c_contiguity=True)
        out.append(v)
    return out, shape


def transpose(a: KernelArray, axes: tuple[int, ...]) -> KernelArray:
    """CuPy's `_transpose` of a view: its axes permuted, its contiguity recomputed."""
    view = a.view.transpose(axes)
    return a.reshaped(view.shape, view.strides, update_c_contiguity=True)


def reduce_dims(values: list, raw: list[bool], shape: tuple[int, ...]) -> tuple[int, ...]:
    """CuPy's `_reduce_dims`: merge the dimensions every non-raw array of `values` can walk as one, replacing
    those arrays in `values` by the merged views (flags carried over, as CuPy does); returns the loop's new shape.

    One array alone is reduced by its own strides (`ndarray.reduced_view`); several only where all of the
    non-contiguous ones agree, and not at all when two dimensions remain and one of them is not contiguous."""
    if len(shape) <= 1 or not values:
        return shape
    if len(values) == 1:
        a = values[0]
        if raw[0] or not isinstance(a, KernelArray):
            return shape
        reduced = _reduced_view(a)
        if reduced is a:
            return shape
        values[0] = reduced
        return reduced.view.shape
    return _reduced_view_core(values, raw, shape)


def _reduced_view(a: KernelArray) -> KernelArray:
    """CuPy's `ndarray.reduced_view`: a C-contiguous array as one dimension, another with the dimensions its
    strides let merge (`internal.get_reduced_dims`); the array itself when nothing merges."""
    view = a.view
    if view.ndim <= 1:
        return a
    if a.c_contiguous:
        return a.reshaped((view.size,), (view.itemsize,), update_c_contiguity=False)
    shape, strides = _reduced_dims(view.shape, view.strides, view.itemsize)
    if len(shape) == view.ndim:
        return a
    return a.reshaped(shape, strides, update_c_contiguity=False)


def _reduced_dims(shape, strides, itemsize: int) -> tuple[list[int], list[int]]:
    """CuPy's `internal.get_reduced_dims`: dimensions of size 1 dropped, a dimension merged into the one before
    it when that one's stride is its size times its stride."""
    out_shape: list[int] = []
    out_strides: list[int] = []
    previous = 0
    for n, s in zip(shape, strides):
        if n == 0:
            return [0], [itemsize]
        if n == 1:
            continue
        if not out_shape or previous != n * s:
            out_shape.append(n)
            out_strides.append(s)
        else:
            out_shape[-1] *= n
            out_strides[-1] = s
        previous = s
    return out_shape, out_strides


def _reduced_view_core(values: list, raw: list[bool], shape: tuple[int, ...]) -> tuple[int, ...]:
    """CuPy's `_reduced_view_core`, for several arguments."""
    indexes = [i for i, (v, r) in enumerate(zip(values, raw)) if isinstance(v, KernelArray) and not r]
    strided = [i for i in indexes if not values[i].c_contiguous]
    if strided and len(shape) == 2:
        return shape
    if not indexes:
        return shape
    if not strided:
        total = values[indexes[0]].view.size
        for i in indexes:
            a = values[i]
            values[i] = a.reshaped((total,), (a.view.itemsize,), update_c_contiguity=False)
        return (total,)
    merged = list(shape)
    axes = []
    last = -1
    for ax in range(len(shape)):
        if merged[ax] == 1:
            continue
        if last < 0:
            last = ax
            continue
        if any(values[i].view.strides[ax] * merged[ax] != values[i].view.strides[last] for i in strided):
            axes.append(last)
        else:
            merged[ax] *= merged[last]
        last = ax
    if last >= 0:
        axes.append(last)
    if len(axes) == len(shape):
        return shape
    new_shape = tuple(merged[ax] for ax in axes)
    for i in indexes:
        a = values[i]
        values[i] = a.reshaped(new_shape, [a.view.strides[ax] for ax in axes], update_c_contiguity=False)
    return new_shape


def span(array: np.ndarray) -> tuple[np.ndarray, int]:
    """The caller's memory that `array` spans, as a C-contiguous byte array sharing it (so that writes reach the
    caller's array), and the byte offset of `array`'s first element in it."""
    if array.size == 0:
        return array.reshape(-1).view(np.uint8) if array.flags.c_contiguous else np.zeros(0, np.uint8), 0
    low = sum(s * (n - 1) for n, s in zip(array.shape, array.strides) if s < 0)
    high = sum(s * (n - 1) for n, s in zip(array.shape, array.strides) if s > 0) + array.itemsize
    corner = array[(*(slice(-1, None) if s < 0 else slice(0, 1) for s in array.strides), ...)]
    first = corner.reshape(1).view(np.uint8)  # one element: contiguous, so reshaping keeps the caller's memory
    return as_strided(first, (high - low,), (1,), writeable=array.flags.writeable), -low


def carray(a: KernelArray, name: str) -> StructArg:
    """`CArray<T, ndim, c_contiguous, index_32_bits>` for `a` as CuPy passes it: the data pointer, the size, then the
    shape and the strides in bytes (the 0-dimensional one has only the pointer and size), over the buffer of the
    memory the caller's array spans."""
    memory, first = span(a.array)
    fields = np.array([first, a.view.size, *a.view.shape, *a.view.strides], dtype=np.int64)
    return StructArg(name, fields.tobytes(), pointers=[(0, Buffer(memory, name))])


def index_32_bits(a: KernelArray) -> bool:
    """Whether CuPy indexes the array with 32-bit integers: its elements and the memory it spans fit in 2 GiB."""
    return max(a.view.size * a.view.itemsize, span(a.array)[0].nbytes) <= 1 << 31


def indexer(shape: tuple[int, ...]) -> bytes:
    """`CIndexer<ndim>` as CuPy passes it: the loop's size, its shape and an index of zeros (each thread sets it)."""
    return np.array([math.prod(shape), *shape, *[0] * len(shape)], dtype=np.int64).tobytes()


def check_no_overlap(outputs: dict[str, np.ndarray], others: dict[str, np.ndarray], kernel: str) -> None:
    """A UserError when an output's memory overlaps another argument's (module docstring)."""
    seen = dict(others)
    for name, array in outputs.items():
        for other, value in seen.items():
            if np.may_share_memory(array, value):
                raise UserError(
                    f"{kernel}: arguments {other} and {name} share memory; gpurace gives each argument its own buffer, "
                    "so an output must not overlap another argument: pass a copy"
                )
        seen[name] = array
