"""Floating-point, half-precision, comparison and conversion semantics of the ALU.

Exact references come from `fractions.Fraction`: each result is rounded once,
independently of the implementation, by `ref_round`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import platform
import random
import struct
from fractions import Fraction

import numpy as np
import pytest

from gpurace.frontend.ptx.ir import Instruction, PredPair, Reg
from gpurace.sim.alu import compile_alu
from gpurace.sim.native import array_fma

FORMATS = {  # precision (bits incl. hidden), min exponent, max finite
    "f16": (11, -14, 65504.0),
    "bf16": (8, -126, float.fromhex("0x1.fep127")),
    "f32": (24, -126, float.fromhex("0x1.fffffep127")),
    "f64": (53, -1022, float.fromhex("0x1.fffffffffffffp1023")),
}


def alu(spec: str, operands=()):
    opcode, *mods = spec.split(".")
    return compile_alu(Instruction(opcode, tuple(mods), tuple(operands), text=spec))


def ref_round(x: Fraction, fmt: str, mode: str = "rn") -> float:
    """x rounded to `fmt` in `mode`, as a Python float."""
    prec, emin, top = FORMATS[fmt]
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    m = abs(x)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - prec + 1)
    q = m / ulp
    down, up = math.floor(q), math.ceil(q)
    if mode == "rn":
        qi = down if (q - down < up - q or (q - down == up - q and down % 2 == 0)) else up
    elif mode == "rz" or (mode == "rm" and sign > 0) or (mode == "rp" and sign < 0):
        qi = down
    else:
        qi = up
    v = qi * ulp
    if v > Fraction(top):
        away = mode == "rn" or (mode == "rp" and sign > 0) or (mode == "rm" and sign < 0)
        return sign * (math.inf if away else top)
    return sign * float(v)


def f32(*v):
    return np.array(v, np.float32).view(np.uint32)


def f64(*v):
    return np.array(v, np.float64).view(np.uint64)


def vals32(raw):
    return [float(x) for x in np.asarray(raw).view(np.float32)]


def same(got, want):
    """Float lists equal, NaN == NaN and signed zeros distinguished."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if math.isnan(w):
            assert math.isnan(g), (got, want)
        else:
            assert g == w and math.copysign(1, g) == math.copysign(1, w), (got, want)


def random_f32(rng, n):
    out = []
    for _ in range(n):
        bits = rng.getrandbits(32)
        if (bits >> 23) & 0xFF == 0xFF:
            bits &= ~(1 << 30)
        out.append(struct.unpack("<f", struct.pack("<I", bits))[0])
    return out


RNG = random.Random(99)
F32_VALUES = random_f32(RNG, 300) + [1.0, -1.0, 3.0, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, 0.1, 1 / 3]


# ------------------------------------------------------------------ exact rounding


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@pytest.mark.parametrize("kind", ["add", "sub", "mul", "div"])
def test_f32_arith_rounding_is_exact(kind, mode):
    a = F32_VALUES
    b = list(reversed(F32_VALUES))
    got = vals32(alu(f"{kind}.{mode}.f32").fn(f32(*a), f32(*b)))
    fa, fb = [Fraction(x) for x in np.float32(a).tolist()], [Fraction(x) for x in np.float32(b).tolist()]
    op = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y, "div": lambda x, y: x / y}[kind]
    same(got, [ref_round(op(x, y), "f32", mode) if (kind != "div" or y != 0) else g for x, y, g in zip(fa, fb, got)])


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_fma_f32_rounds_once(mode, fma_path):
    rng = random.Random(5)
    a, b, c = random_f32(rng, 300), random_f32(rng, 300), random_f32(rng, 300)
    # products near -c exercise cancellation; tiny c exercises the sticky bit
    a += [1.0 + 2**-23, 1.0, 3.0]
    b += [1.0 - 2**-23, 1.0 + 2**-23, 2**-30]
    c += [-1.0, 2**-48, -(2**-29)]
    got = vals32(alu(f"fma.{mode}.f32").fn(f32(*a), f32(*b), f32(*c)))
    want = [ref_round(Fraction(x) * Fraction(y) + Fraction(z), "f32", mode)
            for x, y, z in zip(np.float32(a).tolist(), np.float32(b).tolist(), np.float32(c).tolist())]
    same(got, want)


def test_fma_f32_double_rounding_corner(fma_path):
    # exact = 1 + 2^-24 + 2^-60: a float64 detour rounds to the tie 1 + 2^-24, then to even 1.0
    a, b, c = 1.0 + 2**-23, 1.0 + 2**-23, 2**-60
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    got = vals32(alu("fma.rn.f32").fn(f32(a), f32(b), f32(c)))
    same(got, [ref_round(exact, "f32")])


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f64_directed_arith_and_fma(mode):
    rng = random.Random(11)
    a = [rng.uniform(-1e3, 1e3) for _ in range(60)] + [1e308, 5e-324, 1.0]
    b = [rng.uniform(-1e3, 1e3) for _ in range(60)] + [10.0, 0.5, 3.0]
    c = [rng.uniform(-1e-10, 1e-10) for _ in range(60)] + [-1e308, 0.0, -3.0]
    for kind, op in (("add", lambda x, y: x + y), ("mul", lambda x, y: x * y), ("div", lambda x, y: x / y)):
        got = alu(f"{kind}.{mode}.f64").fn(f64(*a), f64(*b)).view(np.float64).tolist()
        same(got, [ref_round(op(Fraction(x), Fraction(y)), "f64", mode) for x, y in zip(a, b)])
    got = alu(f"fma.{mode}.f64").fn(f64(*a), f64(*b), f64(*c)).view(np.float64).tolist()
    same(got, [ref_round(Fraction(x) * Fraction(y) + Fraction(z), "f64", mode) for x, y, z in zip(a, b, c)])


@pytest.mark.parametrize("fmt", ["f32", "f64"])
def test_sqrt_directed_brackets_the_root(fmt):
    xs = [2.0, 3.0, 0.5, 1e-40, 1e30, 7.0, 4.0, 5e-324 if fmt == "f64" else 1e-45]
    dtype = np.float32 if fmt == "f32" else np.float64
    raw = np.array(xs, dtype)
    for mode in ("rz", "rp", "rn"):
        got = alu(f"sqrt.{mode}.{fmt}").fn(raw.view(np.uint32 if fmt == "f32" else np.uint64)).view(dtype)
        for x, g in zip(raw.tolist(), got):
            lo = np.nextafter(g, dtype(0))
            hi = np.nextafter(g, dtype(np.inf))
            X, G, L, H = Fraction(x), Fraction(float(g)), Fraction(float(lo)), Fraction(float(hi))
            if mode == "rz":
                assert G * G <= X < H * H
            elif mode == "rp":
                assert L * L < X <= G * G
            else:  # nearest: no neighbour is closer
                assert abs(G * G - X) <= min(abs(L * L - X), abs(H * H - X))


@pytest.fixture(params=["emulated", "compiled"])
def fma_path(request, monkeypatch):
    """Round-to-nearest fma through the NumPy emulation, or LLVM's fma from the first element."""
    monkeypatch.setattr(array_fma, "EMULATED_BEFORE_COMPILING", 10**15 if request.param == "emulated" else 0)
    return request.param


def test_fma_f64_round_to_nearest_matches_exact(fma_path):
    rng = random.Random(21)
    a = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-40, 40) for _ in range(300)]
    b = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-40, 40) for _ in range(300)]
    c = [-(x * y) if i % 3 == 0 else rng.uniform(-1, 1) * 2.0 ** rng.randint(-90, 90) for i, (x, y) in enumerate(zip(a, b))]
    a += [1e300, 1e-300, 0.1]
    b += [1e10, 1e-20, 10.0]
    c += [-1e308, 1e-320, -1.0]
    got = alu("fma.rn.f64").fn(f64(*a), f64(*b), f64(*c)).view(np.float64).tolist()
    same(got, [ref_round(Fraction(x) * Fraction(y) + Fraction(z), "f64") for x, y, z in zip(a, b, c)])


@pytest.mark.parametrize("fmt", ["f32", "f64", "ftz.f32"])
def test_compiled_fma_gives_the_emulated_bits(fmt, monkeypatch):
    """Any bit patterns (NaNs, infinities, subnormals, overflow): LLVM's fma and the emulation agree bit for bit."""
    raw = np.uint32 if fmt.endswith("f32") else np.uint64
    rng = np.random.default_rng(3)
    a, b, c = (rng.integers(0, np.iinfo(raw).max, 5000, dtype=raw, endpoint=True) for _ in range(3))
    with np.errstate(all="ignore"):
        c[::2] = (a[::2].view(_VIEW[raw]) * b[::2].view(_VIEW[raw]) * -1).view(raw)  # cancellation
    op = alu(f"fma.rn.{fmt}")
    results = []
    for emulated_first in (10**15, 0):
        monkeypatch.setattr(array_fma, "EMULATED_BEFORE_COMPILING", emulated_first)
        with np.errstate(all="ignore"):
            results.append(op.fn(a, b, c))
    assert results[0].dtype == results[1].dtype == raw
    assert np.array_equal(results[0], results[1])


_VIEW = {np.uint32: np.float32, np.uint64: np.float64}
_X86_ROUNDING = {"rn": 0x000, "rm": 0x400, "rp": 0x800, "rz": 0xC00}  # <fenv.h> FE_* on x86-64


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the FE_* rounding constants are x86-64's")
@pytest.mark.parametrize("fmt", ["f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_fma_matches_the_host_libm(fmt, mode):
    """The C library's fma under fesetround is an independent reference for every bit pattern and mode."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    fn = libm.fma if fmt == "f64" else libm.fmaf
    scalar = ctypes.c_double if fmt == "f64" else ctypes.c_float
    fn.restype, fn.argtypes = scalar, [scalar] * 3
    raw = np.uint64 if fmt == "f64" else np.uint32
    view = _VIEW[raw]
    rng = np.random.default_rng(7)
    a, b, c = (rng.integers(0, np.iinfo(raw).max, 1500, dtype=raw, endpoint=True) for _ in range(3))
    with np.errstate(all="ignore"):
        c[::2] = (a[::2].view(view) * b[::2].view(view) * -1).view(raw)  # cancellation, exact zeros
        c[1::4] = 0  # products alone, underflowing ones included
    with np.errstate(all="ignore"):
        got = alu(f"fma.{mode}.{fmt}").fn(a, b, c).view(view)
    libm.fesetround(_X86_ROUNDING[mode])
    try:
        want = np.array([fn(x, y, z) for x, y, z in zip(a.view(view).tolist(), b.view(view).tolist(), c.view(view).tolist())], view)
    finally:
        libm.fesetround(0)
    same_bits = got.view(raw) == want.view(raw)
    assert (same_bits | (np.isnan(got) & np.isnan(want))).all()


# ------------------------------------------------------------------ ftz / sat / specials


def test_ftz_and_sat():
    tiny = 1e-40  # subnormal in f32
    same(vals32(alu("add.ftz.f32").fn(f32(tiny, -tiny), f32(0.0, -0.0))), [0.0, -0.0])
    same(vals32(alu("add.f32").fn(f32(tiny), f32(0.0))), [float(np.float32(tiny))])
    same(vals32(alu("mul.sat.f32").fn(f32(2.0, -2.0, 0.25, np.inf, np.nan), f32(1.0, 1.0, 1.0, 0.0, 1.0))), [1.0, 0.0, 0.25, 0.0, 0.0])
    nan_bits = alu("add.f32").fn(f32(np.inf), f32(-np.inf))
    assert nan_bits.tolist() == [0x7FFFFFFF]  # canonical NaN


def test_min_max_nan_and_signed_zero():
    a = f32(np.nan, 1.0, np.nan, 0.0, -0.0, 2.0)
    b = f32(1.0, np.nan, np.nan, -0.0, 0.0, 3.0)
    same(vals32(alu("min.f32").fn(a, b)), [1.0, 1.0, math.nan, -0.0, -0.0, 2.0])
    same(vals32(alu("max.f32").fn(a, b)), [1.0, 1.0, math.nan, 0.0, 0.0, 3.0])
    same(vals32(alu("max.NaN.f32").fn(a, b)), [math.nan, math.nan, math.nan, 0.0, 0.0, 3.0])
    same(vals32(alu("min.xorsign.abs.f32").fn(f32(-5.0, 5.0), f32(3.0, -7.0))), [-3.0, -5.0])
    same(vals32(alu("max.f32", (Reg("d"), Reg("a"), Reg("b"), Reg("c"))).fn(f32(1.0), f32(np.nan), f32(7.0))), [7.0])
    d = alu("min.f64").fn(f64(math.nan, -0.0), f64(2.0, 0.0)).view(np.float64).tolist()
    same(d, [2.0, -0.0])


def test_abs_neg_copysign_testp():
    same(vals32(alu("neg.f32").fn(f32(0.0, -2.0))), [-0.0, 2.0])
    same(vals32(alu("abs.ftz.f32").fn(f32(-1e-40, -2.0))), [0.0, 2.0])
    same(vals32(alu("copysign.f32").fn(f32(-1.0, 1.0), f32(3.0, -3.0))), [-3.0, 3.0])
    x = f32(0.0, 1e-40, 1.0, np.inf, np.nan)
    assert alu("testp.normal.f32").fn(x).tolist() == [True, False, True, False, False]
    assert alu("testp.subnormal.f32").fn(x).tolist() == [False, True, False, False, False]
    assert alu("testp.finite.f32").fn(x).tolist() == [True, True, True, False, False]
    assert alu("testp.notanumber.f32").fn(x).tolist() == [False, False, False, False, True]


def test_approximate_functions_are_close():
    x = f32(0.5, 2.0, 10.0)
    np.testing.assert_allclose(vals32(alu("sin.approx.f32").fn(x)), np.sin([0.5, 2.0, 10.0]), rtol=1e-6)
    np.testing.assert_allclose(vals32(alu("ex2.approx.ftz.f32").fn(x)), [2**0.5, 4.0, 1024.0], rtol=1e-6)
    np.testing.assert_allclose(vals32(alu("rsqrt.approx.f32").fn(x)), 1 / np.sqrt([0.5, 2.0, 10.0]), rtol=1e-6)
    same(vals32(alu("lg2.approx.f32").fn(f32(0.0, -1.0))), [-math.inf, math.nan])
    same(vals32(alu("rcp.rn.f32").fn(f32(4.0, 0.0, -0.0))), [0.25, math.inf, -math.inf])
    same(vals32(alu("div.full.f32").fn(f32(1.0), f32(3.0))), [float(np.float32(1 / 3))])


# ------------------------------------------------------------------ half precision


def h16(*v):
    return np.array(v, np.float16).view(np.uint16)


def bf16_of(x: float) -> int:
    """Reference bf16 bits of a float (round to nearest even from the exact value)."""
    r = ref_round(Fraction(x), "bf16")
    return struct.unpack("<I", struct.pack("<f", r))[0] >> 16


def test_f16_arith_rounds_once():
    rng = random.Random(3)
    a = [float(np.float16(rng.uniform(-100, 100))) for _ in range(200)] + [65504.0, 2.0**-24, 1.0]
    b = [float(np.float16(rng.uniform(-100, 100))) for _ in range(200)] + [32.0, 2.0**-25 * 2, 2.0**-11]
    c = [float(np.float16(rng.uniform(-1, 1))) for _ in range(203)]
    got = alu("fma.rn.f16").fn(h16(*a), h16(*b), h16(*c)).view(np.float16).astype(float).tolist()
    same(got, [ref_round(Fraction(x) * Fraction(y) + Fraction(z), "f16") for x, y, z in zip(a, b, c)])
    got = alu("add.f16").fn(h16(*a), h16(*b)).view(np.float16).astype(float).tolist()
    same(got, [ref_round(Fraction(x) + Fraction(y), "f16") for x, y in zip(a, b)])


def test_f16x2_lanes_and_relu_sat():
    a = np.array([0x3C00_4000], np.uint32)  # high lane 1.0, low lane 2.0
    b = np.array([0xC400_3C00], np.uint32)  # high lane -4.0, low lane 1.0
    out = alu("add.f16x2").fn(a, b).view(np.float16).tolist()
    assert out == [3.0, -3.0]
    out = alu("fma.rn.relu.f16x2").fn(a, b, np.zeros(1, np.uint32)).view(np.float16).tolist()
    assert out == [2.0, 0.0]
    assert alu("mul.sat.f16").fn(h16(3.0), h16(0.5)).view(np.float16).tolist() == [1.0]


def test_bf16_arith_and_minmax():
    rng = random.Random(8)
    to_bf = lambda x: struct.unpack("<f", struct.pack("<I", bf16_of(x) << 16))[0]  # noqa: E731
    a = [to_bf(rng.uniform(-10, 10)) for _ in range(100)]
    b = [to_bf(rng.uniform(-10, 10)) for _ in range(100)]
    raw = lambda vs: np.array([0x7FC0 if math.isnan(v) else bf16_of(v) for v in vs], np.uint16)  # noqa: E731
    got = alu("mul.rn.bf16").fn(raw(a), raw(b)).tolist()
    assert got == [bf16_of(float(ref_round(Fraction(x) * Fraction(y), "bf16"))) for x, y in zip(a, b)]
    got = alu("max.bf16").fn(raw([1.0, math.nan]), raw([2.0, 3.0])).tolist()
    assert got == [bf16_of(2.0), bf16_of(3.0)]


# ------------------------------------------------------------------ comparisons


def test_setp_ordered_and_unordered():
    a, b = f32(1.0, np.nan, 2.0, np.nan), f32(2.0, 1.0, 2.0, np.nan)
    cases = {
        "lt": [True, False, False, False], "ltu": [True, True, False, True],
        "eq": [False, False, True, False], "equ": [False, True, True, True],
        "ne": [True, False, False, False], "neu": [True, True, False, True],
        "ge": [False, False, True, False], "geu": [False, True, True, True],
        "num": [True, False, True, False], "nan": [False, True, False, True],
    }
    for op, want in cases.items():
        assert alu(f"setp.{op}.f32").fn(a, b).tolist() == want, op


def test_setp_integers_bool_ops_and_pairs():
    a, b = np.array([1, 0xFFFFFFFF], np.uint32), np.array([2, 1], np.uint32)
    assert alu("setp.lt.s32").fn(a, b).tolist() == [True, True]
    assert alu("setp.lo.u32").fn(a, b).tolist() == [True, False]
    assert alu("setp.hi.u32").fn(a, b).tolist() == [False, True]
    pair = (PredPair(Reg("%p1"), Reg("%p2")), Reg("%r1"), Reg("%r2"), Reg("%p3"))
    op = alu("setp.lt.and.s32", pair)
    assert op.src_types == ("s32", "s32", "pred") and op.dst_types == ("pred", "pred")
    p, q = op.fn(a, b, np.array([True, False]))
    assert p.tolist() == [True, False] and q.tolist() == [False, False]
    p, q = alu("setp.ge.xor.s32", pair).fn(a, b, np.array([True, True]))
    assert p.tolist() == [True, True] and q.tolist() == [False, False]


def test_setp_f16x2_gives_one_predicate_per_lane():
    pair = (PredPair(Reg("%p1"), Reg("%p2")), Reg("%r1"), Reg("%r2"))
    a = np.array([0x3C00_4000], np.uint32)  # hi 1.0, lo 2.0
    b = np.array([0x4000_3C00], np.uint32)  # hi 2.0, lo 1.0
    p, q = alu("setp.lt.f16x2", pair).fn(a, b)
    assert p.tolist() == [False] and q.tolist() == [True]


def test_set_selp_slct():
    a, b = np.array([1, 5], np.uint32), np.array([2, 2], np.uint32)
    assert alu("set.lt.u32.s32").fn(a, b).tolist() == [0xFFFFFFFF, 0]
    assert vals32(alu("set.lt.f32.s32").fn(a, b)) == [1.0, 0.0]
    assert alu("set.lt.or.u32.s32").fn(a, b, np.array([False, True])).tolist() == [0xFFFFFFFF, 0xFFFFFFFF]
    assert alu("selp.b32").fn(a, b, np.array([True, False])).tolist() == [1, 2]
    sel = np.array([0, 0xFFFFFFFF], np.uint32)
    assert alu("slct.u32.s32").fn(a, b, sel).tolist() == [1, 2]
    assert alu("slct.u32.f32").fn(np.array([1, 1, 1], np.uint32), np.array([2, 2, 2], np.uint32), f32(-0.0, np.nan, -1e-40)).tolist() == [1, 2, 2]
    assert alu("slct.ftz.u32.f32").fn(np.array([1], np.uint32), np.array([2], np.uint32), f32(-1e-40)).tolist() == [1]


# ------------------------------------------------------------------ conversions


def test_cvt_float_to_int_saturates_and_rounds():
    x = f32(3e9, -3e9, np.nan, 2.5, -2.5, 3.5, -0.5, np.inf, -np.inf)
    assert np.asarray(alu("cvt.rni.s32.f32").fn(x)).view(np.int32).tolist() == [2**31 - 1, -(2**31), 0, 2, -2, 4, 0, 2**31 - 1, -(2**31)]
    assert np.asarray(alu("cvt.rzi.u32.f32").fn(x)).tolist() == [3000000000, 0, 0, 2, 0, 3, 0, 2**32 - 1, 0]
    assert np.asarray(alu("cvt.rmi.s32.f32").fn(f32(-0.5, 1.5))).view(np.int32).tolist() == [-1, 1]
    assert np.asarray(alu("cvt.rpi.s32.f32").fn(f32(-1.5, 1.2))).view(np.int32).tolist() == [-1, 2]
    assert alu("cvt.rzi.sat.u8.f32").fn(f32(300.0, -5.0, 17.9)).tolist() == [255, 0, 17]
    assert alu("cvt.rzi.s64.f64").fn(f64(1e19, -1e19, 2.0**62)).view(np.int64).tolist() == [2**63 - 1, -(2**63), 2**62]
    assert alu("cvt.rzi.u64.f64").fn(f64(1.8e19, 2e19, -1.0)).tolist() == [18000000000000000000, 2**64 - 1, 0]


def test_cvt_int_to_float_rounding():
    big = [2**63 - 1, -(2**63), 2**24 + 1, -(2**24 + 1), (1 << 62) + (1 << 38) + 1, 12345678901234567]
    raw = np.array(big, np.int64).view(np.uint64)
    for mode in ("rn", "rz", "rm", "rp"):
        got = vals32(alu(f"cvt.{mode}.f32.s64").fn(raw))
        same(got, [ref_round(Fraction(v), "f32", mode) for v in big])
        got = alu(f"cvt.{mode}.f64.s64").fn(raw).view(np.float64).tolist()
        same(got, [ref_round(Fraction(v), "f64", mode) for v in big])
    u = np.array([2**64 - 1], np.uint64)
    same(vals32(alu("cvt.rz.f32.u64").fn(u)), [ref_round(Fraction(2**64 - 1), "f32", "rz")])
    same(vals32(alu("cvt.rn.f32.s32").fn(np.array([16777217], np.uint32))), [16777216.0])


def test_cvt_float_to_float():
    xs = [0.1, 1e-50, 3.4028235677973366e38, -1e39, 1.0000000596046448, math.nan]
    raw = f64(*xs)
    for mode in ("rn", "rz", "rm", "rp"):
        same(vals32(alu(f"cvt.{mode}.f32.f64").fn(raw)), [ref_round(Fraction(x), "f32", mode) if not math.isnan(x) else x for x in xs])
    same(alu("cvt.f64.f32").fn(f32(0.1)).view(np.float64).tolist(), [float(np.float32(0.1))])
    same(vals32(alu("cvt.rni.f32.f32").fn(f32(2.5, 3.5, -0.5))), [2.0, 4.0, -0.0])
    same(vals32(alu("cvt.sat.f32.f32").fn(f32(1.5, -1.0, np.nan, 0.5))), [1.0, 0.0, 0.0, 0.5])
    same(vals32(alu("cvt.ftz.f32.f32").fn(f32(-1e-40))), [-0.0])


def test_cvt_half_conversions():
    xs = [1.0 + 2**-11, 1.0 + 3 * 2**-11, 65520.0, 70000.0, -1e-8, 1.0 + 2**-8 + 2**-30]
    raw = f32(*xs)
    got = alu("cvt.rn.f16.f32").fn(raw).view(np.float16).astype(float).tolist()
    same(got, [ref_round(Fraction(float(np.float32(x))), "f16") for x in xs])
    got = alu("cvt.rz.f16.f32").fn(raw).view(np.float16).astype(float).tolist()
    same(got, [ref_round(Fraction(float(np.float32(x))), "f16", "rz") for x in xs])
    got = alu("cvt.rn.bf16.f32").fn(raw).tolist()
    assert got == [bf16_of(float(np.float32(x))) for x in xs]
    # bf16 ties go to even
    ties = f32(float.fromhex("0x1.01p0"), float.fromhex("0x1.03p0"))
    assert alu("cvt.rn.bf16.f32").fn(ties).tolist() == [0x3F80, 0x3F82]
    assert alu("cvt.f32.f16").fn(h16(0.5, -2.0)).view(np.float32).tolist() == [0.5, -2.0]
    assert alu("cvt.rn.relu.f16.f32").fn(f32(-3.0, 2.0)).view(np.float16).tolist() == [0.0, 2.0]
    packed = alu("cvt.rn.f16x2.f32").fn(f32(1.0), f32(2.0))
    assert packed.tolist() == [0x3C00_4000]  # a to the upper half
    packed = alu("cvt.rn.bf16x2.f32").fn(f32(1.0), f32(-2.0))
    assert packed.tolist() == [0x3F80_C000]
    assert np.asarray(alu("cvt.rni.s32.f16").fn(h16(2.5, -7.5))).view(np.int32).tolist() == [2, -8]
    assert alu("cvt.rn.f16.s32").fn(np.array([2049], np.uint32)).view(np.float16).tolist() == [2048.0]


def test_cvt_integer_to_integer():
    assert alu("cvt.u32.s8").fn(np.array([0xFF], np.uint8)).tolist() == [0xFFFFFFFF]
    assert alu("cvt.s32.u8").fn(np.array([0xFF], np.uint8)).tolist() == [0xFF]
    assert alu("cvt.u8.u32").fn(np.array([0x1234], np.uint32)).tolist() == [0x34]
    assert alu("cvt.sat.u8.s32").fn(np.array([0x1234, 0xFFFFFFFF], np.uint32)).tolist() == [0xFF, 0]
    assert alu("cvt.sat.s16.s32").fn(np.array([0x12345, 0xFFFF0000], np.uint32)).view(np.int16).tolist() == [32767, -32768]
    assert alu("cvt.sat.s32.u64").fn(np.array([2**40, 5], np.uint64)).tolist() == [2**31 - 1, 5]
    assert alu("cvt.sat.u64.s64").fn(np.array([-5, 7], np.int64).view(np.uint64)).tolist() == [0, 7]
    assert alu("cvt.s64.s32").fn(np.array([0x80000000], np.uint32)).view(np.int64).tolist() == [-(2**31)]
