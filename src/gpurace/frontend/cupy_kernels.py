"""CuPy kernels (`RawKernel`, `RawModule`): their CUDA source compiled by gpurace, their arguments as CuPy passes them.

A CuPy kernel is CUDA source held in a Python string, with the options CuPy
hands NVRTC. gpurace compiles that source itself (`frontend.compile`, NVRTC
in-process), never CuPy's compiler, so that no GPU, driver or CuPy is needed,
and it honours only the options whose meaning it can reproduce
(`parse_options`): macros, include directories, the C++ standard up to
C++17 (NVRTC's default; the code is compiled as C++17, which accepts
C++11/14 code) and the architecture. Any other option is refused by name,
since silently compiling something else than the GPU would run could hide
or invent a race; no option text ever reaches a compiler unchecked.

The source is written to gpurace's cache directory
(`$XDG_CACHE_HOME/gpurace/cupy`, else `~/.cache/gpurace/cupy`), in a file
named after the kernel and a hash of the text, so that findings name a file
the user can open whose line numbers are those of the string. Name
expressions of a `RawModule` (`name_expressions=["f<float>"]`) instantiate
templates as NVRTC's do: one line per expression is appended to that file,
after the user's lines.

Scalars are passed the way CuPy passes them (`kernel_args`): a NumPy scalar
with its own type's bytes, a Python `int` as `long long`, `float` as
`double`, `bool` as `bool`; the GPU reads as many bytes as the parameter
has. So an integer passes into any narrower integer parameter (its low
bytes, as on the GPU), but a Python float given for a `float` parameter, or
a `numpy.int32` for a `long long`, would be read as other bytes on a GPU:
gpurace refuses those with a message saying which NumPy type to pass.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH, check_define, check_include_dir, normalize_arch
from gpurace.frontend.kernels import KernelInfo, ParamInfo
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module
from gpurace.limits import Limits
from gpurace.cache import cache_dir
from gpurace.sim.args import param_label, scalar_dtype

SUPPORTED_STANDARDS = ("c++03", "c++11", "c++14", "c++17")
"""`-std=` values gpurace honours: NVRTC compiles C++17 by default, which accepts code written for the older ones."""

SUPPORTED_OPTIONS = "-D, -I, -std=c++03/11/14/17, -arch/--gpu-architecture and -lineinfo"

_CUPY_HEADER = re.compile(r"#\s*include\s*[<\"]cupy/")
_NAME_EXPRESSION = re.compile(r"^[^\x00-\x1f\x7f;{}]+$")


@dataclass(frozen=True)
class CompileFlags:
    """What gpurace takes from a CuPy options tuple."""

    defines: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    arch: str = DEFAULT_ARCH


@dataclass(frozen=True)
class CupySource:
    """A CuPy kernel as gpurace compiles it: the source (or a `.ptx` file of `RawModule(path=...)`), the kernel's
    name, its options, the module's name expressions, and whether CuPy launches it cooperatively."""

    code: str | None
    name: str
    options: tuple[str, ...] = ()
    name_expressions: tuple[str, ...] = ()
    cooperative: bool = False
    path: str | None = None


def describe(kernel) -> CupySource:
    """The `CupySource` of a `RawKernel` (CuPy's or `gpurace.cupy.RawKernel`) or of a `(RawModule, name)` pair;
    anything else (a function, ...) is a UserError that says so. (`gpurace.cupy.check` takes CuPy's
    `ElementwiseKernel` and `ReductionKernel` elsewhere: `frontend.cupy_elementwise`, `frontend.cupy_reduction`.)"""
    if isinstance(kernel, tuple):
        if len(kernel) != 2 or not isinstance(kernel[1], str):
            raise UserError("a CuPy kernel is a RawKernel or a (RawModule, kernel name) pair")
        module, name = kernel
        return _source(module, name, getattr(module, "name_expressions", None) or ())
    name = getattr(kernel, "name", None)
    if not isinstance(name, str) or not hasattr(kernel, "code"):
        raise UserError(f"{kernel!r} is not a CuPy RawKernel (an object with .code, .name and .options)")
    return _source(kernel, name, getattr(kernel, "name_expressions", None) or ())


def _source(obj, name: str, expressions) -> CupySource:
    code = getattr(obj, "code", None)
    path = getattr(obj, "file_path", None)
    if code is None and path is None:
        raise UserError(f"{obj!r} has neither CUDA source (.code) nor a file (.file_path)")
    if code is not None and not isinstance(code, str):
        raise UserError(f"the kernel's .code must be a str of CUDA source, got {type(code).__name__}")
    if getattr(obj, "translate_cucomplex", False):
        raise UserError("translate_cucomplex=True is not supported: it needs CuPy's own headers (cupy/complex.cuh)")
    options = getattr(obj, "options", ()) or ()
    if isinstance(options, str) or not all(isinstance(o, str) for o in options):
        raise UserError(f"options must be a tuple of strings, got {options!r}")
    expressions = tuple(expressions)
    for e in expressions:
        if not isinstance(e, str) or not _NAME_EXPRESSION.match(e):
            raise UserError(f"name expression {e!r}: expected one line of C++ naming a kernel, such as 'f<float>'")
    return CupySource(
        code, name, tuple(options), expressions, bool(getattr(obj, "enable_cooperative_groups", False)),
        None if path is None else os.fspath(path),
    )  # fmt: skip


def parse_options(options: tuple[str, ...]) -> CompileFlags:
    """The options gpurace honours, checked; any other option is a UserError naming it.

    Macros and include directories take both spellings NVRTC does (`-DX=1`, `-D X=1`, `--define-macro=X=1`;
    `-Idir`, `-I dir`, `--include-path=dir`), the architecture `-arch=sm_80`, `-arch sm_80` or
    `--gpu-architecture=compute_80`.
    """
    defines: list[str] = []
    includes: list[str] = []
    arch = DEFAULT_ARCH
    words = iter(options)
    for word in words:
        key, value = _split_option(word, words)
        if key == "define":
            defines.append(check_define(value))
        elif key == "include":
            includes.append(check_include_dir(value))
        elif key == "std":
            if value not in SUPPORTED_STANDARDS:
                raise UserError(f"option {word!r}: gpurace compiles C++17 and older code (C++20 is not supported yet)")
        elif key == "arch":
            normalize_arch(value)
            arch = value
        elif key != "lineinfo":  # gpurace always compiles with line information
            raise UserError(
                f"option {word!r} is not supported by gpurace (it honours {SUPPORTED_OPTIONS}); remove it to check the kernel"
            )
    return CompileFlags(tuple(defines), tuple(includes), arch)


_OPTION_KEYS = {
    "-D": "define", "--define-macro": "define",
    "-I": "include", "--include-path": "include",
    "-std": "std", "--std": "std",
    "-arch": "arch", "--gpu-architecture": "arch", "--arch": "arch",
}  # fmt: skip


def _split_option(word: str, rest) -> tuple[str | None, str]:
    """(what the option sets, its value) for one option, taking its value from the next word when it stands
    alone (`-D`, `X=1`); (None, word) for an option gpurace does not know."""
    if word in ("-lineinfo", "--generate-line-info"):
        return "lineinfo", ""
    for prefix, key in _OPTION_KEYS.items():
        if word == prefix:
            value = next(rest, None)
            if value is None:
                raise UserError(f"option {word!r} needs a value")
            return key, value
        if word.startswith(prefix + "="):
            return key, word[len(prefix) + 1 :]
        if prefix in ("-D", "-I") and word.startswith(prefix):
            return key, word[len(prefix) :]
    return None, word


def load_cupy_module(source: CupySource, flags: CompileFlags, limits: Limits | None = None) -> Module:
    """Compile the kernel's source (or read its `.ptx` file) into the module IR; a UserError when it fails."""
    if source.code is None:
        if not source.path.lower().endswith(".ptx"):
            raise UserError(f"{source.path}: only .ptx files of RawModule(path=...) can be checked (cubin holds no PTX)")
        return load_module(source.path, limits=limits)
    if _CUPY_HEADER.search(source.code):
        raise UserError(f"kernel {source.name}: CuPy's own headers (#include <cupy/...>) are not supported yet")
    return load_module(
        source_file(source), include_dirs=flags.include_dirs, defines=flags.defines, arch=flags.arch, limits=limits,
    )  # fmt: skip


def source_file(source: CupySource) -> Path:
    """The file in the cache directory that holds the kernel's source (and its name expressions), written once."""
    text = source.code + "".join(
        f"\nstatic auto gpurace_name_expression_{i} = &{e};" for i, e in enumerate(source.name_expressions)
    )
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    stem = re.sub(r"\W", "_", source.name.split("<")[0])[:64] or "kernel"
    path = cache_dir() / "cupy" / f"{stem}-{digest}.cu"
    write_once(path, text)
    return path


def write_once(path: Path, text: str) -> None:
    """Write `text` to `path` in the cache unless it is there already (its name carries a digest of what it holds)."""
    if path.is_file():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.parent / f".{path.name}.{os.getpid()}"
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)  # two processes writing the same file both leave it whole


def kernel_args(kernel: KernelInfo, args) -> list:
    """The launch's arguments as `gpurace.check` takes them, converted as CuPy passes them (module docstring)."""
    if not isinstance(args, (tuple, list)):
        raise UserError(f"args must be a tuple of the kernel's arguments, got {type(args).__name__}")
    if len(args) != len(kernel.params):
        names = ", ".join(p.type or p.ptx_type for p in kernel.params) or "none"
        raise UserError(f"kernel {kernel.name} takes {len(kernel.params)} argument(s) ({names}), {len(args)} given")
    return [_argument(a, p, param_label(i, p)) for i, (p, a) in enumerate(zip(kernel.params, args))]


def _argument(value, p: ParamInfo, label: str):
    if type(value).__module__.startswith("cupy"):
        raise UserError(f"{label}: gpurace simulates on NumPy arrays: pass cupy.asnumpy(x), not a {type(value).__name__}")
    scalar = isinstance(value, (bool, int, float, np.generic)) and not isinstance(value, np.void)
    # PTX does not say whether a 64-bit parameter of an `extern "C"` kernel is a pointer or a `long long`:
    # the argument does (CuPy passes a number given there as a `long long`)
    if isinstance(value, np.ndarray) or (p.is_pointer and not (p.type is None and scalar)):
        return value  # `sim.args` checks arrays and null pointers against the parameter
    if isinstance(value, np.void):  # a NumPy structured scalar: CuPy passes its bytes, as a struct by value
        return value.tobytes()
    if not scalar:
        return value  # `sim.args` says what is wrong with it
    given = value.dtype if isinstance(value, np.generic) else _python_scalar_dtype(value, label)
    wanted = scalar_dtype(p)
    data = np.array(value, dtype=given).tobytes()
    if wanted is None or wanted.itemsize != p.size:
        return data  # a struct, vector or `__half` (`.b8 [2]`) passed by value: `sim.args` compares the sizes
    integers = "iub"
    same_kind = given.kind in integers if wanted.kind in integers else given == wanted
    if not same_kind or given.itemsize < wanted.itemsize:
        shown = f"numpy.{given.name}" if isinstance(value, np.generic) else f"a Python {type(value).__name__}"
        bits = 8 * wanted.itemsize
        instead = f"numpy.{wanted.name}(...)" if wanted.kind == "f" else f"an int or numpy.int{bits}/uint{bits}"
        raise UserError(
            f"{label}: CuPy passes {shown} as {given.itemsize} bytes of {given.name}, which a GPU would not read "
            f"as the same {wanted.name} value; pass {instead}"
        )
    return data[: wanted.itemsize]  # little-endian: the GPU reads the low bytes


def _python_scalar_dtype(value, label: str) -> np.dtype:
    """The type CuPy gives a Python scalar: bool, int64 (uint64 beyond int64's range), float64."""
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, float):
        return np.dtype(np.float64)
    if -(1 << 63) <= value < (1 << 63):
        return np.dtype(np.int64)
    if 0 <= value < (1 << 64):
        return np.dtype(np.uint64)
    raise UserError(f"{label}: {value} does not fit in 64 bits")
