"""Triton kernels (`@triton.jit`): PTX from Triton's own compiler, for a chosen target, without a GPU.

Triton compiles a kernel for the types of its arguments and the values of
its `tl.constexpr` parameters. `compile_kernel` does what Triton's launcher
does before a launch, minus the GPU: it binds the arguments (positional,
then by name, then the parameters' defaults), gives each runtime argument
Triton's type (`*fp32` for a float32 NumPy array, `i32`/`i64` for a Python
int, `fp32` for a float, the NumPy scalar's own type), and compiles
`ASTSource(fn, signature, constexprs, attrs)` with `triton.compile` for
`GPUTarget("cuda", cc, 32)`; Triton's code generator needs no driver.
`unwrap` takes an autotuned kernel's chosen configuration and
`apply_heuristics` the values of `@triton.heuristics`, as their wrappers
would before the launch.
The launcher's specialisations are applied as on a GPU (`triton_type`): an
int equal to 1 becomes a constant, and arrays (which gpurace places at
multiples of 256 bytes, as cudaMalloc does) and ints that are multiples of
16 are marked divisible by 16, unless the kernel's `do_not_specialize`
says otherwise. They decide how Triton vectorises and pipelines (16-byte
loads, `cp.async`), so the PTX simulated is the PTX a GPU would run.

Triton's PTX has one parameter per runtime argument, in order (a
constexpr, or an argument that is None, has none), followed by the
pointers Triton appends: the global scratch buffer and the profiler's
scratch buffer (`EXTRA_PARAMS`), each `size * programs` bytes when the
kernel's metadata asks for any, else null. The parameter list is checked
against that layout, so a Triton that changes it is refused, not misread.
Its line information points at the kernel's `.py` file, so findings name
Python lines (`inline_asm_lines` corrects the lines LLVM gives Triton's
inline asm).
"""

from __future__ import annotations

import importlib.util
import re
import warnings
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Module
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.args import pack_scalar

INSTALL_HINT = "install gpurace[triton] (pip install 'gpurace[triton]')"
DEFAULT_CC = 80
"""The compute capability Triton compiles for when not told (sm_80, the oldest target of Triton's tensor-core paths)."""
EXTRA_PARAMS = ("global_scratch", "profile_scratch")
"""The pointer parameters Triton appends after the kernel's own, in order."""


@dataclass(frozen=True)
class TritonKernel:
    """A compiled Triton kernel: its module (parameters named after the Python ones), entry, the names and
    values of the runtime arguments in parameter order (arrays, and scalars packed by `_packed`), dynamic
    shared memory per program, and the scratch each program needs."""

    module: Module
    name: str
    arg_names: tuple[str, ...]
    runtime_args: tuple
    shared_bytes: int
    scratch_bytes: tuple[int, ...]


def require_triton() -> None:
    if importlib.util.find_spec("triton") is None:
        raise UserError(f"Triton kernels need Triton: {INSTALL_HINT}")


def bind(fn, args: tuple, meta: dict) -> dict:
    """The value of every parameter of `fn` (a `JITFunction`): `args` by position, `meta` by name, else the
    parameter's default; a missing or unknown one is a UserError naming it."""
    names = list(fn.arg_names)
    if len(args) > len(names):
        raise UserError(f"kernel {fn.__name__} takes {len(names)} argument(s) ({', '.join(names)}), {len(args)} given")
    unknown = sorted(set(meta) - set(names))
    if unknown:
        raise UserError(f"kernel {fn.__name__} has no parameter {unknown[0]!r} (parameters: {', '.join(names)})")
    bound = dict(zip(names, args))
    for name in names[len(args) :]:
        if name in meta:
            bound[name] = meta[name]
    twice = sorted(set(names[: len(args)]) & set(meta))
    if twice:
        raise UserError(f"kernel {fn.__name__}: {twice[0]!r} is given both by position and by name")
    for param in fn.params:
        if param.name not in bound:
            if not param.has_default:
                raise UserError(f"kernel {fn.__name__}: no value for parameter {param.name!r}")
            bound[param.name] = param.default
    return bound


def triton_type(value, name: str, specialize: bool = False, align: bool = False) -> tuple[str, str | None]:
    """Triton's type of a runtime argument (`*fp32` for a float32 array, `i32` for a small int, `constexpr`
    for None) and its specialisation, as Triton's launcher gives them: "D" (divisible by 16) for an array
    with `align`, since gpurace places buffers at multiples of 256 bytes as cudaMalloc does, and, with
    `specialize`/`align`, an int equal to 1 becomes `constexpr` and a multiple of 16 gets "D"."""
    from triton._utils import canonicalize_dtype
    from triton.backends.compiler import BaseBackend
    from triton.runtime.jit import native_specialize_impl

    try:
        if isinstance(value, np.ndarray):
            if not value.flags.c_contiguous:
                raise UserError(f"argument {name}: arrays must be C-contiguous")
            return "*" + canonicalize_dtype(value.dtype), "D" if align else ""
        if isinstance(value, np.generic):
            return canonicalize_dtype(value.dtype), None
        if value is None or isinstance(value, (bool, int, float)):
            kind, spec = native_specialize_impl(BaseBackend, value, False, specialize, align)
            return kind, spec
    except (KeyError, TypeError):
        pass
    raise UserError(f"argument {name}: Triton kernels take NumPy arrays and numbers here, not {type(value).__name__}")


@dataclass(frozen=True)
class Unwrapped:
    """A kernel as `@triton.autotune` and `@triton.heuristics` wrap it: the `@triton.jit` function, the
    chosen configuration's meta-parameters, warps and stages (None when not autotuned), and the heuristics,
    outermost first, that compute meta-parameters from the arguments."""

    jit: object
    config_kwargs: dict
    num_warps: int | None
    num_stages: int | None
    heuristics: tuple[dict, ...]
    configs: int
    """How many configurations the autotuner has; 0 when the kernel is not autotuned."""
    pre_hook: object = None
    """The chosen configuration's `pre_hook` (None when it has none)."""
    config_all_kwargs: dict = field(default_factory=dict)
    """The chosen configuration's meta-parameters and options (`Config.all_kwargs()`), as its hook sees them."""


def unwrap(fn, config: int, option: str = "config") -> Unwrapped:
    """The `@triton.jit` function under `fn`'s autotuning and heuristics, with configuration number `config`
    of an autotuned kernel (a GPU would benchmark them all and keep the fastest; each is a different
    program, so each can be checked). Anything else is a UserError; `option` names `config` in it (the
    command line's `--config`)."""
    require_triton()
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    chosen, heuristics, configs = None, [], 0
    while not isinstance(fn, JITFunction):
        if isinstance(fn, Autotuner) and chosen is None:
            if not (isinstance(config, int) and 0 <= config < len(fn.configs)):
                count = len(fn.configs)
                raise UserError(f"{option}: the kernel has {count} autotuning configuration(s), 0 to {count - 1}; got {config!r}")
            configs = len(fn.configs)
            chosen = fn.configs[config]
        elif isinstance(fn, Heuristics):
            heuristics.append(fn.values)
        else:
            raise UserError(f"{fn!r} is not a @triton.jit kernel")
        fn = fn.fn
    if chosen is None:
        return Unwrapped(fn, {}, None, None, tuple(heuristics), 0)
    return Unwrapped(
        fn, dict(chosen.kwargs), chosen.num_warps, chosen.num_stages, tuple(heuristics), configs,
        chosen.pre_hook, chosen.all_kwargs(),
    )  # fmt: skip


def run_pre_hook(unwrapped: Unwrapped, args: tuple, meta: dict) -> None:
    """Call the chosen configuration's `pre_hook` as Triton's autotuner does before the launch: with the
    arguments by name, the call's meta-parameters and the configuration's (`Config.all_kwargs()`). Such a
    hook prepares the launch (zeroes an output, sets a host tensor descriptor's block shape, or returns at
    once for plain pointers, as the fused-attention tutorial's does); its error is a UserError naming it."""
    if unwrapped.pre_hook is None:
        return
    nargs = {**dict(zip(unwrapped.jit.arg_names, args)), **meta, **unwrapped.config_all_kwargs}
    try:
        unwrapped.pre_hook(nargs)
    except Exception as e:  # the user's function: its error, named
        raise UserError(f"the autotuning configuration's pre_hook failed: {type(e).__name__}: {e}") from None


def apply_heuristics(unwrapped: Unwrapped, args: tuple, meta: dict) -> dict:
    """`meta` with the values of the kernel's heuristics, each computed from the arguments by name as Triton
    does (a heuristic's own error names it)."""
    meta = dict(meta)
    for values in unwrapped.heuristics:
        for name, heuristic in values.items():
            try:
                meta[name] = heuristic({**dict(zip(unwrapped.jit.arg_names, args)), **meta})
            except Exception as e:  # the user's function: its error, named
                raise UserError(f"the heuristic for {name!r} failed on these arguments: {type(e).__name__}: {e}") from None
    return meta


_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Compiled kernels by function, then by signature, constexprs and options: a test suite checks one kernel often."""


def compile_kernel(fn, bound: dict, *, num_warps: int, num_stages: int, cc: int) -> TritonKernel:
    """Compile `fn` for the arguments `bind` gave with Triton, once per types and options, and parse its PTX."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if not (isinstance(num_warps, int) and num_warps > 0 and num_warps & (num_warps - 1) == 0):
        raise UserError(f"num_warps must be a power of two, got {num_warps!r}")
    signature, constexprs, attrs, runtime = {}, {}, {}, []
    for index, param in enumerate(fn.params):
        value = bound[param.name]
        if param.is_constexpr:
            signature[param.name], constexprs[param.name] = "constexpr", value
            continue
        kind, spec = triton_type(value, param.name, not param.do_not_specialize, not param.do_not_specialize_on_alignment)
        signature[param.name] = kind
        if kind == "constexpr":
            constexprs[param.name] = value
        else:
            runtime.append((param.name, value))
            if spec == "D":
                attrs[(index,)] = [["tt.divisibility", 16]]
    key = (tuple(signature.items()), repr(sorted(constexprs.items())), tuple(attrs), num_warps, num_stages, cc)
    cache = _compiled.setdefault(fn, {})
    if key in cache:
        return replace(cache[key], runtime_args=tuple(_packed(v, n) for n, v in runtime))
    try:
        # Triton's disk cache is keyed by the kernel's source, not its file: a copy of a kernel file elsewhere
        # would get PTX whose line information names the other file, so every compile here is fresh.
        with warnings.catch_warnings(), triton.knobs.compilation.scope():
            warnings.simplefilter("ignore", UserWarning)  # Triton's notices about its future defaults
            triton.knobs.compilation.always_compile = True
            compiled = triton.compile(
                ASTSource(fn, signature, constexprs, attrs),
                target=GPUTarget("cuda", cc, 32),
                options={"num_warps": num_warps, "num_stages": num_stages},
            )  # fmt: skip
    except Exception as e:  # Triton's compilation errors (CompilationError and others) say what and where
        raise UserError(f"Triton could not compile {fn.__name__}: {e}") from None
    cache[key] = _kernel(compiled, fn, runtime)
    return cache[key]


def _kernel(compiled, fn, runtime: list) -> TritonKernel:
    meta = compiled.metadata
    path = fn.fn.__code__.co_filename
    where = f"{path} (PTX from Triton for {fn.__name__})"
    module = parse_ptx(inline_asm_lines(compiled.asm["ptx"]), where)
    module.source_path = str(Path(path).resolve()) if Path(path).is_file() else None
    name = meta.name
    entry = module.functions.get(name)
    values = [_packed(value, param) for param, value in runtime]
    expected = [8 if isinstance(v, np.ndarray) else len(v) for v in values] + [8] * len(EXTRA_PARAMS)
    if entry is None or [p.size for p in entry.params] != expected:
        raise UserError(f"{where}: the kernel's PTX parameters are not laid out as gpurace expects from this Triton")
    module.param_names[name] = (*(n for n, _ in runtime), *EXTRA_PARAMS)
    scratch = (meta.global_scratch_size, meta.profile_scratch_size)
    return TritonKernel(module, name, tuple(n for n, _ in runtime), tuple(values), meta.shared, scratch)


_INLINE_ASM = re.compile(r"// begin inline asm\n(.*?)// end inline asm", re.S)
_LOC = re.compile(r"^[ \t]*\.loc[ \t][^\n]*$", re.M)


def inline_asm_lines(ptx: str) -> str:
    """The PTX with each inline asm block's line information that of its first line.

    Triton writes its loads and stores as inline asm, several PTX lines for one Python call (a `mov` per
    register, then `ld.global.v4`), and LLVM numbers the lines of an asm block from the call's line on:
    the `ld` of a call on line 23 says line 27. Every line of a block belongs to the call that made it.
    """

    def first_line(block: re.Match) -> str:
        first = _LOC.search(block.group(1))
        if first is None:
            return block.group(0)
        return f"// begin inline asm\n{_LOC.sub(lambda _: first.group(0), block.group(1))}// end inline asm"

    return _INLINE_ASM.sub(first_line, ptx)


SCALAR_DTYPES = {
    "i1": np.bool_, "u1": np.bool_, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
    "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
    "fp16": np.float16, "fp32": np.float32, "fp64": np.float64,
}  # fmt: skip
"""NumPy types of Triton's scalar types. A scalar is passed as the bytes of its Triton type, since the PTX
parameter alone does not tell an `i64` from a pointer or an `fp16` from two bytes."""


def _packed(value, name: str):
    """A runtime argument as the launch takes it: an array as it is, a scalar as the bytes of its Triton type."""
    if isinstance(value, np.ndarray):
        return value
    kind, _ = triton_type(value, name)
    dtype = SCALAR_DTYPES.get(kind)
    if dtype is None:
        raise UserError(f"argument {name}: Triton's scalar type {kind} is not supported yet")
    return pack_scalar(value, np.dtype(dtype), f"argument {name} ({kind})")


def launch_args(kernel: TritonKernel, programs: int) -> list:
    """The launch's arguments: the runtime arguments, then a zeroed scratch buffer per appended pointer (its
    size per program times the programs) or a null pointer."""
    scratch = [np.zeros(size * programs, np.uint8) if size else 0 for size in kernel.scratch_bytes]
    return [*kernel.runtime_args, *scratch]


def program_grid(grid, bound: dict) -> tuple[int, ...]:
    """The launch's programs: an int, 1 to 3 ints, or a function of the kernel's arguments by name, as Triton
    calls it (`lambda META: (triton.cdiv(n, META["BLOCK"]),)`)."""
    if callable(grid):
        grid = grid(dict(bound))
    dims = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and d > 0 for d in dims):
        raise UserError(f"grid: expected 1 to 3 positive numbers of programs, got {grid!r}")
    return tuple(int(d) for d in dims)

