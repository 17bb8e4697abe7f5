"""Tensor maps (`CUtensorMap`, sm_90): what a TMA copy (`sim.tensor_copies`) reads of a tensor in global memory.

A tensor map is a 128-byte, 64-byte aligned object that the host encodes with `cuTensorMapEncodeTiled` and a
kernel receives as a `const __grid_constant__ CUtensorMap` parameter (or in global or constant memory); its
layout is opaque. Under `check` and `run` there is no host code, so `--arg tensormap:...` (`sim.args`) makes one,
and the simulator writes it in its own layout (below), which it reads back at the TMA instruction: a map
with another layout is refused by name.

    tensormap:TYPE:DIMS:BOX:ARG

- TYPE: the element type (`f16`, `bf16`, `f32`, `f64`, `i8`..`i64`, `u8`..`u64`);
- DIMS: the tensor's extents, outermost first as C writes arrays (`64x128`: 64 rows of 128 elements), 1 to 5;
- BOX: the box one copy moves, in the same order (`16x32`); the innermost extent times the element size must be
  a multiple of 16 bytes, each extent at most 256, as `cuTensorMapEncodeTiled` requires;
- ARG: the 0-based position of the kernel argument whose buffer holds the tensor (densely, row-major).

The tensor map is tile mode without interleave or swizzle, element strides 1, out-of-bounds elements filled
with zeros (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`). TMA coordinates go innermost first (`{c0, c1}`: column,
then row), as the PTX ISA writes them, and may be negative or past the extents: elements outside the tensor
are zeros in a load and are not written by a store. The box lands in shared memory densely, innermost first.

The simulator's layout (little-endian): bytes 0-7 the magic `gpurTMAP`, 8-15 the global address, 16 the element
size, 17 the rank, 18 a type code, 24-63 the extents (u64 each, innermost first), 64-83 the box (u32 each,
innermost first). The row strides follow from the extents.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from gpurace.errors import UserError

SIZE = 128
MAGIC = b"gpurTMAP"
MAX_RANK = 5
MAX_BOX = 256
TYPES = {
    "u8": (1, 0), "i8": (1, 1), "u16": (2, 2), "i16": (2, 3), "u32": (4, 4), "i32": (4, 5), "u64": (8, 6),
    "i64": (8, 7), "f16": (2, 8), "bf16": (2, 9), "f32": (4, 10), "f64": (8, 11),
}  # fmt: skip
"""Element types: (size in bytes, code)."""


@dataclass(frozen=True)
class TensorMap:
    """A tiled tensor map: `dims` and `box` innermost first."""

    address: int
    esize: int
    code: int
    dims: tuple[int, ...]
    box: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.box)) * self.esize

    def encode(self) -> bytes:
        out = bytearray(SIZE)
        out[0:8] = MAGIC
        struct.pack_into("<QBBB", out, 8, self.address, self.esize, self.rank, self.code)
        struct.pack_into(f"<{self.rank}Q", out, 24, *self.dims)
        struct.pack_into(f"<{self.rank}I", out, 64, *self.box)
        return bytes(out)

    @staticmethod
    def decode(data: bytes, what: str) -> TensorMap:
        if data[0:8] != MAGIC:
            raise UserError(f"{what} is not a tensor map gpurace made (give it with --arg tensormap:TYPE:DIMS:BOX:ARG)")
        address, esize, rank, code = struct.unpack_from("<QBBB", data, 8)
        dims = struct.unpack_from(f"<{rank}Q", data, 24)
        box = struct.unpack_from(f"<{rank}I", data, 64)
        return TensorMap(address, esize, code, tuple(int(d) for d in dims), tuple(int(b) for b in box))

    def elements(self, coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(global addresses, in-bounds mask), each (lanes, box elements), of the boxes at `coords` (lanes, rank;
        innermost first), the box's elements innermost fastest, as they lie in shared memory."""
        grids = np.meshgrid(*[np.arange(b, dtype=np.int64) for b in reversed(self.box)], indexing="ij")
        offsets = np.stack([g.reshape(-1) for g in reversed(grids)], axis=1)  # (elements, rank), innermost first
        at = coords.astype(np.int64)[:, None, :] + offsets[None, :, :]
        dims = np.array(self.dims, dtype=np.int64)
        inside = ((at >= 0) & (at < dims)).all(axis=2)
        strides = np.concatenate(([1], np.cumprod(dims[:-1]))).astype(np.int64) * self.esize
        offset = (np.where(inside[:, :, None], at, 0) * strides).sum(axis=2)
        return (np.uint64(self.address) + offset.astype(np.uint64)), inside


def parse_spec(rest: str, label: str) -> tuple[str, tuple[int, ...], tuple[int, ...], int]:
    """`TYPE:DIMS:BOX:ARG` -> (type, dims, box, argument index); dims and box innermost first."""
    fields = rest.split(":")
    if len(fields) != 4:
        raise UserError(f"{label}: a tensor map is tensormap:TYPE:DIMS:BOX:ARG, e.g. tensormap:f32:64x128:16x32:1")
    type_, dims_text, box_text, arg_text = fields
    if type_ not in TYPES:
        raise UserError(f"{label}: tensor map element type {type_!r}: one of {', '.join(TYPES)}")
    try:
        dims = tuple(int(d) for d in dims_text.split("x"))[::-1]
        box = tuple(int(b) for b in box_text.split("x"))[::-1]
        arg = int(arg_text)
    except ValueError:
        raise UserError(f"{label}: DIMS and BOX are extents such as 64x128, ARG an argument position") from None
    esize = TYPES[type_][0]
    if not 1 <= len(dims) <= MAX_RANK or len(box) != len(dims):
        raise UserError(f"{label}: a tensor map has 1 to {MAX_RANK} dimensions, and its box as many")
    if any(d < 1 for d in dims) or any(not 1 <= b <= MAX_BOX for b in box):
        raise UserError(f"{label}: extents must be positive and box extents 1..{MAX_BOX}")
    if box[0] * esize % 16:
        raise UserError(f"{label}: the box's innermost extent ({box[0]} x {esize} bytes) must be a multiple of 16 bytes")
    if any(d * esize % 16 for d in np.cumprod(dims[:-1])):
        raise UserError(f"{label}: the tensor's row strides must be multiples of 16 bytes (cuTensorMapEncodeTiled)")
    return type_, dims, box, arg
