"""Integer arithmetic: add/sub/mul/mad (lo, hi, wide, sat, carry chains), mul24/mad24,
sad, div/rem, abs/neg/min/max, dp4a/dp2a.

All arithmetic wraps modulo 2**width, as the hardware does; the carry
variants additionally report the carry (or, for subtraction, the borrow) that
PTX keeps in the per-thread CC.CF flag.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.alu.modifiers import Mods
from gpurace.sim.alu.op import AluOp
from gpurace.sim.alu.rawtypes import SIGNED, UNSIGNED, int_view, is_signed, width

_INT_TYPES = frozenset({"u16", "u32", "u64", "s16", "s32", "s64"})
_CARRY_TYPES = frozenset({"u32", "s32", "u64", "s64"})


def _one_int_type(mods: Mods, allowed=_INT_TYPES) -> str:
    (t,) = mods.types(1)
    if t not in allowed:
        raise mods.error(f"type .{t} not supported here")
    return t


# ------------------------------------------------------------- multiply


def mul_hi(a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    """The upper half of the 2n-bit product, as raw bits."""
    n = width(t)
    if n < 64:
        wide = SIGNED[2 * n] if is_signed(t) else UNSIGNED[2 * n]
        p = int_view(a, t).astype(wide) * int_view(b, t).astype(wide)
        return (p >> n).astype(UNSIGNED[n])
    hi = _mul_hi_u64(a, b)
    if is_signed(t):
        # signed high word = unsigned high word - (a<0 ? b : 0) - (b<0 ? a : 0)  (mod 2**64)
        zero = np.uint64(0)
        hi = hi - np.where(a.view(np.int64) < 0, b, zero) - np.where(b.view(np.int64) < 0, a, zero)
    return hi


def _mul_hi_u64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    mask = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    al, ah = a & mask, a >> s32
    bl, bh = b & mask, b >> s32
    t = al * bl
    m1 = ah * bl + (t >> s32)
    m2 = al * bh + (m1 & mask)
    return ah * bh + (m1 >> s32) + (m2 >> s32)


def mul_wide(a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    n = width(t)
    wide = SIGNED[2 * n] if is_signed(t) else UNSIGNED[2 * n]
    p = int_view(a, t).astype(wide) * int_view(b, t).astype(wide)
    return p.view(UNSIGNED[2 * n])


def _sat_s32(x64: np.ndarray) -> np.ndarray:
    return np.clip(x64, -(1 << 31), (1 << 31) - 1).astype(np.int32).view(np.uint32)


def _product(mode: str, t: str):
    """The product half selected by .lo/.hi/.wide, as a function of raw (a, b)."""
    if mode == "hi":
        return lambda a, b: mul_hi(a, b, t)
    if mode == "wide":
        return lambda a, b: mul_wide(a, b, t)
    return np.multiply


def build_mul(instr, mods: Mods) -> AluOp:
    mode = mods.one_of(("lo", "hi", "wide"), "lo")
    t = _one_int_type(mods)
    if mode == "wide" and width(t) == 64:
        raise mods.error("mul.wide has no 64-bit form")
    dst = t if mode != "wide" else t[0] + str(2 * width(t))
    return AluOp((t, t), (dst,), _product(mode, t))


def build_mad(instr, mods: Mods) -> AluOp:
    mode = mods.one_of(("lo", "hi", "wide"), "lo")
    sat = mods.flag("sat")
    cc = mods.flag("cc")
    t = _one_int_type(mods)
    if cc:
        return _carry_mad(mods, t, mode, carry_in=False)
    if mode == "wide" and width(t) == 64:
        raise mods.error("mad.wide has no 64-bit form")
    if sat and (t != "s32" or mode != "hi"):
        raise mods.error(".sat is only defined for mad.hi.s32")
    if sat:

        def fn(a, b, c):
            hi = mul_hi(a, b, t).view(np.int32).astype(np.int64)
            return _sat_s32(hi + c.view(np.int32))

        return AluOp((t, t, t), (t,), fn)
    prod = _product(mode, t)
    ct = t if mode != "wide" else t[0] + str(2 * width(t))
    return AluOp((t, t, ct), (ct,), lambda a, b, c: np.add(prod(a, b), c))


def build_mul24(instr, mods: Mods, mad: bool = False) -> AluOp:
    mode = mods.one_of(("lo", "hi"), "lo")
    sat = mad and mods.flag("sat")
    t = _one_int_type(mods, frozenset({"u32", "s32"}))
    if sat and (t != "s32" or mode != "hi"):
        raise mods.error(".sat is only defined for mad24.hi.s32")

    def product(a, b):
        if t == "s32":
            a24 = ((a << np.uint32(8)).view(np.int32) >> 8).astype(np.int64)
            b24 = ((b << np.uint32(8)).view(np.int32) >> 8).astype(np.int64)
        else:
            a24 = (a & np.uint32(0xFFFFFF)).astype(np.int64)
            b24 = (b & np.uint32(0xFFFFFF)).astype(np.int64)
        p = a24 * b24  # 48 significant bits
        return p >> 16 if mode == "hi" else p

    def lo32(x):
        return x.astype(np.uint64).astype(np.uint32)

    if not mad:
        return AluOp((t, t), (t,), lambda a, b: lo32(product(a, b)))
    if sat:
        return AluOp((t, t, t), (t,), lambda a, b, c: _sat_s32(lo32(product(a, b)).view(np.int32).astype(np.int64) + c.view(np.int32)))
    return AluOp((t, t, t), (t,), lambda a, b, c: lo32(product(a, b)) + c)


# ------------------------------------------------------ add / sub / carry


def build_add(instr, mods: Mods, sub: bool = False) -> AluOp:
    sat = mods.flag("sat")
    cc = mods.flag("cc")
    t = _one_int_type(mods)
    if cc:
        if t not in _CARRY_TYPES:
            raise mods.error(f".cc is not defined for .{t}")
        return _carry_add(sub, t, carry_in=False)
    if sat:
        if t != "s32":
            raise mods.error(".sat is only defined for .s32")
        op = np.subtract if sub else np.add
        return AluOp((t, t), (t,), lambda a, b: _sat_s32(op(a.view(np.int32).astype(np.int64), b.view(np.int32))))
    return AluOp((t, t), (t,), np.subtract if sub else np.add)


def build_addc(instr, mods: Mods, sub: bool = False) -> AluOp:
    cc = mods.flag("cc")
    t = _one_int_type(mods, _CARRY_TYPES)
    op = _carry_add(sub, t, carry_in=True)
    if not cc:
        return AluOp(op.src_types, op.dst_types, lambda a, b, carry: op.fn(a, b, carry=carry)[0], carry_in=True)
    return op


def _carry_add(sub: bool, t: str, carry_in: bool) -> AluOp:
    dtype = UNSIGNED[width(t)]

    def add(a, b, carry=None):
        s = a + b
        out = s < a
        if carry is not None:
            r = s + carry.astype(dtype)
            return r, out | (r < s)
        return s, out

    def subtract(a, b, carry=None):
        # CC.CF holds the borrow for sub.cc/subc, so that chains of them compose.
        d = a - b
        out = a < b
        if carry is not None:
            r = d - carry.astype(dtype)
            return r, out | (d < carry)
        return d, out

    return AluOp((t, t), (t,), subtract if sub else add, carry_in=carry_in, carry_out=True)


def _carry_mad(mods: Mods, t: str, mode: str, carry_in: bool, carry_out: bool = True) -> AluOp:
    if t not in _CARRY_TYPES or mode == "wide":
        raise mods.error("carry forms of mad exist only as .lo/.hi on 32/64-bit types")
    prod = _product(mode, t)
    add = _carry_add(False, t, carry_in).fn

    def with_carry(a, b, c, carry):
        result = add(prod(a, b), c, carry)
        return result if carry_out else result[0]

    def without_carry(a, b, c):
        return add(prod(a, b), c)

    fn = with_carry if carry_in else without_carry
    return AluOp((t, t, t), (t,), fn, carry_in=carry_in, carry_out=carry_out)


def build_madc(instr, mods: Mods) -> AluOp:
    mode = mods.one_of(("lo", "hi"), "lo")
    cc = mods.flag("cc")
    t = _one_int_type(mods, _CARRY_TYPES)
    return _carry_mad(mods, t, mode, carry_in=True, carry_out=cc)


# ------------------------------------------------------- div / rem / etc


def build_divrem(instr, mods: Mods, rem: bool = False) -> AluOp:
    """Integer division truncating toward zero.

    PTX leaves division by zero machine-specific. Modelled here: the quotient
    is all ones (the unsigned hardware result, which the division sequence nvcc
    emits also produces for signed types, as it fixes up a zero divisor with
    ~divisor) and the remainder is the dividend. INT_MIN / -1 wraps to
    INT_MIN with remainder 0.
    """
    t = _one_int_type(mods)
    n = width(t)
    dtype = UNSIGNED[n]
    one = dtype(1)

    if not is_signed(t):

        def fn(a, b):
            zero = b == 0
            safe = np.where(zero, one, b)
            if rem:
                return np.where(zero, a, a % safe)
            return np.where(zero, dtype(~dtype(0)), a // safe)

        return AluOp((t, t), (t,), fn)

    sdtype = SIGNED[n]

    def sfn(a, b):
        sa, sb = a.view(sdtype), b.view(sdtype)
        na, nb = sa < 0, sb < 0
        ua = np.where(na, -a, a)  # |a| as unsigned: exact even for INT_MIN
        ub = np.where(nb, -b, b)
        zero = b == 0
        ub = np.where(zero, one, ub)
        if rem:
            r = ua % ub
            return np.where(zero, a, np.where(na, -r, r))
        q = ua // ub
        return np.where(zero, dtype(~dtype(0)), np.where(na ^ nb, -q, q))

    return AluOp((t, t), (t,), sfn)


def build_abs_neg(instr, mods: Mods, neg: bool = False) -> AluOp:
    t = _one_int_type(mods, frozenset({"s16", "s32", "s64"}))
    if neg:
        return AluOp((t,), (t,), np.negative)
    sdtype = SIGNED[width(t)]
    return AluOp((t,), (t,), lambda a: np.where(a.view(sdtype) < 0, -a, a))


def build_minmax(instr, mods: Mods, is_max: bool = False) -> AluOp:
    relu = mods.flag("relu")
    (t,) = mods.types(1)
    paired = t in ("u16x2", "s16x2")
    lane = t[:3] if paired else t
    if lane not in _INT_TYPES:
        raise mods.error(f"type .{t} not supported here")
    if relu and lane not in ("s32", "s16"):
        raise mods.error(".relu is only defined for .s32 and .s16x2")
    pick = np.maximum if is_max else np.minimum

    def fn(a, b):
        if paired:
            a, b = a.view(np.uint16), b.view(np.uint16)
        r = pick(int_view(a, lane), int_view(b, lane))
        if relu:
            r = np.maximum(r, 0)
        r = r.view(UNSIGNED[width(lane)])
        return r.view(np.uint32) if paired else r

    ptx_t = "b32" if paired else t
    return AluOp((ptx_t, ptx_t), (ptx_t,), fn)


def build_sad(instr, mods: Mods) -> AluOp:
    t = _one_int_type(mods)
    sdtype = SIGNED[width(t)] if is_signed(t) else UNSIGNED[width(t)]

    def fn(a, b, c):
        lt = a.view(sdtype) < b.view(sdtype)
        return c + np.where(lt, b - a, a - b)

    return AluOp((t, t, t), (t,), fn)


def build_dot(instr, mods: Mods, two_way: bool = False) -> AluOp:
    """dp4a / dp2a: byte (and half-word) dot products accumulated into 32 bits."""
    half = mods.one_of(("lo", "hi")) if two_way else None
    if two_way and half is None:
        raise mods.error("dp2a needs .lo or .hi")
    at, bt = mods.types(2)
    for x in (at, bt):
        if x not in ("u32", "s32"):
            raise mods.error(f"type .{x} not supported here")
    ct = "u32" if at == bt == "u32" else "s32"

    def lanes(x, t, lane_bits):
        dtype = {8: np.int8, 16: np.int16}[lane_bits] if t == "s32" else UNSIGNED[lane_bits]
        return np.ascontiguousarray(x).view(dtype).reshape(-1, 32 // lane_bits).astype(np.int64)

    def fn(a, b, c):
        vb = lanes(b, bt, 8)
        if two_way:
            va = lanes(a, at, 16)
            vb = vb[:, 0:2] if half == "lo" else vb[:, 2:4]
        else:
            va = lanes(a, at, 8)
        acc = c.view(np.int32).astype(np.int64) + (va * vb).sum(axis=1)
        return acc.astype(np.uint64).astype(np.uint32)

    return AluOp((at, bt, ct), (ct,), fn)

