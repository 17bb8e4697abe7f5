"""Half-precision arithmetic on f16, bf16 and their packed x2 forms.

Packed operands are processed lane-wise by viewing each 32-bit register as two
16-bit lanes (lane 0 = bits 15:0), so scalar and packed forms share one code
path. Values are widened to float64 (exact), combined as an exact pair and
rounded once, so results are correctly rounded like the hardware's.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.alu.floating import float_minmax
from gpurace.sim.alu.modifiers import Mods
from gpurace.sim.alu.op import AluOp
from gpurace.sim.alu.rawtypes import HALF_FAMILY
from gpurace.sim.alu.rounding import F16_MIN_NORMAL, flush_subnormal, quiet, round_pair, saturate, to_f64, two_sum

_SIGN = np.uint16(0x8000)


def half_type(mods: Mods) -> tuple[str, str, bool]:
    """(ptx type, lane format f16/bf16, packed?) of a half-precision instruction."""
    (t,) = mods.types(1)
    if t not in HALF_FAMILY:
        raise mods.error(f"type .{t} not supported here")
    return t, ("bf16" if t.startswith("bf16") else "f16"), t.endswith("x2")


def lanes(x: np.ndarray, packed: bool) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint16) if packed else x


def unlanes(x: np.ndarray, packed: bool) -> np.ndarray:
    return x.view(np.uint32) if packed else x


def _post(fmt: str, ftz: bool, sat: bool, relu: bool):
    """Output processing on rounded lanes: flush, saturate, relu (NaN stays canonical)."""
    if not (ftz or sat or relu):
        return lambda bits: bits

    def post(bits):
        v = to_f64(bits, fmt)
        if ftz:
            v = flush_subnormal(v, float(F16_MIN_NORMAL))
        if sat:
            v = saturate(v)
        if relu:
            v = np.where(v < 0, 0.0, v)
        return round_pair(v, None, fmt, "rn")

    return post


def build_arith(instr, mods: Mods, kind: str) -> AluOp:
    """add/sub/mul/fma on half types (only round-to-nearest exists for them)."""
    mods.one_of(("rn",))
    ftz = mods.flag("ftz")
    sat = mods.flag("sat")
    relu = mods.flag("relu")
    t, fmt, packed = half_type(mods)
    if fmt == "bf16" and (ftz or sat):
        raise mods.error(".ftz/.sat are not defined for bf16 types")
    if relu and kind != "fma":
        raise mods.error(".relu is only defined for fma")
    if relu and sat:
        raise mods.error(".relu and .sat exclude each other")
    post = _post(fmt, ftz, sat, relu)

    def load(x):
        v = to_f64(lanes(x, packed), fmt)
        return flush_subnormal(v, float(F16_MIN_NORMAL)) if ftz else v

    if kind == "fma":

        @quiet
        def fma(a, b, c):
            s, e = two_sum(load(a) * load(b), load(c))  # the product is exact in float64
            return unlanes(post(round_pair(s, e, fmt, "rn")), packed)

        return AluOp((t, t, t), (t,), fma)

    @quiet
    def binary(a, b):
        x, y = load(a), load(b)
        if kind == "mul":
            s, e = x * y, None
        else:
            s, e = two_sum(x, y if kind == "add" else -y)
        return unlanes(post(round_pair(s, e, fmt, "rn")), packed)

    return AluOp((t, t), (t,), binary)


def build_absneg(instr, mods: Mods, neg: bool) -> AluOp:
    ftz = mods.flag("ftz")
    t, fmt, packed = half_type(mods)
    flush = _post(fmt, ftz, False, False)

    def fn(a):
        bits = flush(lanes(a, packed))
        return unlanes(bits ^ _SIGN if neg else bits & ~_SIGN, packed)

    return AluOp((t,), (t,), quiet(fn))


def build_minmax(instr, mods: Mods, is_max: bool) -> AluOp:
    ftz = mods.flag("ftz")
    nan_prop = mods.flag("NaN")
    xorsign = mods.flag("xorsign")
    absolute = mods.flag("abs")
    t, fmt, packed = half_type(mods)
    if xorsign != absolute:
        raise mods.error(".xorsign and .abs go together here")
    if ftz and fmt == "bf16":
        raise mods.error(".ftz is not defined for bf16 types")

    @quiet
    def fn(a, b):
        la, lb = lanes(a, packed), lanes(b, packed)
        x, y = to_f64(la, fmt), to_f64(lb, fmt)
        if ftz:
            x, y = flush_subnormal(x, float(F16_MIN_NORMAL)), flush_subnormal(y, float(F16_MIN_NORMAL))
        if absolute:
            x, y = np.abs(x), np.abs(y)
        r = float_minmax(x, y, is_max, nan_prop)
        bits = round_pair(r, None, fmt, "rn")  # exact: r is one of the operands
        if xorsign:
            bits = np.where(np.isnan(r), bits, bits | ((la ^ lb) & _SIGN))
        return unlanes(bits, packed)

    return AluOp((t, t), (t,), fn)


_APPROX = {"ex2": np.exp2, "tanh": np.tanh}


def build_approx(instr, mods: Mods, opcode: str) -> AluOp:
    if not mods.flag("approx"):
        raise mods.error(f"{opcode} needs .approx")
    ftz = mods.flag("ftz")
    t, fmt, packed = half_type(mods)
    func = _APPROX[opcode]
    post = _post(fmt, ftz and fmt == "f16", False, False)

    @quiet
    def fn(a):
        return unlanes(post(round_pair(func(to_f64(lanes(a, packed), fmt)), None, fmt, "rn")), packed)

    return AluOp((t,), (t,), fn)
