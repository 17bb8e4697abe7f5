"""Structs passed by value, field by field: `struct:` specs and the pieces `auto` assembles.

A struct parameter whose fields hold pointers (`struct S { int *a; float *b;
int n; }; __global__ void k(S s)`) needs buffers inside it. Its layout comes
from the compiler (`frontend.type_probe`); each field is then given like a
parameter of the field's type: `struct:a=buf:64,b=f32:64:rand,n=64` puts a
buffer of 64 ints at `s.a`, one of 64 random floats at `s.b` and 64 in
`s.n`. A nested struct's fields are named with dots (`inner.p=buf:8`). A
field the spec does not name is zero (a null pointer, 0), as in a C++
aggregate initialised with `{}`. In Python, a dict does the same
(`{"a": array, "n": 64}`).

`assemble` makes the result, a `StructArg`: the struct's bytes with every
pointer field zero, and the buffers whose addresses go into the pointer
fields once they are placed (`sim.placement`).
"""

from __future__ import annotations

import re

from gpurace.errors import UserError
from gpurace.frontend.kernels import ParamInfo
from gpurace.frontend.type_probe import Field, StructLayout
from gpurace.sim.arg_values import AutoScalar, StructArg, Value

STRUCT_PREFIX = "struct:"

# CUDA's own vector and half types: structs without pointers, defined in CUDA's headers rather than the source.
_CUDA_VALUE_TYPES = re.compile(r"^(?:u?(?:char|short|int|long|longlong)[1-4]|float[1-4]|double[1-4]|dim3|__half2?|__nv_bfloat162?)$")
# Spellings of scalar types: fundamental type words, and the standard integer typedefs.
_FUNDAMENTAL = frozenset("void bool char short int long signed unsigned float double wchar_t char16_t char32_t".split())
_SCALAR_TYPEDEF = re.compile(r"^(?:u?int(?:8|16|32|64)_t|size_t|ptrdiff_t)$")
# Where a `struct:` spec's next field starts: a comma followed by `NAME=` (a `bytes:` value has commas too).
_NEXT_FIELD = re.compile(r",(?=\s*[A-Za-z_][\w.]*\s*=)")


def is_struct_type(cpp_type: str | None) -> bool:
    """Whether a by-value parameter (or field) of `cpp_type` is a class type whose fields gpurace could fill:
    not a scalar, pointer, reference, array, enum or one of CUDA's vector types (float2, int4, dim3, ...)."""
    if cpp_type is None or any(c in cpp_type for c in "*&[("):
        return False
    words = [w for w in cpp_type.split() if w not in ("const", "volatile")]
    core = " ".join(words)
    if core.startswith("enum ") or set(words) <= _FUNDAMENTAL or _SCALAR_TYPEDEF.match(core):
        return False
    return _CUDA_VALUE_TYPES.match(core) is None


def split_struct_spec(body: str, label: str) -> dict:
    """`a=buf:64,inner.p=buf:8,n=64` -> {"a": "buf:64", "inner": {"p": "buf:8"}, "n": "64"}: each field's spec,
    nested fields in nested dicts. A field named twice is an error."""
    fields: dict = {}
    for item in _NEXT_FIELD.split(body):
        name, eq, spec = item.partition("=")
        path = name.strip().split(".")
        if not eq or not all(re.fullmatch(r"[A-Za-z_]\w*", part) for part in path):
            raise UserError(f"{label}: expected FIELD=SPEC items separated by commas, got {item.strip()[:60]!r}")
        target = fields
        for part in path[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise UserError(f"{label}: field {'.'.join(path[:-1])} is given twice")
        if path[-1] in target:
            raise UserError(f"{label}: field {name.strip()} is given twice")
        target[path[-1]] = spec.strip()
    return fields


def field_param(parent: ParamInfo, f: Field, parent_name: str) -> ParamInfo:
    """A field seen as a parameter of its own (so that it takes the values a parameter of its type takes);
    `parent_name` is how reports name the struct (`s`), the field is `s.a`."""
    # A field has no PTX type of its own; its C++ type decides what it takes.
    return ParamInfo(f"{parent.name}.{f.name}", f.type, "b8", f.size, f"{parent_name}.{f.name}")


def by_field_path(layout: StructLayout, given: dict) -> dict:
    """`given` with the values for a member whose type is defined in place, which the layout lists by paths
    (`s.p`, see `frontend.struct_fields`), under those paths: {"s": {"p": spec}} -> {"s.p": spec}."""
    known = {f.name for f in layout.fields}
    out = {}
    for name, value in given.items():
        if name not in known and isinstance(value, dict) and any(k.startswith(name + ".") for k in known):
            out.update(by_field_path(layout, {f"{name}.{sub}": v for sub, v in value.items()}))
        else:
            out[name] = value
    return out


def check_field_names(layout: StructLayout, given: dict, label: str) -> None:
    """A UserError naming the struct's fields when `given` names a field it does not have."""
    known = {f.name for f in layout.fields}
    unknown = [name for name in given if name not in known]
    if unknown:
        raise UserError(
            f"{label}: {layout.type} has no field {unknown[0]!r} (its fields: {', '.join(f.name for f in layout.fields)})"
        )


def assemble(name: str, layout: StructLayout, values: dict[str, Value]) -> StructArg:
    """A StructArg from resolved field values: bytes (packed scalars), StructArgs (nested structs), buffers
    (pointer fields) and AutoScalars, by field name; fields without a value stay zero."""
    data = bytearray(layout.size)
    out = StructArg(name, b"")
    for f in layout.fields:
        value = values.get(f.name)
        if value is None:
            continue
        if isinstance(value, StructArg):
            data[f.offset : f.offset + len(value.data)] = value.data
            out.pointers.extend((f.offset + offset, buf) for offset, buf in value.pointers)
            out.auto_scalars.extend(value.auto_scalars)
        elif isinstance(value, (bytes, bytearray)):
            data[f.offset : f.offset + len(value)] = value
        elif isinstance(value, AutoScalar):
            data[f.offset : f.offset + len(value.data)] = value.data
            out.auto_scalars.append(value)
        else:
            out.pointers.append((f.offset, value))
    out.data = bytes(data)
    return out
