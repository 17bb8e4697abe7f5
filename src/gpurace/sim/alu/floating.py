"""f32 and f64 arithmetic: add/sub/mul/fma/mad, div/rcp/sqrt/rsqrt, the .approx
transcendentals, abs/neg/min/max/copysign.

Round-to-nearest f32 operations other than fma run in float32 directly (IEEE
correct in NumPy). Everything else goes through `rounding`: an exact float64
pair rounded once in the requested direction. f64 results in directed modes,
and fma.f64, use error-free transformations on scaled mantissas, falling back
to exact rationals for the few elements near overflow or underflow. Long fma
arrays in round to nearest run LLVM's fma (`native.array_fma`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from gpurace.sim.alu.modifiers import ROUNDING, Mods
from gpurace.sim.alu.op import AluOp
from gpurace.sim.alu.rounding import (
    F32_MIN_NORMAL,
    canonical,
    flush_subnormal,
    overflow_err,
    quiet,
    round_fraction,
    round_pair,
    saturate,
    step_directed,
    two_prod,
    two_sum,
)
from gpurace.sim.native import array_fma

_VIEW = {"f32": np.float32, "f64": np.float64}
_RAW = {"f32": np.uint32, "f64": np.uint64}


def _fmt(mods: Mods) -> str:
    (t,) = mods.types(1)
    if t not in _VIEW:
        raise mods.error(f"type .{t} not supported here")
    return t


def _ftz_sat(mods: Mods, fmt: str, sat_allowed: bool = True) -> tuple[bool, bool]:
    ftz = mods.flag("ftz")
    sat = mods.flag("sat") if sat_allowed else False
    if fmt == "f64" and (ftz or sat):
        raise mods.error(".ftz/.sat are not defined for .f64")
    return ftz, sat


def _loader(fmt: str, ftz: bool):
    view = _VIEW[fmt]
    if ftz:
        return lambda raw: flush_subnormal(raw.view(view), F32_MIN_NORMAL)
    return lambda raw: raw.view(view)


def _finisher(fmt: str, ftz: bool, sat: bool):
    """Output flush, saturation and canonical NaNs; takes float values, returns raw bits."""

    def finish(r):
        if ftz:
            r = flush_subnormal(r, F32_MIN_NORMAL)
        if sat:
            r = saturate(r)
        return canonical(r, fmt)

    return finish


def _exact_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, mode: str, fallback: np.ndarray, kind: str) -> np.ndarray:
    """Overwrite `fallback`-masked elements with exactly rounded rational results."""
    out = {}
    for i in np.flatnonzero(fallback):
        x, y = Fraction(float(a[i])), Fraction(float(b[i]))
        if kind == "mul":
            v = x * y
        elif kind == "div":
            v = x / y
        else:
            v = x * y + Fraction(float(c[i]))
        out[i] = round_fraction(v, mode)
    return out


def _scaled_f64(a, b, mode, kind):
    """Directed-rounded f64 a*b or a/b via mantissas in [0.5, 1), exact where the result is normal."""
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    if kind == "mul":
        q, e = two_prod(ma, mb)
        exp = ea + eb
    else:
        q = ma / mb
        p, pe = two_prod(q, mb)
        e = ((ma - p) - pe) * np.sign(mb)
        exp = ea - eb
    r = np.ldexp(step_directed(q, e, mode), exp)
    naive = a * b if kind == "mul" else a / b
    regular = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0)
    magnitude = np.abs(naive)
    risky = regular & ~((magnitude <= 2.0**1020) & (magnitude >= 2.0**-1020))
    r = np.where(regular & ~risky, r, naive)
    for i, v in _exact_f64(a, b, None, mode, risky, kind).items():
        r[i] = v
    return r


# --------------------------------------------------------- add/sub/mul


def build_arith(instr, mods: Mods, kind: str) -> AluOp:
    mode = mods.one_of(ROUNDING, "rn")
    fmt = _fmt(mods)
    ftz, sat = _ftz_sat(mods, fmt)
    load, finish = _loader(fmt, ftz), _finisher(fmt, ftz, sat)
    ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[kind]

    if mode == "rn":

        @quiet
        def nearest(a, b):
            return finish(ufunc(load(a), load(b)))

        return AluOp((fmt, fmt), (fmt,), nearest)

    if fmt == "f32":

        @quiet
        def directed32(a, b):
            x, y = load(a).astype(np.float64), load(b).astype(np.float64)
            if kind == "mul":
                s, e = x * y, None  # exact: 24 x 24 bits fit in 53
            else:
                s, e = two_sum(x, y if kind == "add" else -y)
            return finish(round_pair(s, e, "f32", mode).view(np.float32))

        return AluOp((fmt, fmt), (fmt,), directed32)

    @quiet
    def directed64(a, b):
        x, y = a.view(np.float64), b.view(np.float64)
        if kind == "mul":
            return canonical(_scaled_f64(x, y, mode, "mul"), "f64")
        y = y if kind == "add" else -y
        s, e = two_sum(x, y)
        e = overflow_err(s, e, np.isfinite(x) & np.isfinite(y))
        return canonical(step_directed(s, e, mode), "f64")

    return AluOp((fmt, fmt), (fmt,), directed64)


# ------------------------------------------------------------------ fma


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray, mode: str) -> np.ndarray:
    """Correctly rounded a*b + c in float64.

    Round to nearest uses Boldo & Melquiond's emulation (TwoProduct, TwoSum,
    one addition rounded to odd), exact while nothing overflows or underflows;
    other elements, and the directed modes, use exact rationals. Long arrays
    in round to nearest take LLVM's fma instead (`array_fma`), with the same
    bits.
    """
    if mode == "rn" and array_fma.wanted(a, b, c):
        return array_fma.fma(a, b, c)
    finite_product = np.isfinite(a) & np.isfinite(b)
    finite = finite_product & np.isfinite(c)
    # Right for non-finite operands (inf/NaN propagate the same way), except that
    # the exact product of finite operands never overflows: it meets an infinite c as c.
    out = np.where(finite_product & np.isinf(c), c, a * b + c)
    if mode == "rn":
        uh, ul = two_prod(a, b)
        th, tl = two_sum(c, uh)
        s, e = two_sum(tl, ul)
        inexact = (e != 0) & ((s.view(np.uint64) & np.uint64(1)) == 0)
        v = np.where(inexact, np.where(e > 0, np.nextafter(s, np.inf), np.nextafter(s, -np.inf)), s)
        z = th + v
        p = np.abs(a * b)
        safe = finite & ((a == 0) | (b == 0) | ((p > 2.0**-900) & (p < 2.0**990))) & (np.abs(c) < 2.0**990) & np.isfinite(z)
        safe &= (np.abs(a) < 2.0**990) & (np.abs(b) < 2.0**990)
        out = np.where(safe, z, out)
        slow = finite & ~safe
    else:
        slow = finite
    for i, val in _exact_f64(a, b, c, mode, slow, "fma").items():
        out[i] = val
    return out


def build_fma(instr, mods: Mods, opcode: str = "fma") -> AluOp:
    mode = mods.one_of(ROUNDING, "rn")
    fmt = _fmt(mods)
    ftz, sat = _ftz_sat(mods, fmt)
    load, finish = _loader(fmt, ftz), _finisher(fmt, ftz, sat)

    if fmt == "f32":

        # The float64 sum p + c can itself be inexact (and a plain float64 detour
        # would then double-round at f32 ties); round_pair rounds the exact pair
        # (s, e) to odd first, so the single f32 rounding is the correct one.
        @quiet
        def fma32(a, b, c):
            if mode == "rn" and array_fma.wanted(a, b, c):
                return finish(array_fma.fma(load(a), load(b), load(c)))
            p = load(a).astype(np.float64) * load(b)  # exact product
            s, e = two_sum(p, load(c).astype(np.float64))
            return finish(round_pair(s, e, "f32", mode).view(np.float32))

        return AluOp((fmt,) * 3, (fmt,), fma32)

    @quiet
    def fn64(a, b, c):
        return canonical(fma64(a.view(np.float64), b.view(np.float64), c.view(np.float64), mode), "f64")

    return AluOp((fmt,) * 3, (fmt,), fn64)


# ------------------------------------------------------ div / rcp / sqrt


def _div(fmt: str, mode: str, load, finish):
    if fmt == "f32" and mode == "rn":
        return lambda a, b: finish(np.divide(load(a), load(b)))
    if fmt == "f32":

        def directed32(a, b):
            x, y = load(a).astype(np.float64), load(b).astype(np.float64)
            q = x / y
            p, pe = two_prod(q, y)
            e = ((x - p) - pe) * np.sign(y)
            return finish(round_pair(q, e, "f32", mode).view(np.float32))

        return directed32
    if mode == "rn":
        return lambda a, b: canonical(a.view(np.float64) / b.view(np.float64), "f64")
    return lambda a, b: canonical(_scaled_f64(a.view(np.float64), b.view(np.float64), mode, "div"), "f64")


def build_div(instr, mods: Mods) -> AluOp:
    style = mods.one_of(("approx", "full", *ROUNDING), "rn")
    fmt = _fmt(mods)
    ftz, _ = _ftz_sat(mods, fmt, sat_allowed=False)
    if style in ("approx", "full") and fmt == "f64":
        raise mods.error(f".{style} is only defined for .f32")
    mode = "rn" if style in ("approx", "full") else style  # approximate forms computed exactly
    fn = _div(fmt, mode, _loader(fmt, ftz), _finisher(fmt, ftz, False))
    return AluOp((fmt, fmt), (fmt,), quiet(fn))


def build_rcp(instr, mods: Mods) -> AluOp:
    style = mods.one_of(("approx", *ROUNDING))
    if style is None:
        raise mods.error("rcp needs .approx or a rounding modifier")
    fmt = _fmt(mods)
    ftz = mods.flag("ftz")
    if ftz and fmt == "f64" and style != "approx":
        raise mods.error(".ftz is only defined for rcp.approx.ftz.f64 among f64 forms")
    mode = "rn" if style == "approx" else style
    load = _loader(fmt, ftz and fmt == "f32")
    div = _div(fmt, mode, load, _finisher(fmt, ftz and fmt == "f32", False))
    one = np.array(1, _VIEW[fmt]).view(_RAW[fmt])
    return AluOp((fmt,), (fmt,), quiet(lambda a: div(np.broadcast_to(one, a.shape), a)))


def _sqrt_err(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    p, pe = two_prod(q, q)
    return (x - p) - pe


def build_sqrt(instr, mods: Mods) -> AluOp:
    style = mods.one_of(("approx", *ROUNDING))
    if style is None:
        raise mods.error("sqrt needs .approx or a rounding modifier")
    fmt = _fmt(mods)
    ftz, _ = _ftz_sat(mods, fmt, sat_allowed=False)
    if style == "approx" and fmt == "f64":
        raise mods.error("sqrt.approx is only defined for .f32")
    load, finish = _loader(fmt, ftz), _finisher(fmt, ftz, False)
    mode = "rn" if style == "approx" else style

    if fmt == "f32":
        if mode == "rn":
            return AluOp((fmt,), (fmt,), quiet(lambda a: finish(np.sqrt(load(a)))))

        @quiet
        def directed32(a):
            x = load(a).astype(np.float64)
            q = np.sqrt(x)
            return finish(round_pair(q, _sqrt_err(x, q), "f32", mode).view(np.float32))

        return AluOp((fmt,), (fmt,), directed32)

    if mode == "rn":
        return AluOp((fmt,), (fmt,), quiet(lambda a: canonical(np.sqrt(a.view(np.float64)), "f64")))

    @quiet
    def directed64(a):
        x = a.view(np.float64)
        m, e = np.frexp(x)
        odd = (e & 1) == 1
        m = np.where(odd, m * 2, m)
        e = np.where(odd, e - 1, e)
        q = np.sqrt(m)
        r = np.ldexp(step_directed(q, _sqrt_err(m, q), mode), e // 2)
        return canonical(np.where(np.isfinite(x) & (x > 0), r, np.sqrt(x)), "f64")

    return AluOp((fmt,), (fmt,), directed64)


_APPROX = {
    "sin": np.sin,
    "cos": np.cos,
    "lg2": np.log2,
    "ex2": np.exp2,
    "tanh": np.tanh,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
}


def build_approx(instr, mods: Mods, opcode: str) -> AluOp:
    """The .approx functions; their results are computed accurately (within PTX's error bounds)."""
    if not mods.flag("approx"):
        raise mods.error(f"{opcode} needs .approx")
    fmt = _fmt(mods)
    ftz = mods.flag("ftz")
    if fmt == "f64" and opcode != "rsqrt":
        raise mods.error(f"{opcode}.approx is only defined for .f32")
    f32 = fmt == "f32"
    load, finish = _loader(fmt, ftz and f32), _finisher(fmt, ftz and f32, False)
    func = _APPROX[opcode]
    if f32:
        return AluOp((fmt,), (fmt,), quiet(lambda a: finish(func(load(a).astype(np.float64)).astype(np.float32))))
    return AluOp((fmt,), (fmt,), quiet(lambda a: finish(func(load(a)))))


# ----------------------------------------------------- abs/neg/min/max


def build_absneg(instr, mods: Mods, neg: bool) -> AluOp:
    fmt = _fmt(mods)
    ftz, _ = _ftz_sat(mods, fmt, sat_allowed=False)
    raw = _RAW[fmt]
    sign = raw(1 << (63 if fmt == "f64" else 31))
    load = _loader(fmt, ftz)

    def fn(a):
        bits = load(a).view(raw) if ftz else a
        return bits ^ sign if neg else bits & ~sign

    return AluOp((fmt,), (fmt,), fn)


def float_minmax(x: np.ndarray, y: np.ndarray, is_max: bool, nan_prop: bool) -> np.ndarray:
    """PTX min/max on float values: a NaN operand is ignored unless .NaN; -0.0 < +0.0."""
    if is_max:
        first = (x > y) | ((x == y) & ~np.signbit(x))
    else:
        first = (x < y) | ((x == y) & np.signbit(x))
    r = np.where(first | np.isnan(y), x, y)
    if nan_prop:
        r = np.where(np.isnan(x) | np.isnan(y), x.dtype.type(np.nan), r)
    return r


def build_minmax(instr, mods: Mods, is_max: bool) -> AluOp:
    ftz = mods.flag("ftz")
    nan_prop = mods.flag("NaN")
    xorsign = mods.flag("xorsign")
    absolute = mods.flag("abs")
    fmt = _fmt(mods)
    if xorsign and not absolute:
        raise mods.error(".xorsign needs .abs")
    if fmt == "f64" and (ftz or nan_prop or xorsign or absolute):
        raise mods.error("min/max.f64 takes no modifiers")
    three = len(instr.operands) == 4
    if three and xorsign:
        raise mods.error(".xorsign.abs has no three-input form")
    load, finish = _loader(fmt, ftz), _finisher(fmt, ftz, False)
    raw = _RAW[fmt]
    sign = raw(1 << (63 if fmt == "f64" else 31))

    @quiet
    def two(a, b):
        x, y = load(a), load(b)
        if absolute:
            x, y = np.abs(x), np.abs(y)
        r = float_minmax(x, y, is_max, nan_prop)
        bits = finish(r)
        if xorsign:
            flip = (a ^ b) & sign
            bits = np.where(np.isnan(r), bits, bits | flip)
        return bits

    if not three:
        return AluOp((fmt, fmt), (fmt,), two)

    @quiet
    def three_inputs(a, b, c):
        x, y, z = load(a), load(b), load(c)
        if absolute:
            x, y, z = np.abs(x), np.abs(y), np.abs(z)
        return finish(float_minmax(float_minmax(x, y, is_max, nan_prop), z, is_max, nan_prop))

    return AluOp((fmt,) * 3, (fmt,), three_inputs)


def build_copysign(instr, mods: Mods) -> AluOp:
    """copysign d, a, b: b's magnitude with a's sign."""
    fmt = _fmt(mods)
    raw = _RAW[fmt]
    sign = raw(1 << (63 if fmt == "f64" else 31))
    return AluOp((fmt, fmt), (fmt,), lambda a, b: (b & ~sign) | (a & sign))

