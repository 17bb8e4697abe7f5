"""What CuPy's generated kernels (`ElementwiseKernel`, `ReductionKernel`) share: CuPy's code generator, their arguments
and the launch gpurace checks.

Neither kind of kernel is CUDA source: CuPy writes the source when the
kernel is called, for the arguments' types and dimensions. gpurace asks
CuPy's own code generator for it (functions of `cupy._core`, which need no
GPU; `internals` finds them and refuses, by name, a CuPy whose internals
differ from CuPy 14's), prepends the headers CuPy prepends and compiles it
through its own NVRTC path with CuPy's include directories
(`generated_launch`). The arguments are laid out as CuPy passes them
(`frontend.cupy_arrays`): arrays as `CArray` structs by value, numbers as
the bytes of the type CuPy gives them (`typed_scalar`), `CIndexer`s.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpurace.cache import cache_dir
from gpurace.errors import UserError
from gpurace.frontend.cupy_arrays import KernelArray, carray, index_32_bits, indexer
from gpurace.frontend.cupy_kernels import parse_options, write_once

MAX_BLOCKS = 0x7FFFFFFF
"""The most blocks CuPy's `linear_launch` makes (a grid's x dimension)."""

# CuPy's `_ArgKind` values (cupy/_core/_kernel.pxd)
_ARG_KIND_NDARRAY, _ARG_KIND_INDEXER, _ARG_KIND_SCALAR = 1, 2, 3


@dataclass(frozen=True)
class CupyInternals:
    """The parts of CuPy's core that generate kernels and decide their launches."""

    kernel: object  # cupy._core._kernel: _ArgInfo, _TypeMap, _decide_params_type, _get_elementwise_kernel_code
    reduction: object  # cupy._core._reduction: _get_axis, _get_out_shape, _get_block_specs, the reduction's code
    core: object  # cupy._core.core: _cupy_header_list, assemble_cupy_compiler_options, ndarray
    indexer_type: type  # cupy._core._carray.Indexer
    scalar_type: type  # cupy._core._scalar.CScalar
    accelerator: object  # cupy._core._accelerator: which reductions CuPy hands to CUB
    cub: object  # cupy.cuda.cub: which reduced axes CUB's block reduction takes
    cub_reduction: object  # cupy._core._cub_reduction: its size threshold and whether CUB's headers are there


_WANTED = {
    "cupy._core._kernel": ("_ArgInfo", "_TypeMap", "_decide_params_type", "_get_elementwise_kernel_code"),
    "cupy._core._reduction": (
        "_get_axis", "_get_out_shape", "_get_block_specs", "_ReductionKernel_get_cached_function_code",
    ),  # fmt: skip
    "cupy._core.core": ("_cupy_header_list", "assemble_cupy_compiler_options", "ndarray"),
    "cupy._core._carray": ("Indexer",),
    "cupy._core._scalar": ("CScalar",),
    "cupy._core._accelerator": ("get_reduction_accelerators", "ACCELERATOR_CUB"),
    "cupy.cuda.cub": ("_cub_device_segmented_reduce_axis_compatible",),
    "cupy._core._cub_reduction": ("_CUB_REDUCE_SIZE_THRESHOLD", "_environment"),
}


def internals(what: str) -> CupyInternals:
    """CuPy's modules that generate `what` (a kernel's kind, for messages); a UserError when this CuPy has other
    internals than gpurace knows."""
    import importlib

    import cupy

    modules, missing = {}, []
    for name, attributes in _WANTED.items():
        try:
            modules[name] = importlib.import_module(name)
        except ImportError:
            missing.append(name)
            continue
        missing += [f"{name}.{a}" for a in attributes if not hasattr(modules[name], a)]
    if missing:
        raise UserError(
            f"{what}: CuPy {cupy.__version__} does not generate kernels as gpurace expects (no "
            f"{', '.join(missing)}); gpurace reads the code generator of CuPy 14"
        )
    m = modules
    return CupyInternals(
        m["cupy._core._kernel"], m["cupy._core._reduction"], m["cupy._core.core"], m["cupy._core._carray"].Indexer,
        m["cupy._core._scalar"].CScalar, m["cupy._core._accelerator"], m["cupy.cuda.cub"], m["cupy._core._cub_reduction"],
    )  # fmt: skip


@dataclass(frozen=True)
class GeneratedLaunch:
    """One call of a generated kernel as gpurace checks it: the generated source file, the kernel's name, the include
    directories and macros its compile takes, the launch's arguments (`StructArg`s and bytes, in parameter order),
    blocks and threads per block, the arguments as the report shows them, and the arrays CuPy's call returns."""

    source: Path
    name: str
    include_dirs: tuple[str, ...]
    defines: tuple[str, ...]
    arch: str
    args: list
    grid: int
    block: int
    shown: list
    outputs: tuple[np.ndarray, ...]


def generated_launch(cupy: CupyInternals, source: Path, name: str, options: tuple, args: list, total_threads: int,
                     block_size: int, shown: list, outputs: tuple) -> GeneratedLaunch:  # fmt: skip
    """The launch CuPy's `linear_launch(total_threads, args, block_max_size=block_size)` makes of the kernel compiled
    from `source` with the kernel's `options`: as many blocks of `block_size` threads as cover `total_threads`, fewer
    threads when there are fewer."""
    flags = parse_options(tuple(options))
    include_dirs = tuple(o[2:] for o in cupy.core.assemble_cupy_compiler_options(()) if o.startswith("-I"))
    grid = min(MAX_BLOCKS, -(-total_threads // block_size))
    return GeneratedLaunch(
        source, name, include_dirs + flags.include_dirs, flags.defines, flags.arch, args, grid,
        min(block_size, total_threads), shown, outputs,
    )  # fmt: skip


def check_argument(value, output: bool, label: str) -> None:
    """An argument gpurace can pass: a NumPy array of numbers, or for an input a number."""
    if type(value).__module__.startswith("cupy"):
        raise UserError(f"{label}: gpurace simulates on NumPy arrays: pass cupy.asnumpy(x), not a {type(value).__name__}")
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc" or not value.dtype.isnative:
            raise UserError(f"{label}: arrays of numbers or bools in the machine's byte order are supported, not {value.dtype}")
        return
    if output:
        raise UserError(f"{label}: an output must be a NumPy array, not {type(value).__name__}")
    if not isinstance(value, (bool, int, float, np.generic)) or isinstance(value, np.void):
        raise UserError(f"{label}: expected a NumPy array or a number, not {type(value).__name__}")


def typed_scalar(value, dtype) -> np.generic:
    """An input number as CuPy passes it: converted to the type the kernel's parameter has (`CScalar.apply_dtype`);
    a Python number that the type cannot hold is an OverflowError, as NumPy says."""
    if dtype is None:
        raise TypeError("a scalar's type is not known from the arrays: give its parameter a type, or pass an array")
    dtype = np.dtype(dtype)
    return value.astype(dtype) if isinstance(value, np.generic) else dtype.type(value)


def argument(cupy: CupyInternals, value, name: str) -> tuple[object, object]:
    """The `_ArgInfo` CuPy's code generator takes for an argument (a `KernelArray`, a typed scalar or, by its shape,
    a `CIndexer`), and the value gpurace passes for it."""
    if isinstance(value, KernelArray):
        view = value.view
        info = (_ARG_KIND_NDARRAY, cupy.core.ndarray, view.dtype, view.ndim, value.c_contiguous, index_32_bits(value))
        return cupy.kernel._ArgInfo(*info), carray(value, name)
    if isinstance(value, tuple):
        info = (_ARG_KIND_INDEXER, cupy.indexer_type, None, len(value), True, math.prod(value) <= 1 << 31)
        return cupy.kernel._ArgInfo(*info), indexer(value)
    return cupy.kernel._ArgInfo(_ARG_KIND_SCALAR, cupy.scalar_type, value.dtype, 0, True, True), value.tobytes()


def shown(value) -> str:
    """An argument as a report shows it: an array's type and shape (and its strides in bytes when they are not
    C-contiguous), a number's type and value, a `CIndexer` (a shape) by its shape."""
    if isinstance(value, np.ndarray):
        layout = "" if value.flags.c_contiguous else f" strides {list(value.strides)}"
        return f"{value.dtype}{list(value.shape)}{layout}"
    if isinstance(value, tuple):
        return f"CIndexer{list(value)}"
    return f"{value.dtype}({value.item()!r})"


def header(cupy: CupyInternals) -> str:
    """The `#include`s CuPy prepends to every kernel it compiles."""
    return "\n".join(f"#include <{h}>" for h in cupy.core._cupy_header_list)


def source_path(name: str, text: str, suffix: str = "") -> Path:
    """Where generated text goes in gpurace's cache: `NAME-HASH{suffix}.cu`, the hash that of `text`."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    stem = re.sub(r"\W", "_", name)[:64] or "kernel"
    return cache_dir() / "cupy" / f"{stem}-{digest}{suffix}.cu"


def write_generated(name: str, text: str) -> Path:
    """The generated source written once to gpurace's cache, so that findings name a file the user can open."""
    path = source_path(name, text)
    write_once(path, text)
    return path
