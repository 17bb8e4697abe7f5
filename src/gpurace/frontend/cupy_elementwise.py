"""CuPy's `ElementwiseKernel`: the CUDA source CuPy would generate for given NumPy arrays, and CuPy's launch.

An `ElementwiseKernel` is not CUDA source but a recipe (`in_params`,
`out_params`, `operation`, `preamble`, `loop_prep`, `after_loop`): CuPy
writes a kernel from it when it is called, specialised for the arguments'
types and dimensions. gpurace does not imitate that: it asks CuPy's own code
generator (`cupy._core._kernel._get_elementwise_kernel_code`, which needs no
GPU) for the source, with the `_ArgInfo`s and type map CuPy's `__call__`
would compute for the same arguments (`_decide_params_type`), prepends the
headers CuPy prepends (`cupy/carray.cuh` and the others of
`_cupy_header_list`) and compiles it through gpurace's own NVRTC path with
CuPy's include directories. These are CuPy internals: a CuPy whose internals
differ is refused with a message, not misread (checked with cupy 14).

The call is CuPy's `ElementwiseKernel.__call__` (`elementwise_launch`):
the non-raw arrays, outputs included, are broadcast to the loop's shape by
NumPy's rules; outputs left out are allocated as CuPy allocates them (the
loop's shape, or `size`; the type the parameters decide) and handed back,
zero-filled where CuPy's would hold whatever was in memory; with
`reduce_dims=True` (CuPy's default) the dimensions every array can walk as
one are merged. Arrays may be strided views (`x[::2]`, `x.T`); an output
may not overlap another argument (`frontend.cupy_arrays`). The arguments
are laid out as CuPy passes them (`frontend.cupy_generated`), the loop's
`CIndexer` (size, shape, index) last.

The launch is CuPy's `linear_launch`: `block_size` threads per block (128
unless given, as CuPy's), fewer when the loop is smaller, and as many blocks
as cover the loop once; each thread runs the grid-stride loop `CUPY_FOR(i,
_ind.size())`, so `i` is the element index. A pure elementwise map cannot
race: a thread touches only element `i` of each non-raw array. Races come
from `raw` arrays indexed otherwise (`y[0]`, `y[i + 1]`) and from atomics
of the wrong scope or mixed with plain accesses.

Lines: the generated source is written to gpurace's cache directory
(`NAME-HASH.cu`, as `frontend.cupy_kernels` writes RawKernel sources), and
the operation string to `NAME-HASH-operation.cu` beside it; `#line`
directives around the operation make a finding in it name that file, so its
line N is line N of the operation string. A finding in the preamble,
`loop_prep` or `after_loop` names its line of the generated source.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.cupy_arrays import KernelArray, broadcast, check_no_overlap, kernel_array, reduce_dims
from gpurace.frontend.cupy_generated import (
    GeneratedLaunch, argument, check_argument, generated_launch, header, internals, shown, source_path, typed_scalar,
)  # fmt: skip
from gpurace.frontend.cupy_kernels import write_once
from gpurace.frontend.sandbox import c_string

DEFAULT_BLOCK_SIZE = 128
"""Threads per block of CuPy's launch of an `ElementwiseKernel` when `block_size` is not given."""

_PLACEHOLDER = "__gpurace_operation__"
"""Stands for the operation in the source CuPy generates, where gpurace puts it between `#line` directives."""


def is_elementwise_kernel(kernel) -> bool:
    """Whether `kernel` is a `cupy.ElementwiseKernel` (by its class, so that CuPy is imported only when it is one)."""
    return any(t.__name__ == "ElementwiseKernel" and t.__module__.startswith("cupy") for t in type(kernel).__mro__)


def elementwise_launch(kernel, args: tuple, size: int | None, block_size: int | None) -> GeneratedLaunch:
    """The launch `kernel(*args, size=size, block_size=block_size)` would make (module docstring): inputs (NumPy
    arrays and numbers), then the outputs (NumPy arrays, updated in place) or none (allocated here, and returned
    in the launch's `outputs`)."""
    cupy = internals(f"ElementwiseKernel {kernel.name}")
    nin, nargs, name = kernel.nin, kernel.nargs, kernel.name
    if len(args) not in (nin, nargs):
        raise UserError(
            f"ElementwiseKernel {name} takes {nin} input(s) and {nargs - nin} output(s), {len(args)} given: pass the "
            "inputs, or the inputs and every output"
        )
    block = DEFAULT_BLOCK_SIZE if block_size is None else block_size
    if not isinstance(block, int) or block <= 0:
        raise UserError(f"block_size must be a positive number of threads, got {block_size!r}")
    if size is not None and (not isinstance(size, int) or size < 0):
        raise UserError(f"ElementwiseKernel {name}: size must be a number of elements, got {size!r}")
    params = kernel.in_params + kernel.out_params
    for i, (p, a) in enumerate(zip(params, args)):
        check_argument(a, i >= nin, f"ElementwiseKernel {name}, argument {p.name}")
    raw = [p.raw for p in params]
    values = [kernel_array(a) if isinstance(a, np.ndarray) else a for a in args]
    if size is not None and any(isinstance(v, np.ndarray) and not r for v, r in zip(args, raw)):
        raise UserError(f"ElementwiseKernel {name}: size= can be used only when every array is raw, as in CuPy")
    if size is None and not any(isinstance(v, np.ndarray) and not r for v, r in zip(args, raw)):
        raise UserError(f"ElementwiseKernel {name}: every array is raw, so the loop's size is unknown: pass size=N")
    try:
        broadcast_values, shape = broadcast(values, raw)
    except UserError as e:
        raise UserError(f"ElementwiseKernel {name}: {e}") from None
    values[:nin] = broadcast_values[:nin]
    if size is not None:
        shape = (size,)
    try:
        in_types, out_types, type_map = kernel._decide_params_type(
            tuple(a.dtype if isinstance(a, np.ndarray) else None for a in args[:nin]),
            tuple(a.dtype for a in args[nin:]),
        )
        values[:nin] = [v if isinstance(v, KernelArray) else typed_scalar(v, t) for v, t in zip(values[:nin], in_types)]
    except (TypeError, ValueError, OverflowError, KeyError) as e:  # CuPy's own messages about the types
        raise UserError(f"ElementwiseKernel {name}: {type(e).__name__}: {e}") from None
    outputs = _outputs(kernel, args[nin:], out_types, shape, size is not None)
    if math.prod(shape) == 0:
        raise UserError(f"ElementwiseKernel {name}: the loop has no elements (shape {shape}): CuPy launches nothing")
    check_no_overlap(
        {p.name: a for p, a in zip(kernel.out_params, outputs)},
        {p.name: a for p, a in zip(kernel.in_params, args) if isinstance(a, np.ndarray)},
        f"ElementwiseKernel {name}",
    )
    values = values[:nin] + [kernel_array(a) for a in outputs]
    if kernel.reduce_dims:
        shape = reduce_dims(values, raw, tuple(shape))
    infos, launch_args = zip(*(argument(cupy, v, p.name) for p, v in zip(params, values)), argument(cupy, shape, "_ind"))
    options = dict(kernel.kwargs)
    try:
        code = cupy.kernel._get_elementwise_kernel_code(
            tuple(infos), type_map, kernel.params, _PLACEHOLDER, name, kernel.preamble, **options
        )
    except (TypeError, ValueError) as e:
        raise UserError(f"ElementwiseKernel {name}: CuPy could not generate its source: {type(e).__name__}: {e}") from None
    source = _write_source(name, header(cupy) + code, kernel.operation)
    described = [shown(a if isinstance(a, np.ndarray) else v) for a, v in zip(args[:nin], values)]
    described += [shown(a) + ("" if len(args) > nin else " (allocated)") for a in outputs]
    total = math.prod(shape)
    return generated_launch(
        cupy, source, name, options.get("options", ()), list(launch_args), total, block,
        [*described, shown(tuple(shape))], tuple(outputs),
    )  # fmt: skip


def _outputs(kernel, given: tuple, types: tuple, shape: tuple[int, ...], sized: bool) -> list[np.ndarray]:
    """CuPy's `_get_out_args_with_params`: the outputs given, each non-raw one of the loop's shape, or new arrays
    of the loop's shape and the types the parameters decide (a raw output's size is then unknown, unless `size=`
    sets the loop)."""
    name = kernel.name
    if not given:
        if not sized and any(p.raw for p in kernel.out_params):
            raise UserError(f"ElementwiseKernel {name}: a raw output's size is unknown: pass the outputs, or size=N")
        return [np.zeros(shape, t) for t in types]
    for p, a in zip(kernel.out_params, given):
        if not p.raw and a.shape != tuple(shape):
            raise UserError(f"ElementwiseKernel {name}: output {p.name} has the shape {a.shape}, not the loop's {shape}")
    return list(given)


def _write_source(name: str, code: str, operation: str) -> Path:
    """The generated source with the operation between `#line` directives (module docstring), written once to
    gpurace's cache directory beside the operation's own file."""
    path = source_path(name, f"{code}\0{operation}")
    operation_path = path.with_name(path.stem + "-operation.cu")
    before, after = code.split(_PLACEHOLDER)
    opening = f"{before}\n#line 1 {c_string(str(operation_path))}\n{operation}\n"
    resume = opening.count("\n") + 2  # the line after the closing directive, in the file written
    text = f"{opening}#line {resume} {c_string(str(path))}\n{after}"
    write_once(operation_path, operation)
    write_once(path, text)
    return path
