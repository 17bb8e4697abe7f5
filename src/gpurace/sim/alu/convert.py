"""cvt: conversions between every pair of integer, f16, bf16, f32 and f64 types.

Rules (PTX ISA, cvt): integer sources are sign- or zero-extended by their own
signedness and truncated to the destination size, `.sat` clamping instead;
float-to-integer conversions round with .rni/.rzi/.rmi/.rpi, always saturate
to the destination range, and turn NaN into 0; integer-to-float and narrowing
float conversions round with .rn/.rz/.rm/.rp; same-size float conversions with
an integer rounding round to an integral value. Float `.sat` clamps to
[0.0, 1.0] (NaN -> +0.0); `.ftz` flushes f32 subnormal inputs and results.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.alu.modifiers import INT_ROUNDING, ROUNDING, Mods
from gpurace.sim.alu.op import AluOp
from gpurace.sim.alu.rawtypes import SIGNED, UNSIGNED, int_range, int_view, is_signed, width
from gpurace.sim.alu.rounding import (
    F32_MIN_NORMAL,
    flush_subnormal,
    quiet,
    round_pair,
    saturate,
    to_f64,
    two_sum,
)

_INTS = frozenset({"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64"})
_FLOATS = frozenset({"f16", "bf16", "f32", "f64"})
_INTEGRAL = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
_MAX_FINITE = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308}


def int_to_pair(a: np.ndarray, t: str) -> tuple[np.ndarray, np.ndarray | None]:
    """An integer as an exact float64 pair (x, e) with x = RN(value)."""
    if width(t) < 64:
        return int_view(a, t).astype(np.float64), None
    if is_signed(t):
        hi = (a.view(np.int64) >> 32).astype(np.float64)
    else:
        hi = (a >> np.uint64(32)).astype(np.float64)
    lo = (a & np.uint64(0xFFFFFFFF)).astype(np.float64)
    return two_sum(hi * 4294967296.0, lo)


def float_to_int(v: np.ndarray, t: str) -> np.ndarray:
    """Integral float64 values to `t`'s raw bits, saturating; NaN gives 0."""
    n = width(t)
    if is_signed(t):
        over = v >= 2.0 ** (n - 1)
        under = v < -(2.0 ** (n - 1))
        inner = SIGNED[n]
    else:
        over = v >= 2.0**n
        under = v < 0
        inner = UNSIGNED[n]
    lo, hi = int_range(t)
    bad = over | under | np.isnan(v)
    ints = np.where(bad, 0.0, v).astype(inner)
    ints = np.where(over, inner(hi), np.where(under, inner(lo), ints))
    return ints.view(UNSIGNED[n])


def build_cvt(instr, mods: Mods) -> AluOp:
    irnd = mods.one_of(INT_ROUNDING)
    frnd = mods.one_of(ROUNDING)
    ftz = mods.flag("ftz")
    sat = mods.flag("sat")
    relu = mods.flag("relu")
    satfinite = mods.flag("satfinite")
    dst, src = mods.types(2)
    if irnd and frnd:
        raise mods.error("integer and floating-point rounding together")
    if dst in ("f16x2", "bf16x2"):
        return _pack_two(mods, dst, src, frnd, relu, satfinite, sat or ftz or irnd)
    for t in (dst, src):
        if t not in _INTS and t not in _FLOATS:
            raise mods.error(f"conversion with .{t} not supported")
    if (relu or satfinite) and dst not in ("f16", "bf16"):
        raise mods.error(".relu/.satfinite are only supported for f16/bf16 destinations")

    if dst in _INTS and src in _INTS:
        if irnd or frnd or ftz:
            raise mods.error("rounding/.ftz modifiers on an integer-to-integer conversion")
        return AluOp((src,), (dst,), _int_to_int(src, dst, sat))

    load = _float_loader(src, ftz) if src in _FLOATS else None
    if dst in _INTS:  # float -> int
        if frnd:
            raise mods.error("float-to-integer conversions take .rni/.rzi/.rmi/.rpi")
        integral = _INTEGRAL[irnd or "rzi"]
        return AluOp((src,), (dst,), quiet(lambda a: float_to_int(integral(load(a)), dst)))

    finish = _float_finisher(dst, ftz, sat, relu, satfinite)
    if src in _INTS:  # int -> float
        if irnd:
            raise mods.error("integer-to-float conversions take .rn/.rz/.rm/.rp")
        mode = frnd or "rn"

        @quiet
        def from_int(a):
            x, e = int_to_pair(a, src)
            return finish(round_pair(x, e, dst, mode))

        return AluOp((src,), (dst,), from_int)

    if irnd:  # float -> same-size float, rounded to an integral value
        if width(src) != width(dst):
            raise mods.error("integer rounding of a float needs same-size types")
        integral = _INTEGRAL[irnd]
        return AluOp((src,), (dst,), quiet(lambda a: finish(round_pair(integral(load(a)), None, dst, "rn"))))
    mode = frnd or "rn"
    return AluOp((src,), (dst,), quiet(lambda a: finish(round_pair(load(a), None, dst, mode))))


def _int_to_int(src: str, dst: str, sat: bool):
    lo, hi = int_range(dst)
    src_lo, src_hi = int_range(src)
    out = UNSIGNED[width(dst)]

    def fn(a):
        x = int_view(a, src)
        if sat and hi < src_hi:
            x = np.where(x > hi, x.dtype.type(hi), x)
        if sat and lo > src_lo:
            x = np.where(x < lo, x.dtype.type(lo), x)
        return x.astype(out)  # sign/zero extension by the source type, or truncation

    return fn


def _float_loader(src: str, ftz: bool):
    if ftz and src == "f32":
        return lambda a: flush_subnormal(a.view(np.float32), F32_MIN_NORMAL).astype(np.float64)
    return lambda a: to_f64(a, src)


def _float_finisher(dst: str, ftz: bool, sat: bool, relu: bool, satfinite: bool):
    """Post-rounding steps on raw destination bits."""
    if not (ftz or sat or relu or satfinite):
        return lambda bits: bits
    top = _MAX_FINITE[dst]

    def finish(bits):
        v = to_f64(bits, dst)
        if ftz and dst == "f32":
            v = flush_subnormal(v, float(F32_MIN_NORMAL))
        if sat:
            v = saturate(v)
        if relu:
            v = np.where(v < 0, 0.0, v)
        if satfinite:
            v = np.clip(v, -top, top)  # NaN stays NaN
        return round_pair(v, None, dst, "rn")

    return finish


def _pack_two(mods: Mods, dst: str, src: str, frnd, relu: bool, satfinite: bool, other) -> AluOp:
    """cvt.frnd.{f16x2,bf16x2}.f32 d, a, b: a goes to the upper half, b to the lower."""
    if src != "f32" or other:
        raise mods.error(f"only cvt.rn/.rz{{.relu}}{{.satfinite}}.{dst}.f32 is supported for packed results")
    lane = dst[:-2]
    finish = _float_finisher(lane, False, False, relu, satfinite)
    mode = frnd or "rn"

    @quiet
    def fn(a, b):
        hi = finish(round_pair(a.view(np.float32).astype(np.float64), None, lane, mode)).astype(np.uint32)
        lo = finish(round_pair(b.view(np.float32).astype(np.float64), None, lane, mode)).astype(np.uint32)
        return (hi << np.uint32(16)) | lo

    return AluOp(("f32", "f32"), (dst,), fn)
