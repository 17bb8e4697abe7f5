"""`__device__` variables as launch inputs: `--global NAME=SPEC`, and automatic buffers for pointer variables.

A kernel may take its inputs from module-scope variables rather than
parameters: `__device__ int *data;`, set by the host with
`cudaMemcpyToSymbol` before the launch. Such a variable starts as its
initialiser says (zero, a null pointer, when there is none); a launch can
set it (or a `__constant__` variable) like a parameter: `--global data=buf:64` points it at a buffer of 64
ints, `--global n=128` sets a scalar, `--global s=struct:a=buf:8` fills a
struct's fields, `--global data=auto` gives it an automatic buffer. NAME is
the variable's C++ name (`data`, `ns::table`) or its PTX name.

When every kernel argument is `auto` (no `--arg` at all), the launch's
inputs are gpurace's to choose, variables included: each pointer variable
that the kernel names and that has no initialiser gets an automatic buffer
of its own, reported as `__device__ data (int*)`. Whether a 64-bit variable
is a pointer is a C++ fact PTX does not keep (`.global .u64 data` could be a
counter), so it is asked of the compiler (`frontend.type_probe`); in a
`.ptx` file, where there is no C++ to ask, no variable is made automatic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.kernels import ParamInfo, referenced_globals
from gpurace.frontend.ptx.ir import Function, Module, Variable
from gpurace.frontend.type_probe import TypeProbe
from gpurace.sim.arg_values import VariableArg
from gpurace.sim.args import AUTO, Resolver, is_pointer, scalar_dtype


_ARRAY_DIMS = re.compile(r"\s*(\[\d*\])+$")


def cpp_name(var: Variable) -> str:
    """A variable's name as C++ writes it: `ns::table` for `_ZN2ns5tableE`, `data` for `data`."""
    return demangle_signature(var.name).name


def resolve_variables(
    resolver: Resolver, module: Module, kernel: Function, given: Mapping[str, object] | None, *, automatic: bool
) -> list[VariableArg]:
    """The values the launch gives `__device__` variables: those `given` (NAME -> a spec, `auto`, a NumPy array,
    a number, bytes or a dict of fields), then, when `automatic`, an automatic buffer for each pointer variable
    the kernel names that has no initialiser and was not given."""
    variables = [v for v in module.variables if v.space in ("global", "const") and v.linkage != "extern"]
    out: list[VariableArg] = []
    chosen: list[tuple[Variable, object, str]] = []
    for name, value in (given or {}).items():
        var = _lookup(variables, name, module)
        if any(var is other for other, _, _ in chosen):
            raise UserError(f"--global {name}: {cpp_name(var)} is given twice")
        shown = value if isinstance(value, str) else type(value).__name__
        chosen.append((var, value, f"--global {f'{name}={shown}'!r}"))
    types = resolver.types.variable_types(cpp_name(v) for v, _, _ in chosen) if resolver.types is not None else {}
    for var, value, label in chosen:
        p = _as_param(var, types.get(cpp_name(var)))
        label = f"{label} for {p.cpp_name} ({p.type or p.ptx_type})"
        if var.dims and isinstance(value, str) and value.strip().startswith(f"{AUTO}:"):
            value = _filled_elements(resolver, p, value.strip()[len(AUTO) + 1 :], label)
        out.append(VariableArg(var.name, resolver.value(value, p, label)))
    if automatic and resolver.types is not None:
        taken = {var.name for var, _, _ in chosen}
        for var, p in automatic_pointers(module, kernel, resolver.types):
            if var.name not in taken:
                out.append(VariableArg(var.name, resolver.auto(p)))
    return out


def element_dtype(p: ParamInfo) -> np.dtype | None:
    """The NumPy type of the elements of an array variable seen as a parameter (`_as_param`), from its C++ type
    (`int [8]`, `float [4][4]`; PTX declares an initialised array as bytes), or None when they are no numbers."""
    if p.type is None:
        return None
    return scalar_dtype(replace(p, type=_ARRAY_DIMS.sub("", p.type)))


def _filled_elements(resolver: Resolver, p: ParamInfo, fill: str, label: str) -> bytes:
    """`--global NAME=auto:PATTERN` for an array variable: every element holds the pattern, as if the host had
    copied it there with `cudaMemcpyToSymbol` (a `__constant__` table given other contents, say)."""
    dtype = element_dtype(p)
    if dtype is None or p.size % dtype.itemsize:
        raise UserError(f"{label}: auto:{fill} fills an array of numbers, and the elements of this one are not known to be")
    return resolver.filled(p.size // dtype.itemsize, dtype, fill, label).tobytes()


def fillable_arrays(module: Module, kernel: Function, types: TypeProbe) -> list[tuple[Variable, ParamInfo]]:
    """The arrays of numbers the kernel names (`__device__` arrays, `__constant__` tables), each seen as a
    parameter: the variables `--global NAME=auto:PATTERN` fills, and the input search varies."""
    arrays = [v for v in referenced_globals(module, kernel, ("global", "const")) if v.dims and v.size]
    known = types.variable_types(cpp_name(v) for v in arrays)
    params = [(v, _as_param(v, known.get(cpp_name(v)))) for v in arrays]
    return [(v, p) for v, p in params if element_dtype(p) is not None]


def automatic_pointers(module: Module, kernel: Function, types: TypeProbe) -> list[tuple[Variable, ParamInfo]]:
    """The pointer variables `auto` gives buffers (module docstring), each with its view as a parameter: those
    the kernel names that hold one 64-bit value without an initialiser and whose C++ type is a pointer."""
    candidates = [v for v in referenced_globals(module, kernel) if not v.dims and v.elem_size == 8 and v.init is None]
    known = types.variable_types(cpp_name(v) for v in candidates)
    params = [(v, _as_param(v, known.get(cpp_name(v)))) for v in candidates]
    return [(v, p) for v, p in params if p.type is not None and is_pointer(p)]


def is_named(var: Variable, name: str) -> bool:
    """Whether `--global` NAME (its C++ name, `::`-qualified or not, or its PTX name) names `var`."""
    return name.strip().removeprefix("::") in (var.name, cpp_name(var))


def _lookup(variables: list[Variable], name: str, module: Module) -> Variable:
    wanted = name.strip().removeprefix("::")
    for var in variables:
        if is_named(var, name):
            return var
    listing = ", ".join(cpp_name(v) for v in variables) or "none"
    raise UserError(
        f"--global {name}: no __device__ or __constant__ variable named {wanted!r} in {module.source_path} (variables: {listing})"
    )


def _as_param(var: Variable, cpp_type: str | None) -> ParamInfo:
    """A variable seen as a parameter (so that it takes what a parameter of its type takes); reports call it
    `__device__ NAME` (or `__constant__ NAME`). Without a C++ type an array variable takes only bytes (its PTX
    type is one element's)."""
    ptx_type = "b8" if var.dims else var.type
    qualifier = "__constant__" if var.space == "const" else "__device__"
    return ParamInfo(var.name, cpp_type, ptx_type, max(var.size, var.elem_size), f"{qualifier} {cpp_name(var)}")
