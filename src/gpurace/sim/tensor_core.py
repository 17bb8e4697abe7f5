"""Tensor-core semantics: fragment layouts and the matrix arithmetic of `mma`, `wmma`, `ldmatrix` and `movmatrix`.

This module knows nothing of the engine: it maps between the registers a warp
holds (an array `[warps, 32 lanes, registers]` of raw register bits) and the
matrices they stand for, and computes D = A*B + C on those matrices with
NumPy. `sim.tensor_core_ops` decodes the instructions and does the memory
accesses; the layouts here are the PTX ISA's ("Matrix fragments for mma.mMnNkK"),
written as the ISA writes them, with groupID = lane >> 2 and
threadID_in_group = lane % 4.

Floating-point accumulation: the hardware's order is unspecified. Products of
f16, bf16, tf32, e4m3 and e5m2 inputs are exact in float32, so only the sums round; the
simulator starts from C and adds the products one k at a time, in increasing
k, rounding to float32 after each addition (float64 for f64), and rounds the
final value to the destination type (f16: round to nearest even). Integer
products and sums are exact; `.satfinite` clamps the final sum to the s32
range, without it the sum wraps modulo 2**32.

`wmma` fragments are opaque in the ISA. The simulator's layout, the same for
loads, `wmma.mma` and stores: lane L's element i of a fragment holding n
elements per lane is element f = (L*n + i) mod (rows*cols) of the matrix,
counted row by row for A, C and D and column by column for B (A's lane L of
m16n16k16 f16 holds row L mod 16, B's column L mod 16). A kernel that
reads or writes single fragment elements sees this layout, which is not the
hardware's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from gpurace.errors import UserError
from gpurace.sim.memory.floats import bf16_to_f32, f32_to_bf16

WARP = 32
ELEMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s8": 8, "u8": 8, "s32": 32, "b16": 16,
                "e4m3": 8, "e5m2": 8}  # fmt: skip
INTEGER_TYPES = frozenset({"s8", "u8", "s32"})
TF32_MASK = np.uint32(0xFFFFE000)
"""A .tf32 operand is a .b32 register of which the tensor core reads the sign, exponent and top 10 mantissa bits."""


# ---------------------------------------------------------------------------- element codecs


def _fp8_values(exponent_bits: int, has_infinity: bool) -> np.ndarray:
    """The float32 value of each of the 256 codes of an 8-bit float with a sign bit, `exponent_bits` of exponent
    and the rest mantissa: e5m2 as IEEE 754 has it (infinities, NaNs), e4m3 (PTX's `.e4m3`, OCP's E4M3FN)
    without infinities, its only NaNs the codes S.1111.111 (largest finite 448)."""
    mantissa_bits = 7 - exponent_bits
    bias = (1 << (exponent_bits - 1)) - 1
    code = np.arange(256)
    sign = np.where(code & 0x80, -1.0, 1.0)
    exponent = (code >> mantissa_bits) & ((1 << exponent_bits) - 1)
    mantissa = code & ((1 << mantissa_bits) - 1)
    fraction = mantissa / (1 << mantissa_bits)
    normal = (1.0 + fraction) * np.exp2(exponent - bias)
    values = sign * np.where(exponent == 0, fraction * np.exp2(1 - bias), normal)
    top = exponent == (1 << exponent_bits) - 1
    if has_infinity:
        values = np.where(top, np.where(mantissa == 0, sign * np.inf, np.nan), values)
    else:
        values = np.where(top & (mantissa == (1 << mantissa_bits) - 1), np.nan, values)
    return values.astype(np.float32)


FP8_VALUES = {"e4m3": _fp8_values(4, has_infinity=False), "e5m2": _fp8_values(5, has_infinity=True)}
"""float32 value by code of each 8-bit float type (`wgmma` inputs)."""


def decode(raw: np.ndarray, etype: str) -> np.ndarray:
    """Raw element bits (unsigned integers) to values: float32 (float64 for f64), or int64 for integer types."""
    if etype == "f16":
        return raw.astype(np.uint16).view(np.float16).astype(np.float32)
    if etype == "bf16":
        return bf16_to_f32(raw.astype(np.uint16))
    if etype == "tf32":
        return (raw.astype(np.uint32) & TF32_MASK).view(np.float32)
    if etype == "f32":
        return raw.astype(np.uint32).view(np.float32)
    if etype == "f64":
        return raw.astype(np.uint64).view(np.float64)
    if etype in FP8_VALUES:
        return FP8_VALUES[etype][raw.astype(np.uint8)]
    if etype == "s8":
        return raw.astype(np.uint8).view(np.int8).astype(np.int64)
    if etype == "u8":
        return raw.astype(np.uint8).astype(np.int64)
    if etype == "s32":
        return raw.astype(np.uint32).view(np.int32).astype(np.int64)
    raise ValueError(f"no decoding for .{etype}")


def encode(values: np.ndarray, etype: str) -> np.ndarray:
    """Values to raw element bits (uint64), rounding floats to nearest even; integers wrap to the width."""
    if etype == "f16":
        return values.astype(np.float16).view(np.uint16).astype(np.uint64)
    if etype == "bf16":
        return f32_to_bf16(values.astype(np.float32)).astype(np.uint64)
    if etype == "f32":
        return values.astype(np.float32).view(np.uint32).astype(np.uint64)
    if etype == "f64":
        return values.astype(np.float64).view(np.uint64)
    if etype == "s32":
        return (values.astype(np.int64) & 0xFFFFFFFF).astype(np.uint64)
    raise ValueError(f"no encoding for .{etype}")


# ---------------------------------------------------------------------------- fragments


@dataclass(frozen=True)
class Fragment:
    """How one operand's matrix (`rows` x `cols` of `etype`) is spread over a warp's registers.

    `row_of[lane, i]` and `col_of[lane, i]` place element i of a lane's
    fragment; elements are packed `per_reg` to a register of `reg_bits`
    bits, element 0 in the lowest bits ("elements low to high").
    """

    etype: str
    rows: int
    cols: int
    row_of: np.ndarray
    col_of: np.ndarray
    reg_bits: int

    @property
    def per_reg(self) -> int:
        return self.reg_bits // ELEMENT_BITS[self.etype]

    @property
    def registers(self) -> int:
        return self.row_of.shape[1] // self.per_reg

    @property
    def reg_type(self) -> str:
        """The PTX type the registers are read and written as."""
        return "f64" if self.reg_bits == 64 else "b32"

    def elements(self, words: np.ndarray) -> np.ndarray:
        """`[warps, 32, registers]` register bits -> `[warps, 32, elements]` raw element bits."""
        bits = ELEMENT_BITS[self.etype]
        w = words.astype(np.uint64)[..., None] >> (np.arange(self.per_reg, dtype=np.uint64) * np.uint64(bits))
        if bits < 64:
            w = w & np.uint64((1 << bits) - 1)
        return w.reshape(*words.shape[:-1], -1)

    def words(self, elements: np.ndarray) -> np.ndarray:
        """`[warps, 32, elements]` raw element bits -> `[warps, 32, registers]` register bits (uint64)."""
        bits = ELEMENT_BITS[self.etype]
        parts = elements.astype(np.uint64).reshape(*elements.shape[:-1], self.registers, self.per_reg)
        shifted = parts << (np.arange(self.per_reg, dtype=np.uint64) * np.uint64(bits))
        return np.bitwise_or.reduce(shifted, axis=-1)

    def gather(self, words: np.ndarray) -> np.ndarray:
        """The matrices `[warps, rows, cols]` (raw element bits) that the warps' registers hold.

        Where two lanes hold the same element (wmma's A and B fragments), the higher lane's value is taken.
        """
        out = np.zeros((words.shape[0], self.rows, self.cols), dtype=np.uint64)
        out[:, self.row_of, self.col_of] = self.elements(words)
        return out

    def scatter(self, matrices: np.ndarray) -> np.ndarray:
        """The registers `[warps, 32, registers]` holding `[warps, rows, cols]` raw element bits."""
        return self.words(matrices[:, self.row_of, self.col_of])


def _lanes(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(groupID, threadID_in_group, i) broadcast to `[32, n]`."""
    lane = np.arange(WARP)[:, None]
    i = np.arange(n)[None, :]
    return np.broadcast_to(lane >> 2, (WARP, n)), np.broadcast_to(lane & 3, (WARP, n)), np.broadcast_to(i, (WARP, n))


Placement = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def isa_fragment(etype: str, rows: int, cols: int, n: int, place: Placement) -> Fragment:
    """A fragment of n elements per lane placed by `place(groupID, threadID_in_group, i) -> (row, col)`."""
    g, t, i = _lanes(n)
    row, col = place(g, t, i)
    row = np.broadcast_to(row, (WARP, n)).astype(np.int64)
    col = np.broadcast_to(col, (WARP, n)).astype(np.int64)
    return Fragment(etype, rows, cols, row, col, 64 if etype == "f64" else 32)


# The mma placements, as the PTX ISA gives them (section "Matrix fragments for mma.m16n8k16" and its siblings).
# 16-bit A operands (f16, bf16)
def _a_m16n8k16_16bit(g, t, i):
    return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >= 4)


def _a_m16n8k8_16bit(g, t, i):
    return g + 8 * (i >= 2), 2 * t + (i & 1)


def _b_m16n8k16_16bit(g, t, i):
    return 2 * t + (i & 1) + 8 * (i >= 2), g


def _b_m16n8k8_16bit(g, t, i):
    return 2 * t + i, g


# tf32
def _a_m16n8k8_tf32(g, t, i):
    return g + 8 * (i & 1), t + 4 * (i >= 2)


def _b_m16n8k8_tf32(g, t, i):
    return t + 4 * i, g


def _a_m16n8k4_tf32(g, t, i):
    return g + 8 * i, t


def _b_m16n8k4_tf32(g, t, i):
    return t, g


# f64 m8n8k4
def _a_m8n8k4_f64(g, t, i):
    return g, t


def _b_m8n8k4_f64(g, t, i):
    return t, g


def _c_m8n8(g, t, i):
    return g, 2 * t + i


# 8-bit integers, and 8-bit floats (e4m3, e5m2: the same fragments)
def _a_m16n8k32_8bit(g, t, i):
    return g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >= 8)


def _b_m16n8k32_8bit(g, t, i):
    return 4 * t + (i & 3) + 16 * (i >= 4), g


def _a_m16n8k16_8bit(g, t, i):
    return g + 8 * (i >= 4), 4 * t + (i & 3)


def _b_m16n8k16_8bit(g, t, i):
    return 4 * t + i, g


def _a_m8n8k16_8bit(g, t, i):
    return g, 4 * t + i


def _b_m8n8k16_8bit(g, t, i):
    return 4 * t + i, g


# the 16x8 accumulator, for every m16n8 shape and type
def _c_m16n8(g, t, i):
    return g + 8 * (i >= 2), 2 * t + (i & 1)


@dataclass(frozen=True)
class MmaShape:
    """One (shape, input kind) row of the ISA's fragment tables: per-lane element counts and placements."""

    m: int
    n: int
    k: int
    a: tuple[int, Placement]
    b: tuple[int, Placement]
    c: tuple[int, Placement]


_F16 = ("f16", "bf16")
_I8 = ("s8", "u8")
_F8 = ("e4m3", "e5m2")
MMA_SHAPES: dict[tuple[str, str], MmaShape] = {
    **{("m16n8k16", t): MmaShape(16, 8, 16, (8, _a_m16n8k16_16bit), (4, _b_m16n8k16_16bit), (4, _c_m16n8)) for t in _F16},
    **{("m16n8k8", t): MmaShape(16, 8, 8, (4, _a_m16n8k8_16bit), (2, _b_m16n8k8_16bit), (4, _c_m16n8)) for t in _F16},
    ("m16n8k8", "tf32"): MmaShape(16, 8, 8, (4, _a_m16n8k8_tf32), (2, _b_m16n8k8_tf32), (4, _c_m16n8)),
    ("m16n8k4", "tf32"): MmaShape(16, 8, 4, (2, _a_m16n8k4_tf32), (1, _b_m16n8k4_tf32), (4, _c_m16n8)),
    ("m8n8k4", "f64"): MmaShape(8, 8, 4, (1, _a_m8n8k4_f64), (1, _b_m8n8k4_f64), (2, _c_m8n8)),
    **{("m16n8k32", t): MmaShape(16, 8, 32, (16, _a_m16n8k32_8bit), (8, _b_m16n8k32_8bit), (4, _c_m16n8)) for t in _I8 + _F8},
    **{("m16n8k16", t): MmaShape(16, 8, 16, (8, _a_m16n8k16_8bit), (4, _b_m16n8k16_8bit), (4, _c_m16n8)) for t in _I8},
    **{("m8n8k16", t): MmaShape(8, 8, 16, (4, _a_m8n8k16_8bit), (4, _b_m8n8k16_8bit), (2, _c_m8n8)) for t in _I8},
}
"""The `mma.sync` shapes the simulator runs, by (shape, A's type)."""

ACCUMULATOR_TYPES = {
    "f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",), "f64": ("f64",), "s8": ("s32",), "u8": ("s32",),
    "e4m3": ("f32", "f16"), "e5m2": ("f32", "f16"),
}  # fmt: skip
"""The C/D types each input type allows."""


@dataclass(frozen=True)
class MatrixProduct:
    """D = A*B + C on fragments: the operands' layouts, and whether an integer result saturates."""

    a: Fragment
    b: Fragment
    c: Fragment
    d: Fragment
    saturate: bool = False

    def compute(self, a_words: np.ndarray, b_words: np.ndarray, c_words: np.ndarray) -> np.ndarray:
        """The D registers `[warps, 32, registers]` from the A, B and C registers of each warp."""
        a = decode(self.a.gather(a_words), self.a.etype)
        b = decode(self.b.gather(b_words), self.b.etype)
        c = decode(self.c.gather(c_words), self.c.etype)
        return self.d.scatter(encode(multiply_accumulate(a, b, c, self.saturate), self.d.etype))


def multiply_accumulate(a: np.ndarray, b: np.ndarray, c: np.ndarray, saturate: bool = False) -> np.ndarray:
    """A*B + C for stacks of matrices, in the order the module docstring states.

    Integers (int64 inputs) are exact, then wrap or saturate to s32; floats accumulate in C's
    dtype (float32, or float64 for f64), from C, one k at a time.
    """
    if a.dtype == np.int64:
        exact = c + np.einsum("wmk,wkn->wmn", a, b)
        if saturate:
            return np.clip(exact, -(2**31), 2**31 - 1)
        return ((exact + 2**31) % 2**32) - 2**31
    acc = c.copy()
    for kk in range(a.shape[2]):
        acc = acc + a[:, :, kk, None] * b[:, None, kk, :]
    return acc


def _type_list(modifiers: tuple[str, ...]) -> list[str]:
    return [m for m in modifiers if m in ELEMENT_BITS]


def _check_modifiers(text: str, modifiers: tuple[str, ...], allowed: set[str]) -> None:
    unknown = [m for m in modifiers if m not in allowed and m not in ELEMENT_BITS]
    if unknown:
        listed = ", ".join("." + m for m in unknown)
        raise UserError(f"the simulator does not support `{text}`: modifier(s) {listed}")


def mma_product(text: str, modifiers: tuple[str, ...]) -> MatrixProduct:
    """The product `mma.sync.aligned.<shape>.row.col{.satfinite}.dtype.atype.btype.ctype` computes."""
    shapes = sorted({s for s, _ in MMA_SHAPES})
    _check_modifiers(text, modifiers, {"sync", "aligned", "row", "col", "satfinite", *shapes})
    if "sync" not in modifiers or "aligned" not in modifiers:
        raise UserError(f"`{text}` needs .sync.aligned")
    shape = [m for m in modifiers if m in shapes]
    types = _type_list(modifiers)
    if len(shape) != 1 or len(types) != 4:
        raise UserError(
            f"the simulator does not support `{text}`: it runs mma.sync.aligned.<shape>.row.col.<d>.<a>.<b>.<c> "
            f"with shape {', '.join(shapes)}"
        )
    dtype, atype, btype, ctype = types
    layouts = [m for m in modifiers if m in ("row", "col")]
    if layouts != ["row", "col"]:
        raise UserError(f"the simulator does not support `{text}`: only the .row.col operand layouts")
    form = MMA_SHAPES.get((shape[0], atype))
    if form is None or not (btype == atype or {atype, btype} <= set(_I8) or {atype, btype} <= set(_F8)):  # s8 and u8 mix, e4m3 and e5m2
        raise UserError(f"the simulator does not support `{text}`: no .{shape[0]} form with .{atype} x .{btype} inputs")
    if dtype not in ACCUMULATOR_TYPES[atype] or ctype not in ACCUMULATOR_TYPES[atype]:
        raise UserError(f"`{text}`: .{atype} inputs accumulate in {' or '.join('.' + t for t in ACCUMULATOR_TYPES[atype])}")
    saturate = "satfinite" in modifiers
    if saturate and atype not in INTEGER_TYPES:
        raise UserError(f"the simulator does not support `{text}`: .satfinite only with integer inputs")
    return MatrixProduct(
        isa_fragment(atype, form.m, form.k, *form.a),
        isa_fragment(btype, form.k, form.n, *form.b),
        isa_fragment(ctype, form.m, form.n, *form.c),
        isa_fragment(dtype, form.m, form.n, *form.c),
        saturate,
    )


# ---------------------------------------------------------------------------- ldmatrix / stmatrix / movmatrix

ROW_BYTES = 16
"""An m8n8 .b16 matrix row: 8 elements of 2 bytes, one lane's address."""


def matrix_count(text: str, modifiers: tuple[str, ...]) -> int:
    """1, 2 or 4 (`.x1/.x2/.x4`) for `ldmatrix`/`stmatrix` in the m8n8 .b16 form, after checking the form."""
    _check_modifiers(text, modifiers, {"sync", "aligned", "m8n8", "x1", "x2", "x4", "trans", "shared", "shared::cta"})
    nums = [m for m in modifiers if m in ("x1", "x2", "x4")]
    if "sync" not in modifiers or "aligned" not in modifiers or "m8n8" not in modifiers or len(nums) != 1:
        raise UserError(f"the simulator does not support `{text}`: only the .sync.aligned.m8n8.x1/.x2/.x4 forms")
    if _type_list(modifiers) != ["b16"]:
        raise UserError(f"the simulator does not support `{text}`: only .b16 elements")
    return int(nums[0][1])


def rows_to_registers(rows: np.ndarray, trans: bool) -> np.ndarray:
    """`ldmatrix`: `[warps, matrices, 8 rows, 8]` b16 elements -> `[warps, 32, matrices]` registers.

    Lane L receives, of each matrix, row L/4, elements 2*(L%4) and 2*(L%4)+1 (low half first); `.trans`
    gives it those of the transposed matrix.
    """
    if trans:
        rows = rows.swapaxes(2, 3)
    lane = np.arange(WARP)
    lo = rows[:, :, lane >> 2, 2 * (lane & 3)].astype(np.uint64)
    hi = rows[:, :, lane >> 2, 2 * (lane & 3) + 1].astype(np.uint64)
    return (lo | (hi << np.uint64(16))).swapaxes(1, 2)


def registers_to_rows(words: np.ndarray, trans: bool) -> np.ndarray:
    """`stmatrix`: the inverse of `rows_to_registers`, `[warps, 32, matrices]` -> `[warps, matrices, 8, 8]` (uint16)."""
    w = words.astype(np.uint64).swapaxes(1, 2)
    lane = np.arange(WARP)
    rows = np.zeros((*w.shape[:2], 8, 8), dtype=np.uint16)
    rows[:, :, lane >> 2, 2 * (lane & 3)] = (w & np.uint64(0xFFFF)).astype(np.uint16)
    rows[:, :, lane >> 2, 2 * (lane & 3) + 1] = (w >> np.uint64(16)).astype(np.uint16)
    return rows.swapaxes(2, 3) if trans else rows


def transpose_registers(words: np.ndarray) -> np.ndarray:
    """`movmatrix.m8n8.trans.b16`: `[warps, 32]` registers of one 8x8 matrix -> those of its transpose."""
    rows = registers_to_rows(words[:, :, None], trans=False)
    return rows_to_registers(rows, trans=True)[:, :, 0]


# ---------------------------------------------------------------------------- wmma

WMMA_SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16)}
WMMA_INPUTS = ("f16", "bf16", "s8", "u8")
WMMA_ACCUMULATORS = {"f16": ("f16", "f32"), "bf16": ("f32",), "s8": ("s32",), "u8": ("s32",)}


def wmma_fragment(which: str, shape: str, etype: str) -> Fragment:
    """The simulator's layout (module docstring) of wmma operand `which` ("a", "b", "c" or "d")."""
    m, n, k = WMMA_SHAPES[shape]
    rows, cols = {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[which]
    count = rows * cols // WARP
    if etype == "f16" and which in "ab":
        count = 16  # eight .f16x2 registers whatever the shape, as the ISA gives them
    f = (np.arange(WARP)[:, None] * count + np.arange(count)[None, :]) % (rows * cols)
    if which == "b":
        row, col = f % rows, f // rows
    else:
        row, col = f // cols, f % cols
    return Fragment(etype, rows, cols, row, col, 32)


def wmma_shape(text: str, modifiers: tuple[str, ...]) -> str:
    shapes = [m for m in modifiers if m in WMMA_SHAPES]
    if len(shapes) != 1:
        listed = ", ".join("." + s for s in WMMA_SHAPES)
        raise UserError(f"the simulator does not support `{text}`: wmma shapes are {listed}")
    return shapes[0]


def wmma_product(text: str, modifiers: tuple[str, ...]) -> MatrixProduct:
    """`wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype` (f16 inputs) or `....dtype.atype.btype.ctype`."""
    _check_modifiers(text, modifiers, {"mma", "sync", "aligned", "row", "col", "satfinite", *WMMA_SHAPES})
    shape = wmma_shape(text, modifiers)
    types = _type_list(modifiers)
    if len(types) == 2 and all(t in ("f16", "f32") for t in types):
        dtype, ctype = types
        atype = "f16"
    elif len(types) == 4 and types[1] == types[2] and types[1] in WMMA_INPUTS:
        dtype, atype, _, ctype = types
    else:
        raise UserError(f"the simulator does not support `{text}`: wmma.mma with .f16, .bf16, .s8 or .u8 inputs only")
    if dtype not in WMMA_ACCUMULATORS[atype] or ctype not in WMMA_ACCUMULATORS[atype]:
        raise UserError(f"`{text}`: .{atype} inputs accumulate in {' or '.join('.' + t for t in WMMA_ACCUMULATORS[atype])}")
    saturate = "satfinite" in modifiers
    if saturate and atype not in INTEGER_TYPES:
        raise UserError(f"the simulator does not support `{text}`: .satfinite only with integer inputs")
    return MatrixProduct(
        wmma_fragment("a", shape, atype),
        wmma_fragment("b", shape, atype),
        wmma_fragment("c", shape, ctype),
        wmma_fragment("d", shape, dtype),
        saturate,
    )


def wmma_offsets(frag: Fragment, layout: str, lanes: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Element offsets `[len(lanes), elements]` from the matrix's address, for each lane with its own stride.

    `.row`: element (r, c) lies at r*stride + c; `.col`: at c*stride + r (stride counted in elements).
    """
    row, col = frag.row_of[lanes], frag.col_of[lanes]
    s = stride.astype(np.int64)[:, None]
    return row * s + col if layout == "row" else col * s + row
