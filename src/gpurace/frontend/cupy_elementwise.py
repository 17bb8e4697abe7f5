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

The arguments are laid out as CuPy passes them: an array as a `CArray`
struct by value (data pointer, size, then shape and strides in bytes, one
per dimension), a scalar as the bytes of the type CuPy gives it, and the
loop's `CIndexer` (size, shape, index) last. As CuPy does by default
(`reduce_dims=True`), non-raw arrays, which are C-contiguous here, are seen
as one dimension of all their elements; `raw` arrays keep their shape.

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

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.cupy_kernels import parse_options, write_once
from gpurace.frontend.sandbox import c_string
from gpurace.cache import cache_dir
from gpurace.sim.arg_values import Buffer, StructArg
from gpurace.sim.args import check_buffer_array

DEFAULT_BLOCK_SIZE = 128
"""Threads per block of CuPy's launch of an `ElementwiseKernel` when `block_size` is not given."""

MAX_BLOCKS = 0x7FFFFFFF
"""The most blocks CuPy's `linear_launch` makes (a grid's x dimension)."""

_PLACEHOLDER = "__gpurace_operation__"
"""Stands for the operation in the source CuPy generates, where gpurace puts it between `#line` directives."""

# CuPy's `_ArgKind` values (cupy/_core/_kernel.pxd)
_ARG_KIND_NDARRAY, _ARG_KIND_INDEXER, _ARG_KIND_SCALAR = 1, 2, 3


def is_elementwise_kernel(kernel) -> bool:
    """Whether `kernel` is a `cupy.ElementwiseKernel` (by its class, so that CuPy is imported only when it is one)."""
    return type(kernel).__name__ == "ElementwiseKernel" and type(kernel).__module__.startswith("cupy")


@dataclass(frozen=True)
class ElementwiseLaunch:
    """One call of an `ElementwiseKernel` as gpurace checks it: the generated source file, the kernel's name,
    the include directories and macros its compile takes, the launch's arguments (`StructArg`s and bytes, in
    parameter order), blocks and threads per block, and the arguments as the report shows them."""

    source: Path
    name: str
    include_dirs: tuple[str, ...]
    defines: tuple[str, ...]
    arch: str
    args: list
    grid: int
    block: int
    shown: list


def elementwise_launch(kernel, args: tuple, size: int | None, block_size: int | None) -> ElementwiseLaunch:
    """The launch `kernel(*args, size=size, block_size=block_size)` would make (module docstring): every argument
    given, inputs then outputs, NumPy arrays (C-contiguous, updated in place) and, for inputs, numbers."""
    cupy_kernel, carray, core, scalar_kind = _cupy_internals()
    nin, nargs, name = kernel.nin, kernel.nargs, kernel.name
    if len(args) != nargs:
        given = f"{len(args)} given"
        if len(args) == nin:
            given += ": pass the outputs too (CuPy would allocate them; gpurace checks on NumPy arrays, updated in place)"
        raise UserError(f"ElementwiseKernel {name} takes {nin} input(s) and {nargs - nin} output(s), {given}")
    block = DEFAULT_BLOCK_SIZE if block_size is None else block_size
    if not isinstance(block, int) or block <= 0:
        raise UserError(f"block_size must be a positive number of threads, got {block_size!r}")
    params = kernel.in_params + kernel.out_params
    for i, (p, a) in enumerate(zip(params, args)):
        _check_argument(a, p, i >= nin, f"ElementwiseKernel {name}, argument {p.name}")
    shape = _loop_shape(params, args, size, name)
    loop = math.prod(shape)
    if loop == 0:
        raise UserError(f"ElementwiseKernel {name}: the loop has no elements (shape {shape}): CuPy launches nothing")
    try:
        in_types, _, type_map = kernel._decide_params_type(
            tuple(a.dtype if isinstance(a, np.ndarray) else None for a in args[:nin]),
            tuple(a.dtype for a in args[nin:]),
        )
        values = [a if isinstance(a, np.ndarray) else _typed_scalar(a, t) for a, t in zip(args, in_types + (None,) * nargs)]
    except (TypeError, ValueError, OverflowError, KeyError) as e:  # CuPy's own messages about the types
        raise UserError(f"ElementwiseKernel {name}: {type(e).__name__}: {e}") from None
    if kernel.reduce_dims and len(shape) > 1:
        shape = (loop,)  # every non-raw array is C-contiguous: CuPy sees one dimension (`_reduce_dims`)
    infos, launch_args = [], []
    for p, value in zip(params, values):
        if isinstance(value, np.ndarray):
            view = value if p.raw else value.reshape(shape)
            infos.append(cupy_kernel._ArgInfo(_ARG_KIND_NDARRAY, core.ndarray, view.dtype, view.ndim, True, view.nbytes <= 1 << 31))
            launch_args.append(_carray(view, value, p.name))
        else:
            infos.append(cupy_kernel._ArgInfo(_ARG_KIND_SCALAR, scalar_kind, value.dtype, 0, True, True))
            launch_args.append(value.tobytes())
    infos.append(cupy_kernel._ArgInfo(_ARG_KIND_INDEXER, carray.Indexer, None, len(shape), True, loop <= 1 << 31))
    launch_args.append(_indexer(shape))
    options = dict(kernel.kwargs)
    flags = parse_options(tuple(options.get("options", ())))
    try:
        code = cupy_kernel._get_elementwise_kernel_code(
            tuple(infos), type_map, kernel.params, _PLACEHOLDER, name, kernel.preamble, **options
        )
    except (TypeError, ValueError) as e:
        raise UserError(f"ElementwiseKernel {name}: CuPy could not generate its source: {type(e).__name__}: {e}") from None
    header = "\n".join(f"#include <{h}>" for h in core._cupy_header_list)
    source = _write_source(name, header + code, kernel.operation)
    include_dirs = tuple(o[2:] for o in core.assemble_cupy_compiler_options(()) if o.startswith("-I"))
    grid = min(MAX_BLOCKS, -(-loop // block))
    shown = [f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else f"{v.dtype}({v.item()!r})" for a, v in zip(args, values)]
    return ElementwiseLaunch(
        source, name, include_dirs + flags.include_dirs, flags.defines, flags.arch, launch_args, grid, min(block, loop),
        [*shown, f"CIndexer{list(shape)}"],
    )  # fmt: skip


def _cupy_internals():
    """CuPy's modules and classes that generate an elementwise kernel's source; a UserError when this CuPy has
    other internals than gpurace knows."""
    import cupy

    try:
        from cupy._core import _carray as carray
        from cupy._core import _kernel as cupy_kernel
        from cupy._core import _scalar, core
    except ImportError as e:
        missing = [str(e)]
    else:
        wanted = {
            cupy_kernel: ("_ArgInfo", "_get_elementwise_kernel_code"), carray: ("Indexer",), _scalar: ("CScalar",),
            core: ("_cupy_header_list", "assemble_cupy_compiler_options", "ndarray"),
        }  # fmt: skip
        missing = [f"{m.__name__}.{n}" for m, names in wanted.items() for n in names if not hasattr(m, n)]
    if missing:
        raise UserError(
            f"ElementwiseKernel: CuPy {cupy.__version__} does not generate kernels as gpurace expects (no "
            f"{', '.join(missing)}); gpurace reads the code generator of CuPy 14"
        )
    return cupy_kernel, carray, core, _scalar.CScalar


def _check_argument(value, p, output: bool, label: str) -> None:
    """An argument gpurace can pass: a NumPy array as buffers take it, or for an input a number."""
    if type(value).__module__.startswith("cupy"):
        raise UserError(f"{label}: gpurace simulates on NumPy arrays: pass cupy.asnumpy(x), not a {type(value).__name__}")
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            raise UserError(f"{label}: arrays of numbers or bools are supported, not {value.dtype}")
        check_buffer_array(value, label)
        return
    if output:
        raise UserError(f"{label}: an output must be a NumPy array, not {type(value).__name__}")
    if not isinstance(value, (bool, int, float, np.generic)) or isinstance(value, np.void):
        raise UserError(f"{label}: expected a NumPy array or a number, not {type(value).__name__}")


def _loop_shape(params, args, size: int | None, name: str) -> tuple[int, ...]:
    """The loop's shape as CuPy decides it: `size` when every array is `raw`, else the non-raw arrays' shape.

    CuPy broadcasts non-raw arrays of different shapes; gpurace, whose buffers are the caller's arrays, needs
    them to have the same shape already (a broadcast array has zero strides)."""
    shapes = {a.shape for p, a in zip(params, args) if isinstance(a, np.ndarray) and not p.raw}
    if size is not None:
        if shapes:
            raise UserError(f"ElementwiseKernel {name}: size= can be used only when every array is raw, as in CuPy")
        if not isinstance(size, int) or size < 0:
            raise UserError(f"ElementwiseKernel {name}: size must be a number of elements, got {size!r}")
        return (size,)
    if not shapes:
        raise UserError(f"ElementwiseKernel {name}: every array is raw, so the loop's size is unknown: pass size=N")
    if len(shapes) > 1:
        listed = ", ".join(str(s) for s in sorted(shapes))
        raise UserError(
            f"ElementwiseKernel {name}: its non-raw arrays have the shapes {listed}; broadcasting them is not "
            "supported yet: pass arrays of one shape (np.broadcast_to(...).copy())"
        )
    return next(iter(shapes))


def _typed_scalar(value, dtype) -> np.generic:
    """An input number as CuPy passes it: converted to the type the kernel's parameter has (`CScalar.apply_dtype`);
    a Python number that the type cannot hold is an OverflowError, as NumPy says."""
    if dtype is None:
        raise TypeError("a scalar's type is not known from the arrays: give its parameter a type, or pass an array")
    dtype = np.dtype(dtype)
    return value.astype(dtype) if isinstance(value, np.generic) else dtype.type(value)


def _carray(view: np.ndarray, array: np.ndarray, name: str) -> StructArg:
    """`CArray<T, ndim, ...>` for `view` of `array` as CuPy passes it: the data pointer, the size, then the shape and
    the strides in bytes; the 0-dimensional one has only the pointer and size."""
    strides = [s for s in view.strides] if view.ndim else []
    fields = np.array([0, view.size, *view.shape, *strides], dtype=np.int64)
    return StructArg(name, fields.tobytes(), pointers=[(0, Buffer(array, name))])


def _indexer(shape: tuple[int, ...]) -> bytes:
    """`CIndexer<ndim>` as CuPy passes it: the loop's size, its shape and an index of zeros (each thread sets it)."""
    return np.array([math.prod(shape), *shape, *[0] * len(shape)], dtype=np.int64).tobytes()


def _write_source(name: str, code: str, operation: str) -> Path:
    """The generated source with the operation between `#line` directives (module docstring), written once to
    gpurace's cache directory beside the operation's own file."""
    digest = hashlib.sha256(f"{code}\0{operation}".encode()).hexdigest()[:16]
    stem = re.sub(r"\W", "_", name)[:64] or "kernel"
    folder = cache_dir() / "cupy"
    path, operation_path = folder / f"{stem}-{digest}.cu", folder / f"{stem}-{digest}-operation.cu"
    before, after = code.split(_PLACEHOLDER)
    opening = f"{before}\n#line 1 {c_string(str(operation_path))}\n{operation}\n"
    resume = opening.count("\n") + 2  # the line after the closing directive, in the file written
    text = f"{opening}#line {resume} {c_string(str(path))}\n{after}"
    write_once(operation_path, operation)
    write_once(path, text)
    return path
