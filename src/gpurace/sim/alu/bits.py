"""Bit and logic instructions: and/or/xor/not/cnot, lop3, shl/shr/shf, prmt,
popc/clz/bfind/fns/brev, bfe/bfi, szext, bmsk.

Shift amounts are unsigned and may exceed the width; NumPy (like C) leaves
such shifts undefined, so every shift here clamps its amount first.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.alu.modifiers import Mods
from gpurace.sim.alu.op import AluOp
from gpurace.sim.alu.rawtypes import SIGNED, UNSIGNED, is_signed, width

_BIT_TYPES = frozenset({"b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"})


def _type(mods: Mods, allowed) -> str:
    (t,) = mods.types(1)
    if t not in allowed:
        raise mods.error(f"type .{t} not supported here")
    return t


def shl(x: np.ndarray, n: np.ndarray, bits: int) -> np.ndarray:
    """x << n for any unsigned n (0 once n >= bits)."""
    if bits < 64:  # shift in a wider type, where shifting by `bits` is still defined
        wide = UNSIGNED[2 * bits]
        return (x.astype(wide) << np.minimum(n, bits).astype(wide)).astype(x.dtype)
    big = n >= bits
    return np.where(big, x.dtype.type(0), x << np.where(big, 0, n).astype(x.dtype))


def shr(x: np.ndarray, n: np.ndarray, bits: int) -> np.ndarray:
    """Logical x >> n for any unsigned n (0 once n >= bits)."""
    if bits < 64:
        wide = UNSIGNED[2 * bits]
        return (x.astype(wide) >> np.minimum(n, bits).astype(wide)).astype(x.dtype)
    big = n >= bits
    return np.where(big, x.dtype.type(0), x >> np.where(big, 0, n).astype(x.dtype))


def low_mask(n: np.ndarray, bits: int) -> np.ndarray:
    """(1 << n) - 1 in the unsigned dtype of `bits`, saturating at all ones for n >= bits."""
    dtype = UNSIGNED[bits]
    ones = dtype(~dtype(0))
    return np.where(n >= bits, ones, (dtype(1) << np.minimum(n, bits - 1).astype(dtype)) - dtype(1))


# ------------------------------------------------------------------ logic


def build_logic(instr, mods: Mods, op: str) -> AluOp:
    t = _type(mods, _BIT_TYPES | {"pred"})
    if op == "not":
        return AluOp((t,), (t,), np.logical_not if t == "pred" else np.invert)
    if op == "cnot":
        if t == "pred":
            raise mods.error("cnot has no .pred form")
        dtype = UNSIGNED[width(t)]
        return AluOp((t,), (t,), lambda a: (a == 0).astype(dtype))
    table = {
        "and": (np.bitwise_and, np.logical_and),
        "or": (np.bitwise_or, np.logical_or),
        "xor": (np.bitwise_xor, np.logical_xor),
    }
    fn = table[op][1 if t == "pred" else 0]
    return AluOp((t, t), (t,), fn)


def build_lop3(instr, mods: Mods) -> AluOp:
    """lop3.b32 d, a, b, c, immLut: bit i of the result is immLut[a_i b_i c_i]."""
    _type(mods, {"b32"})
    one = np.uint32(1)
    ones = np.uint32(0xFFFFFFFF)

    def fn(a, b, c, lut):
        na, nb, nc = ~a, ~b, ~c
        out = np.zeros(np.broadcast(a, b, c, lut).shape, np.uint32)
        for k in range(8):
            term = (a if k & 4 else na) & (b if k & 2 else nb) & (c if k & 1 else nc)
            enable = np.uint32(0) - ((lut >> np.uint32(k)) & one)  # all ones if LUT bit k is set
            out |= term & enable & ones
        return out

    return AluOp(("b32",) * 4, ("b32",), fn)


# ----------------------------------------------------------------- shifts


def build_shift(instr, mods: Mods, left: bool) -> AluOp:
    t = _type(mods, _BIT_TYPES)
    n = width(t)
    if left:
        if is_signed(t) or t[0] == "u":
            raise mods.error("shl is only defined on .b16/.b32/.b64")
        return AluOp((t, "u32"), (t,), lambda a, s: shl(a, s, n))
    if is_signed(t):
        sdtype = SIGNED[n]
        return AluOp((t, "u32"), (t,), lambda a, s: (a.view(sdtype) >> np.minimum(s, n - 1).astype(sdtype)).view(UNSIGNED[n]))
    return AluOp((t, "u32"), (t,), lambda a, s: shr(a, s, n))


def build_shf(instr, mods: Mods) -> AluOp:
    """shf.{l,r}.{wrap,clamp}.b32: funnel shift of the 64-bit value {b, a}."""
    direction = mods.one_of(("l", "r"))
    mode = mods.one_of(("wrap", "clamp"))
    if direction is None or mode is None:
        raise mods.error("shf needs .l/.r and .wrap/.clamp")
    t = _type(mods, {"b32", "u32", "s32"})
    s32 = np.uint64(32)

    def fn(a, b, c):
        amount = np.minimum(c, np.uint32(32)) if mode == "clamp" else c & np.uint32(31)
        v = (b.astype(np.uint64) << s32) | a
        if direction == "l":
            return ((v << amount.astype(np.uint64)) >> s32).astype(np.uint32)
        return (v >> amount.astype(np.uint64)).astype(np.uint32)

    return AluOp((t, t, "u32"), (t,), fn)


# ------------------------------------------------------------------- prmt

# Source byte index for destination bytes 0..3, by mode and c[1:0].
_PRMT_MODES = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


def _source_bytes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The eight bytes {b, a} as an (N, 8) uint8 array, byte 0 = a's least significant."""
    a8 = np.ascontiguousarray(a).view(np.uint8).reshape(-1, 4)
    b8 = np.ascontiguousarray(b).view(np.uint8).reshape(-1, 4)
    return np.concatenate([a8, b8], axis=1)


def build_prmt(instr, mods: Mods) -> AluOp:
    """prmt.b32{.mode} d, a, b, c (byte views assume a little-endian host, as NumPy on x86/Arm is)."""
    mode = mods.one_of(tuple(_PRMT_MODES))
    _type(mods, {"b32"})
    nibbles = np.array([0, 4, 8, 12], dtype=np.uint32)

    if mode is None:

        def generic(a, b, c):
            src = _source_bytes(a, b)
            if c.size and (c == c.flat[0]).all():  # the usual immediate selector: index columns directly
                sel = (int(c.flat[0]) >> nibbles) & np.uint32(0xF)
                picked = src[:, (sel & np.uint32(7)).astype(np.intp)]
            else:
                sel = (c.reshape(-1, 1) >> nibbles) & np.uint32(0xF)  # (N, 4) selectors
                picked = np.take_along_axis(src, (sel & np.uint32(7)).astype(np.intp), axis=1)
            sign = sel >= 8
            if sign.any():
                picked = np.where(sign, (picked >> np.uint8(7)) * np.uint8(0xFF), picked)
            return np.ascontiguousarray(picked).view(np.uint32).reshape(np.shape(c))

        return AluOp(("b32",) * 3, ("b32",), generic)

    table = np.array(_PRMT_MODES[mode], dtype=np.intp)  # (selector c[1:0], destination byte)

    def moded(a, b, c):
        index = table[(c & np.uint32(3)).astype(np.intp)]
        picked = np.take_along_axis(_source_bytes(a, b), index, axis=1)
        return np.ascontiguousarray(picked).view(np.uint32).reshape(np.shape(c))

    return AluOp(("b32",) * 3, ("b32",), moded)


# ------------------------------------------------------------- bit counts


def _smear(x: np.ndarray, bits: int) -> np.ndarray:
    """Set every bit below the most significant set bit."""
    x = x.copy()
    shift = 1
    while shift < bits:
        x |= x >> x.dtype.type(shift)
        shift *= 2
    return x


def build_popc(instr, mods: Mods) -> AluOp:
    t = _type(mods, {"b32", "b64"})
    return AluOp((t,), ("u32",), lambda a: np.bitwise_count(a).astype(np.uint32))


def build_clz(instr, mods: Mods) -> AluOp:
    t = _type(mods, {"b32", "b64"})
    n = width(t)
    return AluOp((t,), ("u32",), lambda a: (np.uint32(n) - np.bitwise_count(_smear(a, n))).astype(np.uint32))


def build_bfind(instr, mods: Mods) -> AluOp:
    shiftamt = mods.flag("shiftamt")
    t = _type(mods, {"u32", "u64", "s32", "s64"})
    n = width(t)

    def fn(a):
        if is_signed(t):
            a = np.where(a.view(SIGNED[n]) < 0, ~a, a)
        count = np.bitwise_count(_smear(a, n)).astype(np.uint32)
        found = count > 0
        pos = count - np.uint32(1)
        if shiftamt:
            pos = np.uint32(n - 1) - pos
        return np.where(found, pos, np.uint32(0xFFFFFFFF))

    return AluOp((t,), ("u32",), fn)


def build_fns(instr, mods: Mods) -> AluOp:
    """fns.b32 d, mask, base, offset: position of the n-th set bit from base."""
    _type(mods, {"b32"})

    def fn(mask, base, offset):
        base = (base & np.uint32(31)).astype(np.int64)
        off = offset.view(np.int32).astype(np.int64)
        bit = (mask.astype(np.int64)[:, None] >> np.arange(32)) & 1  # (N, 32)
        pos = np.arange(32)
        up = (pos >= base[:, None]) & (off[:, None] > 0)
        down = (pos <= base[:, None]) & (off[:, None] < 0)
        # rank of each set bit counted from base in the search direction
        rank_up = np.cumsum(bit * up, axis=1)
        rank_down = np.cumsum((bit * down)[:, ::-1], axis=1)[:, ::-1]
        want = np.abs(off)[:, None]
        hit = (bit == 1) & ((up & (rank_up == want)) | (down & (rank_down == want)))
        hit |= (off[:, None] == 0) & (pos == base[:, None]) & (bit == 1)
        any_hit = hit.any(axis=1)
        return np.where(any_hit, hit.argmax(axis=1), 0xFFFFFFFF).astype(np.uint32)

    return AluOp(("b32", "u32", "s32"), ("b32",), fn)


_BREV_TABLE = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def build_brev(instr, mods: Mods) -> AluOp:
    t = _type(mods, {"b32", "b64"})
    n = width(t)

    def fn(a):
        byts = _BREV_TABLE[np.ascontiguousarray(a).view(np.uint8).reshape(-1, n // 8)]
        return np.ascontiguousarray(byts[:, ::-1]).view(UNSIGNED[n]).reshape(a.shape)

    return AluOp((t,), (t,), fn)


# ------------------------------------------------------------ bit fields


def build_bfe(instr, mods: Mods) -> AluOp:
    t = _type(mods, {"u32", "u64", "s32", "s64"})
    n = width(t)
    dtype = UNSIGNED[n]

    def fn(a, b, c):
        pos = (b & np.uint32(0xFF)).astype(dtype)
        length = (c & np.uint32(0xFF)).astype(dtype)
        valid = np.where(pos >= n, dtype(0), np.minimum(length, dtype(n) - np.minimum(pos, dtype(n))))
        keep = low_mask(valid, n)
        field = shr(a, pos, n) & keep
        if not is_signed(t):
            return field
        top = np.minimum(pos + length - dtype(1), dtype(n - 1))
        sbit = (shr(a, top, n) & dtype(1)).astype(bool) & (length != 0)
        return np.where(sbit, field | ~keep, field)

    return AluOp((t, "u32", "u32"), (t,), fn)


def build_bfi(instr, mods: Mods) -> AluOp:
    t = _type(mods, {"b32", "b64"})
    n = width(t)
    dtype = UNSIGNED[n]

    def fn(a, b, c, d):
        pos = (c & np.uint32(0xFF)).astype(dtype)
        length = (d & np.uint32(0xFF)).astype(dtype)
        valid = np.where(pos >= n, dtype(0), np.minimum(length, dtype(n) - np.minimum(pos, dtype(n))))
        mask = shl(low_mask(valid, n), pos, n)
        return (b & ~mask) | (shl(a, pos, n) & mask)

    return AluOp((t, t, "u32", "u32"), (t,), fn)


def build_szext(instr, mods: Mods) -> AluOp:
    mode = mods.one_of(("clamp", "wrap"))
    if mode is None:
        raise mods.error("szext needs .clamp or .wrap")
    t = _type(mods, {"u32", "s32"})

    def fn(a, b):
        n = b & np.uint32(31)
        too_large = (b >= 32) if mode == "clamp" else np.zeros(b.shape, bool)
        mask = np.where(too_large, np.uint32(0), np.uint32(0xFFFFFFFF) << n)
        if t == "s32":
            sign = ((a >> ((n - np.uint32(1)) & np.uint32(31))) & np.uint32(1)).astype(bool) & (n != 0) & ~too_large
        else:
            sign = np.zeros(a.shape, bool)
        return (a & ~mask) | np.where(sign, mask, np.uint32(0))

    return AluOp((t, "u32"), (t,), fn)


def build_bmsk(instr, mods: Mods) -> AluOp:
    """`bmsk.{clamp,wrap}.b32 d, a, b`: a mask of b one-bits starting at bit a.

    Per the ISA: `.wrap` takes both operands modulo 32; `.clamp` gives an
    empty mask for a >= 32 and runs the mask to bit 31 when a + b >= 32.
    """
    mode = mods.one_of(("clamp", "wrap"))
    if mode is None:
        raise mods.error("bmsk needs .clamp or .wrap")
    _type(mods, {"b32"})
    ones = np.uint32(0xFFFFFFFF)

    def fn(a, b):
        a1 = a & np.uint32(31)
        total = a1.astype(np.uint64) + (b & np.uint32(31))
        mask0 = shl(np.broadcast_to(ones, a.shape), a1, 32)
        mask1 = shl(np.broadcast_to(ones, a.shape), np.minimum(total, 32).astype(np.uint32), 32)
        if mode == "clamp":
            mask0 = np.where(a >= 32, np.uint32(0), mask0)
            mask1 = np.where((b >= 32) | (total >= 32), np.uint32(0), mask1)
        return (mask0 & ~mask1).astype(np.uint32)

    return AluOp(("b32", "b32"), ("b32",), fn)
