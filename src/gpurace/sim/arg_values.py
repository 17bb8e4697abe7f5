"""What a launch's inputs resolve to: the values `sim.args` makes and `sim.placement` puts in memory.

Every input, a kernel parameter, a field of a struct parameter or a
`__device__` variable, resolves to one of these: a Buffer (the caller's or
one made from a spec), an AutoBuffer (placed after every other allocation),
an AutoScalar (a value `auto` chose), a StructArg (a struct built field by
field) or packed bytes (a scalar or raw struct given explicitly).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from gpurace.sim.textures import Resource, Sampling, SurfaceObject, TextureObject


@dataclass
class Buffer:
    """A buffer argument: the user's array (updated in place after the run) and its display name."""

    array: np.ndarray
    name: str


@dataclass
class AutoBuffer:
    """An automatic buffer (`auto` for a pointer): its display name and element type.

    The element type (the pointee type, bytes when unknown) only shapes the
    array handed back after the run, which holds the part the kernel used.
    """

    name: str
    dtype: np.dtype
    init: np.ndarray | None = None
    """What `auto:PATTERN` puts at the buffer's start (AUTO_FILL_BYTES); None: all zero."""


@dataclass
class AutoScalar:
    """A scalar chosen by `auto`: the name for reports, the value and its packed bytes.

    `value` None means all zero bytes (a struct whose fields gpurace does not
    fill); `note` then says why, when it is not obvious (its layout could not
    be told).
    """

    name: str
    value: int | float | bool | None
    data: bytes
    note: str | None = None


@dataclass
class StructArg:
    """A struct passed by value, built field by field (`sim.struct_args`).

    `data` is the struct's bytes, each pointer field holding the byte offset
    into its buffer that the pointer points at (zero, its start, unless the
    struct's maker says otherwise: CuPy's `CArray` of a view with negative
    strides points inside the memory it spans); `pointers` the buffers whose
    addresses are added to those fields, by byte offset in the struct;
    `auto_scalars` the values `auto` chose for its other fields, for the
    report.
    """

    name: str
    data: bytes
    pointers: list[tuple[int, Buffer | AutoBuffer]] = field(default_factory=list)
    auto_scalars: list[AutoScalar] = field(default_factory=list)


@dataclass
class TextureArg:
    """A texture or surface object made for a launch (`--arg tex:...`/`surf:...`, `sim.texture_args`): the buffer
    of its texels, and the object it describes once the buffer has an address.

    `resource` is the object's resource with base 0; `sampling` None makes a surface object.
    """

    name: str
    buffer: Buffer
    resource: Resource
    sampling: Sampling | None

    def object(self, base: int) -> TextureObject | SurfaceObject:
        """The object over texels placed at `base`."""
        resource = replace(self.resource, base=base)
        return SurfaceObject(resource) if self.sampling is None else TextureObject(resource, self.sampling)


@dataclass
class TensorMapArg:
    """A tensor map made for a launch (`--arg tensormap:...`, `sim.tensor_maps`) over the buffer of argument
    `arg` (0-based), which `buffer` holds once every argument is resolved; `dims` and `box` innermost first."""

    name: str
    type: str
    dims: tuple[int, ...]
    box: tuple[int, ...]
    arg: int
    swizzle: int = 0  # the shared-memory swizzle span in bytes, 0 for none
    buffer: Buffer | None = None


Value = Buffer | AutoBuffer | AutoScalar | StructArg | TextureArg | TensorMapArg | bytes


@dataclass
class VariableArg:
    """The value given to (or chosen for) a `__device__` variable: `variable` is its PTX name."""

    variable: str
    value: Value


@dataclass
class Launch:
    """Resolved inputs: one value per parameter, and the `__device__` variables whose value the launch sets."""

    values: list[Value]
    variables: list[VariableArg] = field(default_factory=list)

    def buffers(self) -> list[Buffer | AutoBuffer]:
        """Every buffer of the launch, explicit and automatic, inside structs and variables too, in placement order."""
        out: list[Buffer | AutoBuffer] = []
        for value in [*self.values, *(v.value for v in self.variables)]:
            if isinstance(value, (Buffer, AutoBuffer)):
                out.append(value)
            elif isinstance(value, TextureArg):
                out.append(value.buffer)
            elif isinstance(value, StructArg):
                out.extend(buf for _, buf in value.pointers)
        return out

    def auto_scalars(self) -> list[AutoScalar]:
        """Every value `auto` chose for a scalar, struct fields and variables included, in order."""
        out: list[AutoScalar] = []
        for value in [*self.values, *(v.value for v in self.variables)]:
            if isinstance(value, AutoScalar):
                out.append(value)
            elif isinstance(value, StructArg):
                out.extend(value.auto_scalars)
        return out
