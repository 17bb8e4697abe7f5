"""Separate compilation: several source files compiled as relocatable device code and linked into one module.

`gpurace check a.cu b.cu` compiles each file with `-rdc=true`, so that a call
of an `extern __device__` function, or a use of an `extern __device__`
variable, stays a reference to a `.extern` declaration, and then resolves the
references as nvlink does:

* a `.extern` function or variable is the `.visible` (or `.weak`) definition
  of another file; a reference that no file defines is an error naming the
  function and the file (and line) that uses it, as nvlink's
  "undefined reference" is;
* two `.visible` definitions of one name are an error; of several `.weak`
  ones (inline and template functions every file instantiates) the first is
  kept, and a `.visible` one wins over them;
* names without linkage (`static` functions and variables, string literals
  such as `$str`) belong to their file: where two files use one such name,
  each file's is renamed apart (`name@file.cu`).

The linked module is one `Module` like any other: the simulator, the
detectors and the reports never know it came from several files.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Addr, AddressOf, Function, Instruction, Module, ParamList, Sym, Variable, Vec
from gpurace.limits import Limits
from gpurace.sim.device_runtime import runtime_call

_LINKED = ("visible", "weak", "common")
"""Linkages that make a definition visible to the other files."""
_BUILTIN_DECLARATIONS = frozenset({"vprintf", "malloc", "free", "__assertfail", "cudaGraphSetConditional"})
"""Functions the CUDA runtime provides: declared by every file that uses them, defined by none."""


def load_linked(
    paths: list[str | os.PathLike],
    *,
    include_dirs: Iterable[str | os.PathLike] = (),
    defines: Iterable[str] = (),
    arch: str = DEFAULT_ARCH,
    device_debug: bool = False,
    limits: Limits | None = None,
    nvcc_flags: Iterable[str] = (),
) -> Module:
    """Compile every file of `paths` as relocatable device code and link them; the first file names the module.
    `nvcc_flags` shape the device code as in `compile_to_ptx`."""
    include_dirs, defines = tuple(include_dirs), tuple(defines)
    options = dict(
        include_dirs=include_dirs, defines=defines, arch=arch, device_debug=device_debug, limits=limits,
        nvcc_flags=tuple(nvcc_flags),
    )
    modules = [load_module(p, **options, relocatable=True) for p in paths]
    return link_modules(modules)


def link_modules(modules: list[Module]) -> Module:
    """One module holding every kernel, function and variable of `modules`, with references resolved."""
    names = [os.fspath(m.source_path or f"module {i + 1}") for i, m in enumerate(modules)]
    if len(set(names)) < len(names):
        raise UserError(f"{_first_repeated(names)} is given twice: give each source file once")
    sizes = {m.address_size for m in modules}
    if len(sizes) > 1:
        raise UserError(f"{', '.join(names)}: the PTX modules mix 32-bit and 64-bit addresses")
    modules = [_rename_private(m, i, modules, names[i]) for i, m in enumerate(modules)]
    first = modules[0]
    linked = Module(
        version=first.version,
        target=first.target,
        address_size=first.address_size,
        source_path=first.source_path,
        compile_options=first.compile_options,
    )
    for m in modules:
        for path in m.files.values():
            if path not in linked.files.values():
                linked.files[len(linked.files) + 1] = path
    defined_in: dict[str, str] = {}
    for m, name in zip(modules, names):
        for fn in m.functions.values():
            _add_function(linked, fn, name, defined_in)
    variables: dict[tuple[str, str], Variable] = {}
    for m, name in zip(modules, names):
        for var in m.variables:
            _add_variable(variables, var, name, defined_in)
    linked.variables = list(variables.values())
    _check_resolved(linked, modules, names)
    return linked


def _first_repeated(names: list[str]) -> str:
    return next(n for i, n in enumerate(names) if n in names[:i])


def _add_function(linked: Module, fn: Function, file: str, defined_in: dict[str, str]) -> None:
    """Add `fn` of `file`: a definition replaces a declaration or a weak definition; two strong ones clash."""
    known = linked.functions.get(fn.name)
    if known is None or (known.is_declaration and not fn.is_declaration):
        linked.functions[fn.name] = fn
        if not fn.is_declaration:
            defined_in[fn.name] = file
        return
    if fn.is_declaration:
        return
    if known.linkage == "weak" and fn.linkage != "weak":
        linked.functions[fn.name] = fn
        defined_in[fn.name] = file
    elif known.linkage != "weak" and fn.linkage != "weak":
        what = "kernel" if fn.is_entry else "device function"
        raise UserError(
            f"the {what} {demangle_signature(fn.name).name} is defined in both {defined_in[fn.name]} and {file}: "
            "a program may define it once"
        )


def _add_variable(variables: dict[tuple[str, str], Variable], var: Variable, file: str, defined_in: dict[str, str]) -> None:
    """As `_add_function`, for module-scope variables (`extern __shared__` arrays all alias the dynamic area)."""
    key = (var.space, var.name)
    known = variables.get(key)
    if known is None or (known.linkage == "extern" and var.linkage != "extern"):
        variables[key] = var
        if var.linkage != "extern":
            defined_in[var.name] = file
        return
    if var.linkage == "extern":
        return
    if known.linkage in ("weak", "common") and var.linkage not in ("weak", "common"):
        variables[key] = var
        defined_in[var.name] = file
    elif known.linkage not in ("weak", "common") and var.linkage not in ("weak", "common"):
        raise UserError(
            f"the __device__ variable {var.name} is defined in both {defined_in[var.name]} and {file}: "
            "a program may define it once"
        )


def _check_resolved(linked: Module, modules: list[Module], names: list[str]) -> None:
    """Every function a file calls and every variable it uses is defined by some file (or by the CUDA runtime).

    A declaration nothing uses needs no definition (nor does it for nvlink).
    """
    missing_vars = {v.name for v in linked.variables if v.linkage == "extern" and v.space in ("global", "const")}
    missing_fns = {
        name for name, fn in linked.functions.items()
        if fn.is_declaration and name not in _BUILTIN_DECLARATIONS and runtime_call(name) is None
    }
    if not missing_vars and not missing_fns:
        return
    for m, file in zip(modules, names):
        for fn in m.functions.values():
            for ins in fn.body:
                for sym in _symbols(ins.operands):
                    if sym in missing_fns or sym in missing_vars:
                        what = "calls the device function" if sym in missing_fns else "uses the __device__ variable"
                        where = f"{ins.loc.file}:{ins.loc.line}" if ins.loc else f"{file} (PTX line {ins.ptx_line})"
                        raise UserError(
                            f"{where}: {_fn_name(fn)} {what} {demangle_signature(sym).name}, which none of the files "
                            f"({', '.join(names)}) defines: give the file that defines it too"
                        )


def _fn_name(fn: Function) -> str:
    return demangle_signature(fn.name).name


def _symbols(operands) -> Iterable[str]:
    for op in operands:
        if isinstance(op, Sym):
            yield op.name
        elif isinstance(op, Addr) and isinstance(op.base, Sym):
            yield op.base.name
        elif isinstance(op, (Vec, ParamList)):
            yield from _symbols(op.elems if isinstance(op, Vec) else op.items)


# --------------------------------------------------------------------------
# Names private to one file
# --------------------------------------------------------------------------


def _rename_private(module: Module, index: int, modules: list[Module], file: str) -> Module:
    """`module` with each name it does not share (no linkage) that another module also uses renamed `name@file`."""
    others: set[str] = set()
    for j, m in enumerate(modules):
        if j != index:
            others.update(m.functions)
            others.update(v.name for v in m.variables)
    private = {f.name for f in module.functions.values() if f.linkage not in _LINKED and f.linkage != "extern"}
    private |= {v.name for v in module.variables if v.linkage not in _LINKED and v.linkage != "extern"}
    renamed = {name: f"{name}@{Path(file).name}" for name in private & others}
    if not renamed:
        return module
    out = replace(module, functions={}, variables=[])
    for fn in module.functions.values():
        new = replace(
            fn,
            name=renamed.get(fn.name, fn.name),
            body=[_renamed_instruction(ins, renamed) for ins in fn.body],
            target_lists={k: tuple(renamed.get(n, n) for n in v) for k, v in fn.target_lists.items()},
        )
        out.functions[new.name] = new
    for var in module.variables:
        init = None if var.init is None else tuple(_renamed_value(v, renamed) for v in var.init)
        out.variables.append(replace(var, name=renamed.get(var.name, var.name), init=init))
    return out


def _renamed_instruction(ins: Instruction, renamed: dict[str, str]) -> Instruction:
    operands = tuple(_renamed_operand(op, renamed) for op in ins.operands)
    return ins if operands == ins.operands else replace(ins, operands=operands)


def _renamed_operand(op, renamed: dict[str, str]):
    if isinstance(op, Sym) and op.name in renamed:
        return Sym(renamed[op.name])
    if isinstance(op, Addr) and isinstance(op.base, Sym) and op.base.name in renamed:
        return replace(op, base=Sym(renamed[op.base.name]))
    if isinstance(op, Vec):
        return Vec(tuple(_renamed_operand(e, renamed) for e in op.elems))
    return op


def _renamed_value(value, renamed: dict[str, str]):
    if isinstance(value, AddressOf) and value.symbol in renamed:
        return replace(value, symbol=renamed[value.symbol])
    return value
