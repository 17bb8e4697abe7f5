"""Comparisons and selection: setp, set, selp, slct, testp.

Float comparisons follow PTX's ordered/unordered split: the plain operators
are false when either operand is NaN, the `u` variants true; `num`/`nan` test
for NaN alone. Integer `lo/ls/hi/hs` are the unsigned forms.
"""

from __future__ import annotations

import numpy as np

from gpurace.frontend.ptx.ir import PredPair
from gpurace.sim.alu.half import lanes
from gpurace.sim.alu.modifiers import Mods
from gpurace.sim.alu.op import AluOp
from gpurace.sim.alu.rawtypes import HALF_FAMILY, int_view, is_int
from gpurace.sim.alu.rounding import F16_MIN_NORMAL, F32_MIN_NORMAL, flush_subnormal, quiet, to_f64

CMP_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
           "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
BOOL_OPS = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}

_ORDERED = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
_UNSIGNED_CMP = {"lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
_UNORDERED_NEGATION = {"ltu": np.greater_equal, "leu": np.greater, "gtu": np.less_equal, "geu": np.less}


def _float_cmp(op: str, mods: Mods):
    if op in _ORDERED:
        return _ORDERED[op]
    if op == "ne":
        return lambda x, y: (x != y) & ~np.isnan(x) & ~np.isnan(y)
    if op == "equ":
        return lambda x, y: (x == y) | np.isnan(x) | np.isnan(y)
    if op == "neu":
        return np.not_equal  # true for NaN operands already
    if op in _UNORDERED_NEGATION:
        negated = _UNORDERED_NEGATION[op]
        return lambda x, y: ~negated(x, y)
    if op == "num":
        return lambda x, y: ~np.isnan(x) & ~np.isnan(y)
    if op == "nan":
        return lambda x, y: np.isnan(x) | np.isnan(y)
    raise mods.error(f".{op} is not a floating-point comparison")


def _int_cmp(op: str, t: str, mods: Mods):
    if op in _UNSIGNED_CMP:
        ufunc = _UNSIGNED_CMP[op]
        return lambda a, b: ufunc(a, b)
    if op == "ne":
        return np.not_equal
    if op in _ORDERED:
        ufunc = _ORDERED[op]
        return lambda a, b: ufunc(int_view(a, t), int_view(b, t))
    raise mods.error(f".{op} is not an integer comparison")


def comparison(mods: Mods, op: str, t: str, ftz: bool):
    """A function of the two raw source arrays giving the bool comparison (per lane for x2 types)."""
    if is_int(t) and t not in HALF_FAMILY:
        if ftz:
            raise mods.error(".ftz needs a floating-point type")
        return _int_cmp(op, t, mods)
    cmp = _float_cmp(op, mods)
    if t in ("f32", "f64"):
        view = np.float32 if t == "f32" else np.float64
        if ftz and t == "f32":
            return lambda a, b: cmp(flush_subnormal(a.view(view), F32_MIN_NORMAL), flush_subnormal(b.view(view), F32_MIN_NORMAL))
        if ftz:
            raise mods.error(".ftz is not defined for .f64")
        return lambda a, b: cmp(a.view(view), b.view(view))
    if t in HALF_FAMILY:
        fmt = "bf16" if t.startswith("bf16") else "f16"
        packed = t.endswith("x2")

        def half(a, b):
            x, y = to_f64(lanes(a, packed), fmt), to_f64(lanes(b, packed), fmt)
            if ftz:
                x, y = flush_subnormal(x, float(F16_MIN_NORMAL)), flush_subnormal(y, float(F16_MIN_NORMAL))
            r = cmp(x, y)
            return r.reshape(-1, 2) if packed else r

        return half
    raise mods.error(f"type .{t} not supported here")


def build_setp(instr, mods: Mods) -> AluOp:
    op = mods.one_of(CMP_OPS)
    if op is None:
        raise mods.error("setp needs a comparison operator")
    boolop = mods.one_of(tuple(BOOL_OPS))
    ftz = mods.flag("ftz")
    (t,) = mods.types(1)
    cmp = comparison(mods, op, t, ftz)
    pair = bool(instr.operands) and isinstance(instr.operands[0], PredPair)
    packed = t in ("f16x2", "bf16x2")
    if packed and not pair:
        raise mods.error("setp on a packed type needs two destinations p|q")
    combine = BOOL_OPS[boolop] if boolop else None
    srcs = (t, t, "pred") if combine else (t, t)
    dsts = ("pred", "pred") if pair else ("pred",)

    @quiet
    def fn(a, b, c=None):
        r = cmp(a, b)
        if packed:
            first, second = r[:, 0], r[:, 1]  # p from the low halves, q from the high halves
        else:
            first, second = r, ~r
        if combine is not None:
            first, second = combine(first, c), combine(second, c)
        return (first, second) if pair else first

    return AluOp(srcs, dsts, fn)


def build_set(instr, mods: Mods) -> AluOp:
    op = mods.one_of(CMP_OPS)
    if op is None:
        raise mods.error("set needs a comparison operator")
    boolop = mods.one_of(tuple(BOOL_OPS))
    ftz = mods.flag("ftz")
    dt, st = mods.types(2)
    if dt not in ("u32", "s32", "f32"):
        raise mods.error(f"set with destination type .{dt} not supported")
    cmp = comparison(mods, op, st, ftz)
    if st in HALF_FAMILY:
        raise mods.error("set on half-precision sources not supported")
    combine = BOOL_OPS[boolop] if boolop else None
    true = np.uint32(0x3F800000 if dt == "f32" else 0xFFFFFFFF)

    @quiet
    def fn(a, b, c=None):
        r = cmp(a, b)
        if combine is not None:
            r = combine(r, c)
        return np.where(r, true, np.uint32(0))

    return AluOp((st, st, "pred") if combine else (st, st), (dt,), fn)


def build_selp(instr, mods: Mods) -> AluOp:
    (t,) = mods.types(1)
    if t == "pred":
        raise mods.error("selp has no .pred form")
    return AluOp((t, t, "pred"), (t,), lambda a, b, c: np.where(c, a, b))


def build_slct(instr, mods: Mods) -> AluOp:
    ftz = mods.flag("ftz")
    dt, ct = mods.types(2)
    if ct not in ("s32", "f32"):
        raise mods.error("slct's selector must be .s32 or .f32")
    if ftz and ct != "f32":
        raise mods.error(".ftz needs an .f32 selector")
    if ct == "s32":
        return AluOp((dt, dt, ct), (dt,), lambda a, b, c: np.where(c.view(np.int32) >= 0, a, b))

    def fn(a, b, c):
        x = c.view(np.float32)
        if ftz:
            x = flush_subnormal(x, F32_MIN_NORMAL)
        return np.where(x >= 0, a, b)  # -0.0 selects a; NaN selects b

    return AluOp((dt, dt, ct), (dt,), quiet(fn))


def build_testp(instr, mods: Mods) -> AluOp:
    prop = mods.one_of(("finite", "infinite", "number", "notanumber", "normal", "subnormal"))
    if prop is None:
        raise mods.error("testp needs a property")
    (t,) = mods.types(1)
    if t not in ("f32", "f64"):
        raise mods.error(f"type .{t} not supported here")
    view = np.float32 if t == "f32" else np.float64
    tiny = np.finfo(view).tiny

    def fn(a):
        x = a.view(view)
        mag = np.abs(x)
        if prop == "finite":
            return np.isfinite(x)
        if prop == "infinite":
            return np.isinf(x)
        if prop == "number":
            return ~np.isnan(x)
        if prop == "notanumber":
            return np.isnan(x)
        if prop == "normal":  # zeros count as normal in PTX
            return np.isfinite(x) & ((mag >= tiny) | (mag == 0))
        return (mag < tiny) & (mag > 0)

    return AluOp((t,), ("pred",), quiet(fn))

