"""Putting a launch's resolved inputs into simulated memory.

Every buffer is allocated and filled, and its address is written where the
kernel reads it: in the parameter bytes, in a field of a struct parameter,
or in a `__device__` variable. Automatic buffers are placed last, after
every other global allocation (`Memory.allocate_automatic`), so their
addresses are written once all of them are placed. After the run,
`copy_back` returns each buffer's contents to the array it was made from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Function
from gpurace.sim.arg_values import AutoBuffer, AutoScalar, Buffer, Launch, StructArg, TensorMapArg, TextureArg, Value
from gpurace.sim.tensor_maps import TYPES, TensorMap
from gpurace.sim.memory import Allocation, Memory
from gpurace.sim.program import Program

Write = Callable[[int, bytes], None]
"""Writes bytes at an offset of one input's place (a parameter's bytes, a variable)."""


@dataclass
class Placement:
    """The kernel's parameter bytes, every buffer's allocation by name, and the automatic ones in order."""

    params: bytes
    allocations: dict[str, Allocation]
    automatic: list[Allocation]


def place_inputs(mem: Memory, fn: Function, program: Program, launch: Launch, variables: dict[str, Allocation]) -> Placement:
    """Place `launch` in `mem`: its parameter values in the parameter bytes, its variable values in the variables'
    allocations (`variables`, by PTX name)."""
    params = bytearray(program.kernel_param_size)
    allocations: dict[str, Allocation] = {}
    automatic: list[tuple[Write, AutoBuffer]] = []
    tensor_maps: list[tuple[Write, TensorMapArg]] = []  # written once their buffers have addresses

    def put(value: Value, write: Write) -> None:
        if isinstance(value, Buffer):
            alloc = mem.allocate_global(value.name, value.array.nbytes, init=bytes_of(value.array), symbol=False, isolated=True)
            allocations[value.name] = alloc
            write(0, int(alloc.base).to_bytes(8, "little"))
        elif isinstance(value, AutoBuffer):
            automatic.append((write, value))
        elif isinstance(value, TextureArg):  # its texels' buffer, then the object over them, by handle
            put(value.buffer, lambda at, data: None)
            handle = len(mem.textures) + 1
            mem.textures[handle] = value.object(int(allocations[value.buffer.name].base))
            write(0, handle.to_bytes(8, "little"))
        elif isinstance(value, TensorMapArg):
            tensor_maps.append((write, value))
        elif isinstance(value, StructArg):
            write(0, value.data)
            for offset, buffer in value.pointers:
                held = value.data[offset : offset + 8]
                put(buffer, lambda at, data, offset=offset, held=held: write(offset + at, _displaced(data, held)))
        else:
            write(0, value.data if isinstance(value, AutoScalar) else value)

    for i, (p, value) in enumerate(zip(fn.params, launch.values)):
        put(value, _param_writer(params, program.kernel_params[p.name], p.size, f"argument {i + 1}"))
    for v in launch.variables:
        alloc = variables[v.variable]
        put(v.value, lambda at, data, alloc=alloc: mem.write(alloc, data, at))
    auto_allocs = mem.allocate_automatic([value.name for _, value in automatic]) if automatic else []
    for (write, value), alloc in zip(automatic, auto_allocs):
        allocations[value.name] = alloc
        write(0, int(alloc.base).to_bytes(8, "little"))
        if value.init is not None:
            mem.write(alloc, value.init)
    for write, value in tensor_maps:
        esize, code = TYPES[value.type]
        base = int(allocations[value.buffer.name].base)
        write(0, TensorMap(base, esize, code, value.dims, value.box, swizzle=value.swizzle).encode())
    return Placement(bytes(params), allocations, auto_allocs)


def copy_back(mem: Memory, launch: Launch, allocations: dict[str, Allocation]) -> None:
    """Each buffer's memory after the run back into its array (the caller's arrays are updated in place)."""
    for buffer in launch.buffers():
        if isinstance(buffer, Buffer):
            bytes_of(buffer.array)[:] = np.frombuffer(mem.read(allocations[buffer.name]), dtype=np.uint8)


def _displaced(address: bytes, displacement: bytes) -> bytes:
    """A buffer's address plus the byte offset its struct's pointer field held (`StructArg`): where the pointer points."""
    return (int.from_bytes(address, "little") + int.from_bytes(displacement, "little")).to_bytes(8, "little")


def bytes_of(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-contiguous array (of any shape, 0-d too) as a writable uint8 view."""
    return array.reshape(-1).view(np.uint8)


def _param_writer(params: bytearray, offset: int, size: int, what: str) -> Write:
    def write(at: int, data: bytes) -> None:
        if at + len(data) > size:
            raise UserError(f"{what}: {len(data)} bytes do not fit the {size}-byte parameter")
        params[offset + at : offset + at + len(data)] = data

    return write
