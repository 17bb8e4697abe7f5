"""Tensor maps (`CUtensorMap`, sm_90): what a TMA copy (`sim.tensor_copies`) reads of a tensor in global memory.

A tensor map is a 128-byte, 64-byte aligned object that the host encodes with `cuTensorMapEncodeTiled` and a
kernel receives as a `const __grid_constant__ CUtensorMap` parameter (or in global or constant memory); its
layout is opaque. Under `check` and `run` there is no host code, so `--arg tensormap:...` (`sim.args`) makes one;
under `exec` the program's own `cuTensorMapEncodeTiled` call does (`encode_tiled`, through gpurace's runtime).
Either way the simulator writes it in its own layout (below), which it reads back at the TMA instruction: a map
with another layout is refused by name.

    tensormap:TYPE:DIMS:BOX:ARG[:swizzle=SPAN]

- TYPE: the element type (`f16`, `bf16`, `f32`, `f64`, `i8`..`i64`, `u8`..`u64`);
- DIMS: the tensor's extents, outermost first as C writes arrays (`64x128`: 64 rows of 128 elements), 1 to 5;
- BOX: the box one copy moves, in the same order (`16x32`); the innermost extent times the element size must be
  a multiple of 16 bytes, each extent at most 256, as `cuTensorMapEncodeTiled` requires;
- ARG: the 0-based position of the kernel argument whose buffer holds the tensor (densely, row-major);
- SPAN: a shared-memory swizzle, `32B`, `64B` or `128B` (`CU_TENSOR_MAP_SWIZZLE_128B`, ...): the box's
  innermost extent may then span at most that many bytes.

The tensor map is tile mode without interleave, element strides 1, out-of-bounds elements filled
with zeros (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`). TMA coordinates go innermost first (`{c0, c1}`: column,
then row), as the PTX ISA writes them, and may be negative or past the extents: elements outside the tensor
are zeros in a load and are not written by a store. The box lands in shared memory densely, innermost first,
and with a swizzle its 16-byte chunks are then permuted (`swizzled`): in every SPAN bytes, chunk k moves to
chunk k XOR ((address / 128) mod (SPAN / 16)), the pattern repeating every 8 x SPAN bytes (CuTe's
Swizzle<1|2|3, 4, 3>: address bits 4.. XORed with bits 7..). A swizzled copy's shared-memory address must be
aligned to that repeat (256, 512 or 1024 bytes), where the pattern depends only on the offset in the box.

The simulator's layout (little-endian): bytes 0-7 the magic `gpurTMAP`, 8-15 the global address, 16 the element
size, 17 the rank, 18 a type code, 19 the swizzle span in 16-byte chunks (0: none), 20 the interleave layout and
21 the fill mode (`tensormap.replace`'s codes), 24-63 the extents (u64 each, innermost first), 64-83 the box (u32
each, innermost first), 88-119 the byte strides of dimensions 1 and up (u64 each; a dense tensor's follow from
the extents), 120-124 the element strides (u8 each). Every slot of the five dimensions is there whatever the
rank, as in the hardware's object, so that a kernel can edit the map field by field (`replace_field`,
`sim.tensormap_ops`); what only some fields together make invalid is found when a copy uses the map (`decode`).
A kernel may also build a map from nothing, as Triton's device-side tensor descriptors do at sm_90: it zeroes
128 bytes and replaces every field it needs. Zeroed bytes are the map whose every field is zero (`ZERO_MAP` in
this layout: rank 1, element type `u8`, no swizzle, extents and box 0), which `decode` refuses until the kernel
has filled in valid extents and box.
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
    "i64": (8, 7), "f16": (2, 8), "bf16": (2, 9), "f32": (4, 10), "f64": (8, 11), "f32.ftz": (4, 12),
    "tf32": (4, 13), "tf32.ftz": (4, 14),
}  # fmt: skip
"""Element types: (size in bytes, code). A tile copy moves its elements' bytes as they are whatever the type, so
`f32.ftz`, `tf32` and `tf32.ftz` (CUTLASS's maps for tf32 GEMMs) copy as `f32` does; they differ in reductions,
which the PTX ISA has none of for them."""
SWIZZLES = {"32B": 32, "64B": 64, "128B": 128}
"""Swizzle spans by name; `CUtensorMapSwizzle` 1, 2 and 3 in that order."""
_DIMS, _BOX, _STRIDES, _ELEMENT_STRIDES = 24, 64, 88, 120
"""Offsets in the layout (module docstring) of the five extents, box extents, strides and element strides."""


def _zero_map() -> bytes:
    out = bytearray(SIZE)
    out[0:8] = MAGIC
    out[16], out[17] = TYPES["u8"][0], 1  # elemtype 0 (u8), rank field 0 (rank 1); everything else is 0
    return bytes(out)


ZERO_MAP = _zero_map()
"""The map whose every `tensormap.replace` field is zero, in the simulator's layout: what 128 zeroed bytes are."""


def check_magic(data: bytes, what: str) -> None:
    """Refuse 128 bytes that are not a map in the simulator's layout."""
    if bytes(data[0:8]) != MAGIC:
        raise UserError(
            f"{what} is not a tensor map gpurace made (under exec: cuTensorMapEncodeTiled; under check and run: "
            "--arg tensormap:TYPE:DIMS:BOX:ARG; in a kernel: a copy of one, or 128 zeroed bytes edited field by field)"
        )


def refuse_unfollowable(what: str, interleave: int, fill: int, element_strides: tuple[int, ...]) -> None:
    """Refuse by name the valid maps whose copies the simulator does not make: interleaved layouts, NaN fill for
    elements outside the tensor, element strides other than 1."""
    for field, value in (("interleave", interleave), ("oobFill", fill)):
        if value:
            raise UserError(f"{what}: tensor maps with {field} {value} are not supported (only 0, none)")
    if any(e != 1 for e in element_strides):
        raise UserError(f"{what}: tensor maps with element strides other than 1 are not supported ({element_strides})")


def swizzled(offsets: np.ndarray, span: int) -> np.ndarray:
    """Byte `offsets` from an aligned base (8 x `span` bytes) with their 16-byte chunks permuted as a `span`-byte
    swizzle permutes them: bits 4.. XOR bits 7.. (as many bits as `span` has 16-byte chunks, log2)."""
    if not span:
        return offsets
    mask = offsets.dtype.type(span // 16 - 1)
    return offsets ^ (((offsets >> offsets.dtype.type(7)) & mask) << offsets.dtype.type(4))


@dataclass(frozen=True)
class TensorMap:
    """A tiled tensor map: `dims` and `box` innermost first."""

    address: int
    esize: int
    code: int
    dims: tuple[int, ...]
    box: tuple[int, ...]
    strides: tuple[int, ...] = ()
    """Bytes between consecutive indices of dimensions 1 and up; () for a dense tensor."""
    swizzle: int = 0
    """The shared-memory swizzle span in bytes (32, 64 or 128), 0 for none."""

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.box)) * self.esize

    def encode(self) -> bytes:
        out = bytearray(SIZE)
        out[0:8] = MAGIC
        struct.pack_into("<QBBBB", out, 8, self.address, self.esize, self.rank, self.code, self.swizzle // 16)
        struct.pack_into(f"<{self.rank}Q", out, _DIMS, *self.dims)
        struct.pack_into(f"<{self.rank}I", out, _BOX, *self.box)
        struct.pack_into(f"<{self.rank - 1}Q", out, _STRIDES, *self.byte_strides()[1:])
        out[_ELEMENT_STRIDES : _ELEMENT_STRIDES + MAX_RANK] = bytes([1] * MAX_RANK)
        return bytes(out)

    def byte_strides(self) -> tuple[int, ...]:
        """Bytes between consecutive indices of each dimension, innermost (the element size) first."""
        if self.strides:
            return (self.esize, *self.strides)
        return tuple(int(v) for v in np.concatenate(([1], np.cumprod(self.dims[:-1]))) * self.esize)

    @staticmethod
    def decode(data: bytes, what: str) -> TensorMap:
        """The map in `data`; one that a kernel's edits (`replace_field`) left invalid, or that the simulator cannot
        follow, is refused naming the field."""
        check_magic(data, what)
        address, esize, rank, code, chunks, interleave, fill = struct.unpack_from("<QBBBBBB", data, 8)
        if not 1 <= rank <= MAX_RANK:
            raise UserError(f"{what} has rank {rank}: 1 to {MAX_RANK}")
        dims = tuple(int(d) for d in struct.unpack_from(f"<{rank}Q", data, _DIMS))
        box = tuple(int(b) for b in struct.unpack_from(f"<{rank}I", data, _BOX))
        strides = tuple(int(v) for v in struct.unpack_from(f"<{rank - 1}Q", data, _STRIDES))
        element_strides = tuple(int(e) for e in data[_ELEMENT_STRIDES : _ELEMENT_STRIDES + rank])
        span = 16 * chunks
        problem = (
            "its global address is not 16-byte aligned" if address % 16
            else "an element stride is outside 1..8" if any(not 1 <= e <= 8 for e in element_strides)
            else "an extent is 0 or past 2^32" if any(not 1 <= d <= 1 << 32 for d in dims)
            else "a stride is not a multiple of 16 bytes or reaches 2^40" if any(v % 16 or v >= 1 << 40 for v in strides)
            else f"a box extent is outside 1..{MAX_BOX}" if any(not 1 <= b <= MAX_BOX for b in box)
            else f"the box's innermost row ({box[0]} x {esize} bytes) is not a multiple of 16 bytes" if box[0] * esize % 16
            else f"the box's innermost row ({box[0]} x {esize} bytes) is longer than its {span}-byte swizzle"
            if span and box[0] * esize > span
            else None
        )  # fmt: skip
        if problem:
            raise UserError(f"{what} is not a valid tensor map: {problem} (extents {dims}, box {box}, strides {strides})")
        refuse_unfollowable(what, interleave, fill, element_strides)
        return TensorMap(address, esize, code, dims, box, strides, span)

    def elements(self, coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(global addresses, in-bounds mask), each (lanes, box elements), of the boxes at `coords` (lanes, rank;
        innermost first), the box's elements innermost fastest, as they lie in shared memory."""
        grids = np.meshgrid(*[np.arange(b, dtype=np.int64) for b in reversed(self.box)], indexing="ij")
        offsets = np.stack([g.reshape(-1) for g in reversed(grids)], axis=1)  # (elements, rank), innermost first
        at = coords.astype(np.int64)[:, None, :] + offsets[None, :, :]
        dims = np.array(self.dims, dtype=np.int64)
        inside = ((at >= 0) & (at < dims)).all(axis=2)
        strides = np.array(self.byte_strides(), dtype=np.int64)
        offset = (np.where(inside[:, :, None], at, 0) * strides).sum(axis=2)
        return (np.uint64(self.address) + offset.astype(np.uint64)), inside


def parse_spec(rest: str, label: str) -> tuple[str, tuple[int, ...], tuple[int, ...], int, int]:
    """`TYPE:DIMS:BOX:ARG[:swizzle=SPAN]` -> (type, dims, box, argument index, swizzle span); dims and box
    innermost first."""
    fields = rest.split(":")
    swizzle = 0
    if len(fields) == 5 and fields[4].startswith("swizzle="):
        span = fields.pop()[len("swizzle=") :]
        if span not in SWIZZLES:
            raise UserError(f"{label}: tensor map swizzle {span!r}: one of {', '.join(SWIZZLES)}")
        swizzle = SWIZZLES[span]
    if len(fields) != 4:
        raise UserError(
            f"{label}: a tensor map is tensormap:TYPE:DIMS:BOX:ARG[:swizzle=32B|64B|128B], e.g. tensormap:f32:64x128:16x32:1"
        )
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
    if swizzle and box[0] * esize > swizzle:
        raise UserError(f"{label}: with a {swizzle}-byte swizzle the box's innermost extent may span at most {swizzle} bytes "
                        f"({box[0]} x {esize} given), as cuTensorMapEncodeTiled requires")  # fmt: skip
    return type_, dims, box, arg, swizzle


PTX_ELEMTYPES = ("u8", "u16", "u32", "i32", "u64", "i64", "f16", "f32", "f32.ftz", "f64", "bf16", "tf32", "tf32.ftz")
"""`tensormap.replace.tile.elemtype`'s codes in order (the PTX ISA's; from 8 on they differ from
`CUtensorMapDataType`'s). 13 to 15, the packed 4- and 6-bit types, have no NumPy counterpart."""
PTX_SWIZZLES = (0, 32, 64, 128)
"""`tensormap.replace.tile.swizzle_mode`'s codes 0 to 3 as spans in bytes; 4, the 96-byte swizzle, is sm_100's."""
FIELD_VALUES = {"elemtype": 15, "interleave_layout": 2, "swizzle_mode": 4, "fill_mode": 1}
"""The largest immediate each of `tensormap.replace`'s enumerated fields takes (the PTX ISA's table)."""
ORDINALS = {"box_dim": 5, "global_dim": 5, "global_stride": 4, "element_stride": 5}
"""How many ordinals (`ord`) each per-dimension field has: `global_stride`'s ordinal i is dimension i + 1 (the
innermost dimension's stride is the element size)."""
_U64 = {"global_address": 8, "global_dim": _DIMS, "global_stride": _STRIDES}
"""The fields that are u64 in the layout, and the offset of their first slot."""


def enumerated_field(field: str, value: int, what: str) -> None:
    """Refuse an immediate of `tensormap.replace.tile.FIELD` outside the PTX ISA's table, or one the simulator
    does not follow (packed types, the 96-byte swizzle, interleaved layouts, NaN fill), by name."""
    if not 0 <= value <= FIELD_VALUES[field]:
        raise UserError(f"{what}: {value} is not a {field} (0 to {FIELD_VALUES[field]})")
    if field == "elemtype" and value >= len(PTX_ELEMTYPES):
        raise UserError(f"{what}: element type {value} (a packed 4- or 6-bit type) is not supported")
    if field == "swizzle_mode" and value == 4:
        raise UserError(f"{what}: the 96-byte swizzle (sm_100) is not supported")
    if field in ("interleave_layout", "fill_mode") and value:
        refuse_unfollowable(what, value if field == "interleave_layout" else 0, value if field == "fill_mode" else 0, ())


def replace_field(data: np.ndarray, field: str, ordinal: int, values: np.ndarray, what: str) -> None:
    """`tensormap.replace.tile.FIELD`: write `values` (one per map) into `field` (slot `ordinal` of a per-dimension
    field) of the maps `data` (maps, 128) holds, in the layout above. Enumerated fields take the PTX ISA's codes
    (checked by `enumerated_field`); `rank` takes the rank minus one; an element stride must be 1 to 8."""
    values = values.astype(np.uint64)
    if field in _U64:
        at = _U64[field] + 8 * ordinal
        data[:, at : at + 8] = values.astype("<u8")[:, None].view(np.uint8)
    elif field == "box_dim":
        at = _BOX + 4 * ordinal
        data[:, at : at + 4] = values.astype("<u4")[:, None].view(np.uint8)
    elif field == "rank":
        if (values > MAX_RANK - 1).any():
            raise UserError(f"{what}: a rank field of {int(values.max())}: 0 to {MAX_RANK - 1} (the rank minus one)")
        data[:, 17] = values + 1
    elif field == "element_stride":
        if ((values < 1) | (values > 8)).any():
            raise UserError(f"{what}: an element stride of {int(values[(values < 1) | (values > 8)][0])}: 1 to 8")
        data[:, _ELEMENT_STRIDES + ordinal] = values
    elif field == "elemtype":
        esize, code = TYPES[PTX_ELEMTYPES[int(values[0])]]
        data[:, 16], data[:, 18] = esize, code
    elif field == "swizzle_mode":
        data[:, 19] = PTX_SWIZZLES[int(values[0])] // 16
    else:  # interleave_layout, fill_mode: only 0 passes `enumerated_field`
        data[:, 20 if field == "interleave_layout" else 21] = values


DRIVER_TYPES = {
    0: "u8", 1: "u16", 2: "u32", 3: "i32", 4: "u64", 5: "i64", 6: "f16", 7: "f32", 8: "f64", 9: "bf16", 10: "f32.ftz",
    11: "tf32", 12: "tf32.ftz",
}  # fmt: skip
"""`CUtensorMapDataType` values the simulator has an element type for (the packed 4- and 6-bit types it has not)."""
CUDA_ERROR_INVALID_VALUE = 1


def encode_tiled(
    data_type: int,
    address: int,
    dims: tuple[int, ...],
    strides: tuple[int, ...],
    box: tuple[int, ...],
    element_strides: tuple[int, ...],
    interleave: int,
    swizzle: int,
    oob_fill: int,
) -> bytes | int:
    """`cuTensorMapEncodeTiled`'s map (innermost first, as its arrays are), or the `CUresult` it fails with.

    What the driver refuses is refused alike (CUDA_ERROR_INVALID_VALUE): a rank outside 1..5, a global address
    not 16-byte aligned, extents of 0 or past 2^32, strides that are not multiples of 16 or reach 2^40, box
    extents outside 1..256, element strides outside 1..8, an innermost box row not
    a multiple of 16 bytes, or longer than the swizzle's span. Valid maps that the simulator cannot follow
    (types without a NumPy counterpart, interleaved layouts, the 128B swizzles with 32- and 64-byte atoms,
    element strides other than 1, NaN fill) are a UserError naming the field.
    """
    rank = len(dims)
    if data_type not in DRIVER_TYPES:
        raise UserError(f"tensor maps of data type {data_type} (CUtensorMapDataType) are not supported")
    esize, code = TYPES[DRIVER_TYPES[data_type]]
    if (
        not 1 <= rank <= MAX_RANK
        or address % 16
        or any(not 1 <= d <= 1 << 32 for d in dims)
        or any(v % 16 or v >= 1 << 40 for v in strides)
        or any(not 1 <= b <= MAX_BOX for b in box)
        or any(not 1 <= e <= 8 for e in element_strides)
        or box[0] * esize % 16
        or not 0 <= swizzle <= 6
        or (interleave == 0 and 1 <= swizzle <= 3 and box[0] * esize > 16 << swizzle)
    ):
        return CUDA_ERROR_INVALID_VALUE
    if swizzle > 3:
        raise UserError(f"tensor maps with swizzle {swizzle} (a 128B swizzle of 32- or 64-byte atoms) are not supported (0 to 3)")
    refuse_unfollowable("cuTensorMapEncodeTiled", interleave, oob_fill, tuple(element_strides))
    span = 16 << swizzle if swizzle else 0
    return TensorMap(address, esize, code, tuple(dims), tuple(box), tuple(strides), span).encode()
