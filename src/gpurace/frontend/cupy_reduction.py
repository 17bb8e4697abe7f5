"""CuPy's `ReductionKernel`: the CUDA source CuPy would generate for a call on given NumPy arrays, and CuPy's launch.

A `ReductionKernel` is a recipe (`in_params`, `out_params`, `map_expr`,
`reduce_expr`, `post_map_expr`, `identity`, `reduce_type`, `preamble`):
CuPy writes one kernel from it per call, for the arguments' types and
dimensions and for the axes reduced. gpurace asks CuPy's own code generator
for the source (`cupy._core._reduction._ReductionKernel_get_cached_function_code`,
the template of `_create_reduction_function_code`, which needs no GPU) and
compiles it as an `ElementwiseKernel`'s (`frontend.cupy_generated`). That
template is a shared-memory tree reduction: each block of `block_size`
(512) threads reduces `block_stride` outputs, `block_size / block_stride`
threads per output each folding every `block_size / block_stride`-th input
with `REDUCE(a, b)` into `_s`, then halving through `_sdata` with a
`__syncthreads()` between the steps; the first `block_stride` threads apply
`POST_MAP` to their output element.

What CuPy decides on the host before the launch is in `cdef` functions
that Python cannot call, and `reduction_launch` reproduces it as
`ReductionKernel.__call__` and `_AbstractReductionKernel._call` of CuPy 14
do (`cupy/_core/_reduction.pyx`), using CuPy's callable pieces where there
are some (`_get_axis`, `_get_out_shape`, `_get_block_specs`): the inputs
are broadcast together; `axis` (default: all) is split into reduced and
kept axes (sorted by stride for one non-contiguous input with at most one
kept axis); the output has the kept axes (the reduced ones as 1 with
`keepdims=True`) and the type the parameters decide, allocated unless given;
the inputs are transposed so that the reduced axes come first, and then
`reduce_dims` merges dimensions of inputs and outputs
(`frontend.cupy_arrays`); `_get_block_specs` gives the block size, the
outputs per block (`block_stride`) and the blocks; the kernel takes the
inputs, the outputs, `CIndexer`s over the inputs' and the outputs' shapes,
and `block_stride` as an `int`.

CuPy may instead hand a reduction to CUB's block reduction (one input and
one output, the reduced axes contiguous and at least 128 elements, and
`cub` among the reduction accelerators: the default, set by
`CUPY_ACCELERATORS`). That kernel is another template, which gpurace does
not generate: such a call is a UserError saying how to check it (CuPy runs
the kernel checked here once `cupy._core.set_reduction_accelerators([])`
has been called, or with `CUPY_ACCELERATORS=""`). CuPy's optimizer
(`cupyx.optimizing.optimize`) picks other block sizes by timing a GPU;
gpurace launches with the default ones.

Lines: the generated source is written to gpurace's cache directory as
`NAME-HASH.cu`, so a finding names the kernel's name and its line there:
`map_expr` is on the loop's line `_type_reduce _a = static_cast<...>(...)`,
and `reduce_expr` and `post_map_expr` are in the `REDUCE` and `POST_MAP`
macros, whose findings name the lines that use them.
"""

from __future__ import annotations

import math

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.cupy_arrays import KernelArray, broadcast, check_no_overlap, kernel_array, reduce_dims, transpose
from gpurace.frontend.cupy_generated import (
    CupyInternals, GeneratedLaunch, argument, check_argument, generated_launch, header, internals, shown, typed_scalar,
    write_generated,
)  # fmt: skip


def is_reduction_kernel(kernel) -> bool:
    """Whether `kernel` is a `cupy.ReductionKernel` (by its class, so that CuPy is imported only when it is one)."""
    return any(t.__name__ == "ReductionKernel" and t.__module__.startswith("cupy") for t in type(kernel).__mro__)


def reduction_launch(kernel, args: tuple, axis, keepdims: bool, out) -> GeneratedLaunch:
    """The launch `kernel(*args, axis=axis, keepdims=keepdims, out=out)` would make (module docstring): inputs (NumPy
    arrays and numbers), then the outputs (NumPy arrays, updated in place) or none (allocated here, and returned in
    the launch's `outputs`)."""
    cupy = internals(f"ReductionKernel {kernel.name}")
    name, nin = kernel.name, kernel.nin
    label = f"ReductionKernel {name}"
    if len(args) not in (nin, kernel.nargs):
        raise UserError(
            f"{label} takes {nin} input(s) and {kernel.nout} output(s), {len(args)} given: pass the inputs, or the "
            "inputs and every output"
        )
    given = list(args[nin:])
    if out is not None:
        if kernel.nout != 1 or given:
            raise UserError(f"{label}: out= is for a kernel of one output that is not passed among the arguments")
        given = [out]
    params = kernel.in_params + kernel.out_params
    for i, (p, a) in enumerate(zip(params, list(args[:nin]) + given)):
        check_argument(a, i >= nin, f"{label}, argument {p.name}")
    in_raw = [p.raw for p in kernel.in_params]
    inputs = [kernel_array(a) if isinstance(a, np.ndarray) else a for a in args[:nin]]
    if not any(isinstance(a, KernelArray) and not r for a, r in zip(inputs, in_raw)):
        raise UserError(f"{label}: no input is a non-raw array, so the reduction's shape is unknown")
    try:
        inputs, shape = broadcast(inputs, in_raw)
    except UserError as e:
        raise UserError(f"{label}: {e}") from None
    try:
        in_types, out_types, type_map = cupy.kernel._decide_params_type(
            kernel.in_params, kernel.out_params,
            tuple(a.view.dtype.type if isinstance(a, KernelArray) else None for a in inputs),
            tuple(a.dtype.type for a in given),
        )  # fmt: skip
        reduce_axis, out_axis = cupy.reduction._get_axis(axis, len(shape))
        inputs = [a if isinstance(a, KernelArray) else typed_scalar(a, t) for a, t in zip(inputs, in_types)]
    except (TypeError, ValueError, OverflowError, KeyError) as e:  # CuPy's own messages (AxisError is a ValueError)
        raise UserError(f"{label}: {type(e).__name__}: {e}") from None
    if len(inputs) == 1 and len(out_axis) <= 1 and not inputs[0].c_contiguous:
        strides = inputs[0].view.strides
        reduce_axis, out_axis = (tuple(sorted(axes, key=lambda i: -abs(strides[i]))) for axes in (reduce_axis, out_axis))
    out_shape = tuple(cupy.reduction._get_out_shape(list(shape), reduce_axis, out_axis, keepdims))
    outputs = _outputs(kernel, given, out_types, out_shape, label)
    if outputs[0].size == 0:
        raise UserError(f"{label}: the output has no elements (shape {outputs[0].shape}): CuPy launches nothing")
    if kernel.identity == "" and 0 in shape:
        raise UserError(f"{label}: zero-size array to reduction operation {name} which has no identity")
    check_no_overlap(
        {p.name: a for p, a in zip(kernel.out_params, outputs)},
        {p.name: a for p, a in zip(kernel.in_params, args) if isinstance(a, np.ndarray)},
        label,
    )
    if _runs_cub(cupy, inputs, outputs, reduce_axis, out_axis):
        raise UserError(
            f"{label}: CuPy would run this call with CUB's block reduction (one input, contiguous reduced axes of at "
            "least 128 elements, and 'cub' among its reduction accelerators), a kernel gpurace does not generate; "
            "gpurace checks the kernel CuPy runs without CUB: call cupy._core.set_reduction_accelerators([]) "
            "first (or set CUPY_ACCELERATORS=''), or reduce fewer elements per output"
        )
    index_type = ("IndexT", np.int64 if math.prod(shape) / math.prod(out_shape) > 0x7FFFFFFF else np.int32)
    type_map = cupy.kernel._TypeMap(type_map._pairs + (index_type,))
    permutation = reduce_axis + out_axis
    if permutation != tuple(range(len(shape))):
        if any(in_raw):
            raise UserError(f"{label}: CuPy cannot reduce over these axes with a raw input (NotImplementedError)")
        inputs = [transpose(a, permutation) if isinstance(a, KernelArray) else a for a in inputs]
        shape = tuple(shape[i] for i in permutation)
    out_values: list = [kernel_array(a) for a in outputs]
    if kernel.reduce_dims:
        shape = reduce_dims(inputs, in_raw, shape)
        out_shape = reduce_dims(out_values, [p.raw for p in kernel.out_params], out_shape)
    contiguous = _contiguous_size(inputs, in_raw, out_shape, len(shape))
    specs = cupy.reduction._get_block_specs(math.prod(shape), math.prod(out_shape), contiguous, -1)
    block_size, block_stride, blocks = specs  # -1: CuPy's default block size
    names = [p.name for p in params] + ["_in_ind", "_out_ind", "_block_stride"]
    values = [*inputs, *out_values, tuple(shape), tuple(out_shape), np.int32(block_stride)]
    infos, launch_args = zip(*(argument(cupy, v, n) for n, v in zip(names, values)))
    try:
        code = cupy.reduction._ReductionKernel_get_cached_function_code(
            nin, kernel.nout, kernel._params, tuple(infos), type_map, name, block_size, kernel.reduce_type,
            kernel.identity, kernel.map_expr, kernel.reduce_expr, kernel.post_map_expr, kernel.preamble,
            tuple(kernel.options),
        )  # fmt: skip
    except (TypeError, ValueError) as e:
        raise UserError(f"{label}: CuPy could not generate its source: {type(e).__name__}: {e}") from None
    described = [shown(a if isinstance(a, np.ndarray) else v) for a, v in zip(args[:nin], inputs)]
    described += [shown(a) + ("" if given else " (allocated)") for a in outputs]
    return generated_launch(
        cupy, write_generated(name, header(cupy) + code), name, kernel.options, list(launch_args), blocks * block_size,
        block_size, [*described, shown(tuple(shape)), shown(tuple(out_shape)), shown(np.int32(block_stride))],
        tuple(outputs),
    )  # fmt: skip


def _outputs(kernel, given: list, types: tuple, shape: tuple[int, ...], label: str) -> list[np.ndarray]:
    """CuPy's `_get_out_args_with_params` for a reduction: the outputs given, each non-raw one of the output's shape,
    or new arrays of that shape and the types the parameters decide (zero-filled; CuPy's hold whatever was in
    memory); a raw output cannot be made, since its size is unknown."""
    if not given:
        if any(p.raw for p in kernel.out_params):
            raise UserError(f"{label}: a raw output's size is unknown: pass the outputs")
        return [np.zeros(shape, t) for t in types]
    for p, a in zip(kernel.out_params, given):
        if not p.raw and a.shape != shape:
            raise UserError(f"{label}: output {p.name} has the shape {a.shape}, not the reduction's {shape}")
    return given


def _contiguous_size(inputs: list, raw: list[bool], out_shape: tuple[int, ...], ndim: int) -> int:
    """CuPy's `_get_contiguous_size`: how many output elements in a row the non-raw inputs hold contiguously, at
    most (in their last, kept, dimensions)."""
    size = 1
    for a, r in zip(inputs, raw):
        if not isinstance(a, KernelArray) or r:
            continue
        run, strides = 1, a.view.strides
        for j in range(len(out_shape)):
            if strides[ndim - j - 1] != run * a.view.itemsize:
                break
            run *= out_shape[len(out_shape) - j - 1]
        size = max(size, run)
    return size


def _runs_cub(cupy: CupyInternals, inputs: list, outputs: list, reduce_axis: tuple, out_axis: tuple) -> bool:
    """Whether CuPy would hand this call to CUB's block reduction (`_cub_reduction._can_use_cub_block_reduction`,
    which takes CuPy's arrays only)."""
    if cupy.accelerator.ACCELERATOR_CUB not in cupy.accelerator.get_reduction_accelerators():
        return False
    if cupy.cub_reduction._environment.get_cub_path() is None or len(inputs) != 1 or len(outputs) != 1:
        return False
    a = inputs[0]
    reduce_axis, out_axis = tuple(sorted(reduce_axis)), tuple(sorted(out_axis))
    compatible = cupy.cub._cub_device_segmented_reduce_axis_compatible
    if a.f_contiguous:
        if not compatible(reduce_axis, a.view.ndim, "F"):
            return False
        permutation = reduce_axis + out_axis
    elif a.c_contiguous:
        if not compatible(reduce_axis, a.view.ndim, "C"):
            return False
        permutation = out_axis + reduce_axis
    else:
        return False
    if permutation != tuple(range(a.view.ndim)):
        return False
    size = math.prod(a.view.shape[i] for i in reduce_axis)
    if size == 0 or size > 0x7FFFFFFFFFFFFFFF:
        return False
    if not out_axis and size > 0x1000000000:
        return False
    if out_axis and a.view.size // size > 0x7FFFFFFF:
        return False
    return size >= cupy.cub_reduction._CUB_REDUCE_SIZE_THRESHOLD
