"""Exact IEEE rounding on top of NumPy's round-to-nearest float64 arithmetic.

NumPy only rounds to nearest-even, and only to the precision of the dtype it
computes in. PTX needs four rounding directions for f16, bf16, f32 and f64
results. The approach throughout: compute a value as an unevaluated pair
`x + e` of float64 numbers that equals the exact result (or whose `e` at least
has the right sign), then

* for nearest-even into a narrower format, first round `x + e` to *odd* in
  float64 and then round that to nearest: rounding to odd with at least two
  extra bits never double-rounds (Boldo & Melquiond), so the result is the
  correctly rounded one even where a plain float64 detour would not be;
* for the directed modes, round to nearest and step one ulp with
  `np.nextafter` where that landed on the wrong side of the exact value.

The error terms come from the classic error-free transformations (Knuth's
TwoSum, Dekker's TwoProduct), which are exact unless they overflow or
underflow; callers guard those ranges.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import wraps

import numpy as np

from gpurace.sim.alu.rawtypes import CANONICAL_NAN

_SPLITTER = 134217729.0  # 2**27 + 1, Dekker's splitting constant for float64
F32_MIN_NORMAL = np.float32(1.1754943508222875e-38)
F16_MIN_NORMAL = np.float16(6.103515625e-05)


def quiet(fn):
    """Run `fn` with NumPy floating-point warnings off (overflow, NaN, ... are expected)."""

    @wraps(fn)
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return run


# ---------------------------------------------------------------- decoding


def bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    """bf16 raw bits to float32 values (exact: bf16 is the top half of an f32)."""
    return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32)


def to_f64(raw: np.ndarray, fmt: str) -> np.ndarray:
    """Raw bits of a float format to float64 values (always exact)."""
    if fmt == "f64":
        return raw.view(np.float64)
    if fmt == "f32":
        return raw.view(np.float32).astype(np.float64)
    if fmt == "f16":
        return raw.view(np.float16).astype(np.float64)
    return bf16_to_f32(raw).astype(np.float64)


def flush_subnormal(x: np.ndarray, min_normal) -> np.ndarray:
    """`.ftz`: subnormals become zero of the same sign."""
    return np.where(np.abs(x) < min_normal, np.copysign(np.zeros_like(x), x), x)


# ------------------------------------------------- error-free transformations


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e == a + b exactly, s = RN(a + b) (barring overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p + e == a * b exactly, p = RN(a * b), for |a|, |b|, |ab| well inside the normal range."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def to_odd(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Round the exact value x + e to odd in float64 (x is RN(x + e)).

    Where x + e is inexact and x's last bit is even, the answer is x's
    neighbour towards e, which in the bit pattern is one up (away from zero)
    or one down (towards zero); x is never zero there, since TwoSum and
    TwoProduct give e == 0 for a zero x.
    """
    bits = x.view(np.uint64)
    fix = (e != 0) & ((bits & np.uint64(1)) == 0) & np.isfinite(x)
    if not fix.any():
        return x
    away = (e > 0) == (x > 0)
    return np.where(fix, np.where(away, bits | np.uint64(1), bits - np.uint64(1)), bits).view(np.float64)


# --------------------------------------------------------------- rounding


def step_directed(r: np.ndarray, err: np.ndarray, mode: str) -> np.ndarray:
    """Move r (round-to-nearest of an exact value) to the directed rounding `mode`.

    `err` has the sign of (exact - r); an infinite r from finite operands
    (overflow) must come with err of the opposite sign.
    """
    if mode == "rz":
        wrong = ((err < 0) & (r > 0)) | ((err > 0) & (r < 0))
        target = np.zeros_like(r)
    elif mode == "rm":
        wrong = err < 0
        target = np.full_like(r, -np.inf)
    elif mode == "rp":
        wrong = err > 0
        target = np.full_like(r, np.inf)
    else:
        return r
    if not wrong.any():
        return r
    return np.where(wrong, np.nextafter(r, target), r)


def overflow_err(r: np.ndarray, err: np.ndarray, finite_inputs: np.ndarray) -> np.ndarray:
    """Make err point back from an infinity that finite operands overflowed to."""
    return np.where(np.isinf(r) & finite_inputs, -r, err)


def round_pair(x: np.ndarray, e: np.ndarray | None, fmt: str, mode: str) -> np.ndarray:
    """Round the exact value x + e (float64 pair, x = RN(x + e)) to `fmt`; returns raw bits.

    `e` may be None when x is exact. NaNs come out canonical.
    """
    if fmt == "f64":
        if e is None:  # x may be the caller's input: never hand back a view of it
            return np.array(canonical(x, "f64"), copy=True)
        return canonical(x if mode == "rn" else step_directed(x, e, mode), "f64")
    if fmt == "bf16":
        return _round_bf16(x, e, mode)
    dtype = np.float32 if fmt == "f32" else np.float16
    if mode == "rn":
        xo = x if e is None else to_odd(x, e)
        return canonical(xo.astype(dtype), fmt)
    r = x.astype(dtype)
    d = x - r.astype(np.float64)
    err = d if e is None else np.where(d != 0, d, e)
    return canonical(step_directed(r, err, mode), fmt)


def _round_bf16(x: np.ndarray, e: np.ndarray | None, mode: str) -> np.ndarray:
    """bf16 from an exact pair: round to odd into float32, then round the f32 bits."""
    xo = x if e is None else to_odd(x, e)
    f = xo.astype(np.float32)
    d = xo - f.astype(np.float64)
    odd_needed = (d != 0) & ((f.view(np.uint32) & np.uint32(1)) == 0) & np.isfinite(f)
    f = np.where(odd_needed, np.nextafter(f, np.where(d > 0, np.float32(np.inf), np.float32(-np.inf))), f)
    # A float32 that overflowed is still infinite here; in directed modes that
    # must become the largest finite bf16, which the f32 bits of FLT_MAX give.
    overflow = np.isinf(f) & np.isfinite(xo)
    if mode != "rn" and overflow.any():
        f = np.where(overflow, np.copysign(np.float32(3.4028234663852886e38), f), f)
    return f32_to_bf16(f, mode)


def f32_to_bf16(f: np.ndarray, mode: str) -> np.ndarray:
    """Round float32 values to bf16 raw bits in `mode` (NaN -> canonical)."""
    bits = f.view(np.uint32)
    low = bits & np.uint32(0xFFFF)
    top = (bits >> np.uint32(16)).astype(np.uint32)
    negative = (bits >> np.uint32(31)).astype(bool)
    if mode == "rn":
        up = (low > 0x8000) | ((low == 0x8000) & ((top & np.uint32(1)) == 1))
    elif mode == "rz":
        up = np.zeros(bits.shape, bool)
    elif mode == "rm":
        up = (low != 0) & negative
    else:
        up = (low != 0) & ~negative
    out = (top + up).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(CANONICAL_NAN["bf16"]), out)


def canonical(r: np.ndarray, fmt: str) -> np.ndarray:
    """Float values to raw bits, with every NaN replaced by the GPU's canonical NaN."""
    raw_type = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}[fmt]
    bits = r.view(raw_type)
    nan = np.isnan(r)
    if nan.any():
        bits = np.where(nan, raw_type(CANONICAL_NAN[fmt]), bits)
    return bits


def saturate(x: np.ndarray) -> np.ndarray:
    """`.sat` for floats: clamp to [0, 1], NaN becomes +0."""
    x = np.where(x > 1, x.dtype.type(1), x)
    return np.where((x > 0), x, x.dtype.type(0))


# ------------------------------------------------------- exact slow path


def round_fraction(value: Fraction, mode: str) -> float:
    """Round an exact rational to float64 in `mode` (scalar; for rare corner cases)."""
    try:
        f = float(value)  # int/int true division is correctly rounded
    except OverflowError:
        f = math.inf if value > 0 else -math.inf
    if math.isinf(f):
        over_rounded = True  # |f| > |value| always
        fx_gt = f > 0
    else:
        fx = Fraction(f)
        over_rounded = fx != value
        fx_gt = fx > value
    if not over_rounded:
        return f
    if mode == "rz" and ((f > 0 and fx_gt) or (f < 0 and not fx_gt)):
        return math.nextafter(f, 0.0)
    if mode == "rm" and fx_gt:
        return math.nextafter(f, -math.inf)
    if mode == "rp" and not fx_gt:
        return math.nextafter(f, math.inf)
    return f
