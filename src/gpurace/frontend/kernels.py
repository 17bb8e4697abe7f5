"""What a user (and the later stages) need to know about each kernel of a module.

`describe_kernels` joins PTX facts (parameter sizes, shared variables) with the
C++ facts only the mangled name holds (parameter types), so that launch
arguments can be checked against the real signature and `gpurace kernels` can
show it. `sync_sites` is the static inventory of synchronisation in a kernel:
barriers, warp syncs, fences and atomics, with their scopes and source
locations, including those in the device functions it calls, since a barrier in
a `__noinline__` helper synchronises the kernel just the same.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

from gpurace.frontend.demangle import demangle_signature, pointer_to_array
from gpurace.frontend.ptx.debuginfo import read_named_source, resolve_source
from gpurace.frontend.ptx.ir import Addr, Function, Instruction, Module, ParamList, SourceLoc, Sym, Variable, Vec, type_size
from gpurace.frontend.source_params import parameter_names

# Byte sizes of the C++ scalar types a buffer argument can hold (LP64, as nvcc
# uses on 64-bit hosts); `__half`/`__nv_bfloat16` are structs in CUDA's headers
# but behave as 2-byte scalars for buffers.
_SCALAR_SIZES = {
    "bool": 1, "char": 1, "signed char": 1, "unsigned char": 1,
    "short": 2, "unsigned short": 2, "char16_t": 2, "__half": 2, "__nv_bfloat16": 2,
    "int": 4, "unsigned int": 4, "float": 4, "wchar_t": 4, "char32_t": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "double": 8,
}

_ATOMIC_OPS = frozenset({"add", "inc", "dec", "min", "max", "and", "or", "xor", "exch", "cas"})
_MEMBAR_SCOPES = {"cta": "cta", "gl": "gpu", "sys": "sys"}


@dataclass(frozen=True)
class ParamInfo:
    """One kernel parameter: PTX name, C++ type (None for `extern "C"` kernels), PTX type, size in bytes.

    `cpp_name` is the name in the C++ source, when the kernel came from a
    source file whose definition could be read (see `source_params`).
    """

    name: str
    type: str | None
    ptx_type: str
    size: int
    cpp_name: str | None = None

    @property
    def is_pointer(self) -> bool:
        """A pointer parameter: `T*`, or a pointer to arrays `T (*)[N]` (a parameter written `T x[][N]`).

        Parameters of `extern "C"` kernels have no C++ type: 64-bit integers are taken as pointers.
        """
        if self.type is None:
            return self.ptx_type in ("u64", "b64", "s64")
        spelling = self.type.replace("__restrict__", "").strip()
        return spelling.endswith("*") or pointer_to_array(spelling) is not None

    @property
    def is_function_pointer(self) -> bool:
        """A pointer to a function, `float (*)(float*, unsigned int)`: an address passed by value, not a buffer."""
        return self.type is not None and re.search(r"\(\s*\*\s*\)\s*\(", self.type) is not None

    @property
    def pointee(self) -> tuple[str, int] | None:
        """(element type, its size) of the buffer a pointer to scalars points to: `const float*` -> ("float", 4).

        For a pointer to arrays the elements are the arrays' scalars: `float (*)[256]` -> ("float", 4), so
        that a buffer of COUNT elements holds COUNT floats (COUNT / 256 rows).
        """
        if self.type is None:
            return None
        spelling = self.type.replace("__restrict__", "").strip()
        to_array = pointer_to_array(spelling)
        if to_array is not None:
            base = to_array[0]
        elif spelling.endswith("*") and "(" not in spelling:
            base = spelling[:-1].strip()
        else:
            return None
        if "*" in base or "&" in base:
            return None
        core = " ".join(w for w in base.split() if w not in ("const", "volatile"))
        size = _SCALAR_SIZES.get(core)
        return None if size is None else (core, size)


@dataclass(frozen=True)
class KernelInfo:
    """A kernel (`.entry`) as the user knows it."""

    name: str
    mangled: str
    params: tuple[ParamInfo, ...]
    shared_bytes: int


@dataclass(frozen=True)
class SyncSite:
    """One synchronisation instruction in a kernel or in a function it calls.

    `kind` is "barrier", "warpsync", "fence" or "atomic". `op` is the barrier
    operation ("sync", "arrive", "red"), the atomic operation ("add", "cas",
    "exch", ...) or the fence flavour ("membar", "sc", "acq_rel", ...). `scope`
    is explicit or PTX's default (`gpu` for atomics, `cta` for CTA barriers),
    None where the instruction has none (warp syncs, proxy fences). `space` is
    the atomic's state space ("generic" when none is written). `function` is
    the PTX function holding the instruction.
    """

    kind: str
    op: str
    scope: str | None
    space: str | None
    loc: SourceLoc | None
    text: str
    function: str


MAX_DEFINING_FILES = 4
"""Files read at most to find a kernel's parameter names."""


def describe_kernels(module: Module) -> list[KernelInfo]:
    """A KernelInfo per `.entry` of the module, in PTX order."""
    return [describe_kernel(module, fn) for fn in module.kernels]


def describe_kernel(module: Module, fn: Function) -> KernelInfo:
    sig = demangle_signature(fn.name)
    types: tuple[str | None, ...]
    if sig.param_types is not None and len(sig.param_types) == len(fn.params):
        types = sig.param_types
    else:
        types = (None,) * len(fn.params)
    names = module.param_names.get(fn.name) or _source_names(module, fn, sig.name, len(fn.params))
    params = tuple(ParamInfo(p.name, t, p.ptx_type, p.size, n) for p, t, n in zip(fn.params, types, names))
    return KernelInfo(sig.name, fn.name, params, static_shared_bytes(module, fn))


def _source_names(module: Module, fn: Function, kernel_name: str, count: int) -> tuple[str | None, ...]:
    """C++ parameter names from the source that defines the kernel (None each where unknown): the module's
    source file, else the file its own code's line information points to (a kernel defined in a `#include`d
    `.cu` file, or PTX compiled with line information)."""
    for path in _defining_files(module, fn):
        names = _names_in(path, kernel_name, count)
        if names:
            return names
    return (None,) * count


def _names_in(name: str, kernel_name: str, count: int) -> tuple[str | None, ...] | None:
    """`parameter_names` in the file line information calls `name`, read once per version of the file (a
    kernel is described at every launch, and a program launches it thousands of times)."""
    path = resolve_source(name)
    try:
        info = os.stat(path)
    except OSError:
        return None
    return _names_in_version(path, info.st_mtime_ns, info.st_size, kernel_name, count)


@lru_cache(maxsize=256)
def _names_in_version(path: str, _mtime_ns: int, _size: int, kernel_name: str, count: int) -> tuple[str | None, ...] | None:
    source = read_named_source(path)
    return parameter_names(source, kernel_name, count) if source is not None else None


def _defining_files(module: Module, fn: Function) -> list[str]:
    """Where a kernel's definition may be: the module's source (not a `.ptx` file), then the files of the
    kernel's own (not inlined) line information, in order of first appearance."""
    files = []
    path = module.source_path
    if path is not None and not os.fspath(path).endswith(".ptx"):
        files.append(os.fspath(path))
    for ins in fn.body:
        loc = ins.loc
        if loc is not None and loc.inlined_at is None and loc.file not in files:
            files.append(loc.file)
            if len(files) > MAX_DEFINING_FILES:
                break
    return files


def static_shared_bytes(module: Module, kernel: Function) -> int:
    """Bytes of static shared memory the kernel uses.

    Function-scope `.shared` variables of the kernel and its callees, plus
    module-scope `.shared` variables any of them names; extern (dynamic)
    arrays count 0. A variable is counted once however many functions use it.
    """
    module_shared = {v.name: v for v in module.variables if v.space == "shared"}
    used: dict[str, int] = {}
    for fn in reachable_functions(module, kernel):
        for v in fn.variables:
            if v.space == "shared":
                used[f"{fn.name}/{v.name}"] = v.size
        for instr in fn.body:
            for sym in _symbols(instr.operands):
                if sym in module_shared:
                    used[sym] = module_shared[sym].size
    return sum(used.values())


def referenced_globals(module: Module, kernel: Function, spaces: tuple[str, ...] = ("global",)) -> list[Variable]:
    """The module's `.global` (`__device__`) variables, or those of other `spaces` (`const`), that the kernel or a
    function it reaches names, in module order: the variables a launch of it may read or write directly."""
    named = {sym for fn in reachable_functions(module, kernel) for instr in fn.body for sym in _symbols(instr.operands)}
    return [v for v in module.variables if v.space in spaces and v.linkage != "extern" and v.name in named]


def reachable_functions(module: Module, kernel: Function) -> list[Function]:
    """The kernel followed by every defined function it can reach through calls or taken addresses."""
    seen = {kernel.name: kernel}
    todo = [kernel]
    while todo:
        fn = todo.pop()
        for instr in fn.body:
            for sym in _symbols(instr.operands):
                callee = module.functions.get(sym)
                if callee is not None and sym not in seen and not callee.is_declaration:
                    seen[sym] = callee
                    todo.append(callee)
    return list(seen.values())


def sync_sites(module: Module, function: Function) -> list[SyncSite]:
    """Every barrier, warp sync, fence and atomic in `function` and the functions it reaches."""
    sites: list[SyncSite] = []
    for fn in reachable_functions(module, function):
        for instr in fn.body:
            site = _classify(instr, fn.name)
            if site is not None:
                sites.append(site)
    return sites


def source_loc(loc: SourceLoc | None, path: str | os.PathLike) -> SourceLoc | None:
    """The first location in `loc`'s inlining chain that lies in the file `path`.

    An `atomicAdd` inlined from CUDA's headers has its own `.loc` in
    `device_atomic_functions.hpp`; the line a user cares about is the call site
    in their file, further up the chain.
    """
    if loc is None:
        return None
    want = _canonical(os.fspath(path))
    for step in loc.chain():
        if _canonical(step.file) == want:
            return step
    return None


@lru_cache(maxsize=256)
def _canonical(path: str) -> str:
    return os.path.realpath(path)


def _classify(instr: Instruction, fn_name: str) -> SyncSite | None:
    op, mods = instr.opcode, instr.modifiers
    if op == "bar" and mods[:2] == ("warp", "sync"):
        return SyncSite("warpsync", "sync", None, None, instr.loc, instr.text, fn_name)
    if op in ("bar", "barrier"):
        scope = "cluster" if "cluster" in mods else "cta"
        flavour = next((m for m in mods if m in ("sync", "arrive", "red", "wait")), "sync")
        return SyncSite("barrier", flavour, scope, None, instr.loc, instr.text, fn_name)
    if op == "membar":
        scope = next((_MEMBAR_SCOPES[m] for m in mods if m in _MEMBAR_SCOPES), None)
        return SyncSite("fence", "membar", scope, None, instr.loc, instr.text, fn_name)
    if op == "fence":
        flavour = mods[0] if mods else "sc"
        return SyncSite("fence", flavour, instr.scope, None, instr.loc, instr.text, fn_name)
    if op in ("atom", "red"):
        atomic_op = next((m for m in mods if m in _ATOMIC_OPS), "")
        return SyncSite(
            "atomic", atomic_op, instr.scope or "gpu", instr.space or "generic", instr.loc, instr.text, fn_name
        )
    return None


def _symbols(operands) -> list[str]:
    """Names of the symbols an instruction's operands refer to (directly, in addresses, lists, vectors)."""
    out: list[str] = []
    for op in operands:
        if isinstance(op, Sym):
            out.append(op.name)
        elif isinstance(op, Addr) and isinstance(op.base, Sym):
            out.append(op.base.name)
        elif isinstance(op, ParamList):
            out.extend(_symbols(op.items))
        elif isinstance(op, Vec):
            out.extend(_symbols(op.elems))
    return out


def param_layout(fn: Function) -> list[tuple[int, int]]:
    """(offset, size) of each parameter of kernel `fn` in its parameter buffer.

    Parameters are laid out in order, each at its alignment (its `.align`,
    else its type's size): the rule the simulator places a kernel's parameters by
    (`sim.program.build_program`), nvcc's host code packs arguments by, and
    a device-side launch's parameter buffer holds them by.
    """
    layout = []
    offset = 0
    for p in fn.params:
        align = p.align or type_size(p.ptx_type)
        offset = -(-offset // align) * align
        layout.append((offset, p.size))
        offset += p.size
    return layout
