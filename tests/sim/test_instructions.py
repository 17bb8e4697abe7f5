"""Instruction edge cases through real PTX, the parser and the engine, against values computed in Python.

Each case is one hand-written PTX kernel (`probe`): thread i loads `a[i]`,
`b[i]`, `c[i]` into registers `%va %vb %vc` of the case's types, runs the
case's instructions (which write `%vd`, or may use `%caddr`, the address of
`c[i]`, and `%cbase`, the address of `c[0]`, for atomics) and stores `%vd` to
`d[i]`. A predicate result (`pred`) is stored as 1/0. The expected values come
from the PTX ISA's definitions, evaluated here with Python integers and NumPy.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import simulate

PROBE = """\
.version 8.0
.target sm_75
.address_size 64

.visible .entry probe(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
    .reg .b32 %ti;
    .reg .b64 %base, %off, %aaddr, %baddr, %caddr, %cbase, %daddr;
    .reg .pred %p, %q;
    .reg .{a} %va;
    .reg .{b} %vb;
    .reg .{c} %vc;
    .reg .{dreg} %vd;
    mov.u32 %ti, %tid.x;
    ld.param.u64 %base, [pa];
    mul.wide.u32 %off, %ti, {asize};
    add.s64 %aaddr, %base, %off;
    ld.param.u64 %base, [pb];
    mul.wide.u32 %off, %ti, {bsize};
    add.s64 %baddr, %base, %off;
    ld.param.u64 %cbase, [pc];
    mul.wide.u32 %off, %ti, {csize};
    add.s64 %caddr, %cbase, %off;
    ld.param.u64 %base, [pd];
    mul.wide.u32 %off, %ti, {dsize};
    add.s64 %daddr, %base, %off;
    ld.global.b{abits} %va, [%aaddr];
    ld.global.b{bbits} %vb, [%baddr];
    ld.global.b{cbits} %vc, [%caddr];
{body}
{store}
    ret;
}}
"""

DTYPES = {
    "u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16, "b16": np.uint16, "f16": np.float16,
    "u32": np.uint32, "s32": np.int32, "b32": np.uint32, "f32": np.float32,
    "u64": np.uint64, "s64": np.int64, "b64": np.uint64, "f64": np.float64,
}  # fmt: skip


def probe(body: str, a, b=None, c=None, *, types=("u32", "u32", "u32"), out="u32"):
    """Run `body` for len(a) threads; returns (d, c after the run, findings)."""
    n = len(a)
    arrays = [np.zeros(n, DTYPES[t]) if values is None else typed(values, t) for t, values in zip(types, (a, b, c))]
    sizes = {k: np.dtype(DTYPES[t]).itemsize for k, t in zip("abc", types)}
    if out == "pred":
        dreg, dtype = "u32", np.uint32
        store = "    selp.u32 %vd, 1, 0, %p;\n    st.global.u32 [%daddr], %vd;"
    else:
        dreg, dtype = out, DTYPES[out]
        store = f"    st.global.b{8 * np.dtype(dtype).itemsize} [%daddr], %vd;"
    text = PROBE.format(
        a=types[0], b=types[1], c=types[2], dreg=dreg, body=body, store=store,
        asize=sizes["a"], bsize=sizes["b"], csize=sizes["c"], dsize=np.dtype(dtype).itemsize,
        abits=8 * sizes["a"], bbits=8 * sizes["b"], cbits=8 * sizes["c"],
    )  # fmt: skip
    d = np.zeros(n, dtype)
    res = simulate(parse_ptx(text, "probe.ptx"), grid=1, block=n, args=[*arrays, d])
    return d, arrays[2], res.findings


def typed(values, t: str) -> np.ndarray:
    """`values` as an array of PTX type `t`; Python ints are taken modulo 2**width (two's complement)."""
    dtype = np.dtype(DTYPES[t])
    if dtype.kind == "f":
        return np.asarray(values).astype(dtype)
    bits = 8 * dtype.itemsize
    raw = np.array([int(v) & ((1 << bits) - 1) for v in values], dtype=f"u{dtype.itemsize}")
    return raw.view(dtype)


def u32(values):
    return [v & 0xFFFFFFFF for v in values]


def u64(values):
    return [v & 0xFFFFFFFFFFFFFFFF for v in values]


def as_list(array) -> list[int]:
    return [int(v) for v in array]


# ---------------------------------------------------------------- integer division


def c_divmod(a: int, b: int) -> tuple[int, int]:
    """C's truncating division."""
    q = abs(a) // abs(b)
    q = q if (a < 0) == (b < 0) else -q
    return q, a - q * b


DIV_A = [7, 0, -7, 2**31 - 1, -(2**31), -(2**31), 100, -100, 13, -13]
DIV_B = [0, 0, 0, 0, 0, -1, 7, 7, -4, -4]


def test_div_u32_by_zero_is_all_ones_and_rem_is_dividend():
    a = u32(DIV_A)
    b = u32(DIV_B)
    d, _, findings = probe("    div.u32 %vd, %va, %vb;", a, b)
    assert as_list(d) == [x // y if y else 0xFFFFFFFF for x, y in zip(a, b)]
    d, _, _ = probe("    rem.u32 %vd, %va, %vb;", a, b)
    assert as_list(d) == [x % y if y else x for x, y in zip(a, b)]
    assert findings == []


def test_div_s32_truncates_toward_zero_and_models_zero_divisor():
    # PTX leaves x/0 machine-specific; the simulator models the hardware sequence's
    # result (-1 for the quotient, the dividend for the remainder). INT_MIN / -1 wraps.
    d, _, _ = probe("    div.s32 %vd, %va, %vb;", DIV_A, DIV_B, types=("s32", "s32", "s32"), out="s32")
    expected = []
    for x, y in zip(DIV_A, DIV_B):
        q = -1 if y == 0 else c_divmod(x, y)[0]
        expected.append(((q + 2**31) % 2**32) - 2**31)
    assert as_list(d) == expected
    d, _, _ = probe("    rem.s32 %vd, %va, %vb;", DIV_A, DIV_B, types=("s32", "s32", "s32"), out="s32")
    assert as_list(d) == [x if y == 0 else c_divmod(x, y)[1] for x, y in zip(DIV_A, DIV_B)]


def test_div_rem_s64():
    a = [-(2**63), -(2**63), 2**63 - 1, -(10**18) - 7, 5]
    b = [-1, 3, -(2**62), 10**9 + 7, 0]
    d, _, _ = probe("    div.s64 %vd, %va, %vb;", a, b, types=("s64", "s64", "s64"), out="s64")
    expected = [-(2**63), c_divmod(a[1], 3)[0], c_divmod(a[2], b[2])[0], c_divmod(a[3], b[3])[0], -1]
    assert as_list(d) == expected
    d, _, _ = probe("    rem.s64 %vd, %va, %vb;", a, b, types=("s64", "s64", "s64"), out="s64")
    assert as_list(d) == [0, c_divmod(a[1], 3)[1], c_divmod(a[2], b[2])[1], c_divmod(a[3], b[3])[1], 5]


# ---------------------------------------------------------------- shifts


SHIFTS = [0, 1, 31, 32, 33, 64, 255, 1000]


def test_shifts_by_width_or_more_clamp():
    """PTX: shift amounts greater than the register width are clamped to the width."""
    x = 0x80F0_0001
    n = len(SHIFTS)
    d, _, _ = probe("    shl.b32 %vd, %va, %vb;", [x] * n, SHIFTS)
    assert as_list(d) == [(x << min(s, 32)) & 0xFFFFFFFF for s in SHIFTS]
    d, _, _ = probe("    shr.u32 %vd, %va, %vb;", [x] * n, SHIFTS)
    assert as_list(d) == [x >> min(s, 32) for s in SHIFTS]
    sx = x - 2**32
    d, _, _ = probe("    shr.s32 %vd, %va, %vb;", [sx] * n, SHIFTS, types=("s32", "u32", "u32"), out="s32")
    assert as_list(d) == [sx >> min(s, 32) for s in SHIFTS]


def test_64_bit_shifts_clamp():
    x = 0x8000_0000_0000_0F01
    n = len(SHIFTS)
    d, _, _ = probe("    shl.b64 %vd, %va, %vb;", [x] * n, SHIFTS, types=("b64", "u32", "u32"), out="b64")
    assert as_list(d) == [(x << min(s, 64)) & (2**64 - 1) for s in SHIFTS]
    sx = x - 2**64
    d, _, _ = probe("    shr.s64 %vd, %va, %vb;", [sx] * n, SHIFTS, types=("s64", "u32", "u32"), out="s64")
    assert as_list(d) == [sx >> min(s, 64) for s in SHIFTS]


# ---------------------------------------------------------------- 64-bit wraparound and mul.hi


def test_64_bit_wraparound():
    a = [2**64 - 1, 2**63 - 1, 2**63, 0x1234_5678_9ABC_DEF0]
    b = [1, 1, 2**63, 0xFEDC_BA98_7654_3210]
    d, _, _ = probe("    add.u64 %vd, %va, %vb;", a, b, types=("u64", "u64", "u64"), out="u64")
    assert as_list(d) == u64(x + y for x, y in zip(a, b))
    d, _, _ = probe("    sub.u64 %vd, %vb, %va;", a, b, types=("u64", "u64", "u64"), out="u64")
    assert as_list(d) == u64(y - x for x, y in zip(a, b))
    d, _, _ = probe("    mul.lo.u64 %vd, %va, %vb;", a, b, types=("u64", "u64", "u64"), out="u64")
    assert as_list(d) == u64(x * y for x, y in zip(a, b))


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


MULHI_A = [0xFFFF_FFFF, 0x8000_0000, 12345678, 0x7FFF_FFFF, 3]
MULHI_B = [0xFFFF_FFFF, 0x8000_0000, 87654321, 0x8000_0001, 0xFFFF_FFFD]


def test_mul_hi_and_wide_32():
    d, _, _ = probe("    mul.hi.u32 %vd, %va, %vb;", MULHI_A, MULHI_B)
    assert as_list(d) == [(x * y) >> 32 for x, y in zip(MULHI_A, MULHI_B)]
    sa = [_signed(x, 32) for x in MULHI_A]
    sb = [_signed(y, 32) for y in MULHI_B]
    d, _, _ = probe("    mul.hi.s32 %vd, %va, %vb;", sa, sb, types=("s32", "s32", "u32"), out="s32")
    assert as_list(d) == [(x * y) >> 32 for x, y in zip(sa, sb)]
    d, _, _ = probe("    mul.wide.s32 %vd, %va, %vb;", sa, sb, types=("s32", "s32", "u32"), out="s64")
    assert as_list(d) == [x * y for x, y in zip(sa, sb)]


def test_mul_hi_64():
    a = [2**64 - 1, 2**63, 0x1234_5678_9ABC_DEF0, 7]
    b = [2**64 - 1, 2**63, 0xFEDC_BA98_7654_3210, 2**64 - 3]
    d, _, _ = probe("    mul.hi.u64 %vd, %va, %vb;", a, b, types=("u64", "u64", "u64"), out="u64")
    assert as_list(d) == [(x * y) >> 64 for x, y in zip(a, b)]
    sa, sb = [_signed(x, 64) for x in a], [_signed(y, 64) for y in b]
    d, _, _ = probe("    mul.hi.s64 %vd, %va, %vb;", sa, sb, types=("s64", "s64", "u64"), out="s64")
    assert as_list(d) == [(x * y) >> 64 for x, y in zip(sa, sb)]


# ---------------------------------------------------------------- bfe / bfi / prmt / selp


def bfe_reference(a: int, pos: int, length: int, bits: int, signed: bool) -> int:
    """The PTX ISA pseudocode for bfe."""
    msb = bits - 1
    pos &= 0xFF
    length &= 0xFF
    sbit = 0 if (not signed or length == 0) else (a >> min(pos + length - 1, msb)) & 1
    d = 0
    for i in range(bits):
        bit = (a >> (pos + i)) & 1 if (i < length and pos + i <= msb) else sbit
        d |= bit << i
    return d


BFE_CASES = [(0, 8), (4, 8), (28, 8), (31, 1), (0, 0), (40, 4), (8, 0), (0, 32), (16, 255), (0x1_08, 0x2_04)]


@pytest.mark.parametrize("signed", [False, True])
def test_bfe_32(signed):
    a = 0xC35A_96F0
    t = "s32" if signed else "u32"
    pos = [p for p, _ in BFE_CASES]
    lens = [n for _, n in BFE_CASES]
    d, _, _ = probe(f"    bfe.{t} %vd, %va, %vb, %vc;", [a] * len(pos), pos, lens, types=("b32", "u32", "u32"), out="b32")
    assert as_list(d) == [bfe_reference(a, p, n, 32, signed) for p, n in BFE_CASES]


def test_bfe_s64_sign_extends():
    a = 0x8123_4567_89AB_CDEF
    cases = [(0, 8), (60, 8), (63, 1), (4, 0), (70, 3), (32, 32)]
    d, _, _ = probe(
        "    bfe.s64 %vd, %va, %vb, %vc;", [a] * len(cases), [p for p, _ in cases], [n for _, n in cases],
        types=("b64", "u32", "u32"), out="b64",
    )  # fmt: skip
    assert as_list(d) == [bfe_reference(a, p, n, 64, True) for p, n in cases]


def test_bfi_32():
    f, base = 0x0000_00AB, 0xFFFF_0000
    cases = [(0, 8), (4, 8), (28, 8), (16, 0), (40, 4), (0, 32), (31, 1)]
    body = f"    bfi.b32 %vd, %va, {base}, %vb, %vc;"  # insert a's low bits into base at pos b, length c
    d, _, _ = probe(body, [f] * len(cases), [p for p, _ in cases], [n for _, n in cases], types=("b32", "u32", "u32"), out="b32")
    expected = []
    for pos, length in cases:
        r = base
        for i in range(length):
            if pos + i > 31:
                break
            r = (r & ~(1 << (pos + i))) | (((f >> i) & 1) << (pos + i))
        expected.append(r & 0xFFFFFFFF)
    assert as_list(d) == expected


def prmt_reference(a: int, b: int, sel: int) -> int:
    """Default prmt: each selector nibble picks a byte of {b, a}; its bit 3 replicates that byte's sign."""
    source = (a & 0xFFFFFFFF) | ((b & 0xFFFFFFFF) << 32)
    d = 0
    for n in range(4):
        nib = (sel >> (4 * n)) & 0xF
        byte = (source >> (8 * (nib & 7))) & 0xFF
        if nib & 8:
            byte = 0xFF if byte & 0x80 else 0
        d |= byte << (8 * n)
    return d


def test_prmt_default_mode_with_sign_replication():
    a, b = 0x80_7F_01_FE, 0x11_92_33_C4
    sels = [0x3210, 0x7654, 0x0123, 0x4444, 0x8888, 0xB9A8, 0xFEDC, 0x5140, 0x1_3210]
    d, _, _ = probe("    prmt.b32 %vd, %va, %vb, %vc;", [a] * len(sels), [b] * len(sels), sels, types=("b32", "b32", "b32"), out="b32")
    assert as_list(d) == [prmt_reference(a, b, s & 0xFFFF) for s in sels]


@pytest.mark.parametrize(
    "mode, table",
    [
        ("f4e", {0: 0x3210, 1: 0x4321, 2: 0x5432, 3: 0x6543}),
        ("b4e", {0: 0x5670, 1: 0x6701, 2: 0x7012, 3: 0x0123}),
        ("rc8", {0: 0x0000, 1: 0x1111, 2: 0x2222, 3: 0x3333}),
        ("ecl", {0: 0x3210, 1: 0x3211, 2: 0x3222, 3: 0x3333}),
        ("ecr", {0: 0x0000, 1: 0x1110, 2: 0x2210, 3: 0x3210}),
        ("rc16", {0: 0x1010, 1: 0x3232, 2: 0x1010, 3: 0x3232}),
    ],
)
def test_prmt_modes(mode, table):
    """The ISA's table for the special modes: selector bits [1:0] pick a byte pattern."""
    a, b = 0x44_33_22_11, 0x88_77_66_55
    sels = [0, 1, 2, 3, 4 | 1, 0xFFF0 | 2]
    d, _, _ = probe(f"    prmt.b32.{mode} %vd, %va, %vb, %vc;", [a] * 6, [b] * 6, sels, types=("b32", "b32", "b32"), out="b32")
    assert as_list(d) == [prmt_reference(a, b, table[s & 3]) for s in sels]


def test_selp():
    body = "    setp.lt.s32 %p, %va, %vb;\n    selp.b32 %vd, %va, %vb, %p;"
    a, b = [-5, 5, 0, 2**31 - 1], [3, -3, 0, -(2**31)]
    d, _, _ = probe(body, a, b, types=("s32", "s32", "u32"), out="s32")
    assert as_list(d) == [min(x, y) for x, y in zip(a, b)]


# ---------------------------------------------------------------- floating point: NaN, min/max, setp


NAN = float("nan")


def bits32(values) -> list[int]:
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in values]


def test_min_max_with_nan_return_the_other_operand():
    a = [NAN, 1.0, NAN, -3.0, math.inf, -math.inf]
    b = [2.0, NAN, NAN, 4.0, NAN, 1.0]
    d, _, _ = probe("    min.f32 %vd, %va, %vb;", a, b, types=("f32", "f32", "f32"), out="f32")
    assert d[0] == 2.0 and d[1] == 1.0 and math.isnan(d[2]) and d[3] == -3.0 and d[4] == math.inf and d[5] == -math.inf
    d, _, _ = probe("    max.f32 %vd, %va, %vb;", a, b, types=("f32", "f32", "f32"), out="f32")
    assert d[0] == 2.0 and d[1] == 1.0 and math.isnan(d[2]) and d[3] == 4.0 and d[4] == math.inf and d[5] == 1.0


SETP_A = [NAN, 1.0, NAN, 1.0, 2.0, -0.0]
SETP_B = [1.0, NAN, NAN, 1.0, 1.0, 0.0]


@pytest.mark.parametrize(
    "cmp, fn",
    [
        ("eq", lambda x, y: x == y),
        ("ne", lambda x, y: x != y and not (math.isnan(x) or math.isnan(y))),
        ("lt", lambda x, y: x < y),
        ("ge", lambda x, y: x >= y),
        ("equ", lambda x, y: x == y or math.isnan(x) or math.isnan(y)),
        ("neu", lambda x, y: x != y),
        ("ltu", lambda x, y: not x >= y),
        ("num", lambda x, y: not (math.isnan(x) or math.isnan(y))),
        ("nan", lambda x, y: math.isnan(x) or math.isnan(y)),
    ],
)
def test_setp_f32_ordered_and_unordered_with_nan(cmp, fn):
    d, _, _ = probe(f"    setp.{cmp}.f32 %p, %va, %vb;", SETP_A, SETP_B, types=("f32", "f32", "f32"), out="pred")
    assert as_list(d) == [int(fn(x, y)) for x, y in zip(SETP_A, SETP_B)]


# ---------------------------------------------------------------- cvt


def test_cvt_float_to_int_saturates_and_nan_gives_zero():
    x = [3e9, -3e9, NAN, math.inf, -math.inf, -5.7, 5.7, 2147483520.0]
    d, _, _ = probe("    cvt.rzi.s32.f32 %vd, %va;", x, types=("f32", "u32", "u32"), out="s32")
    assert as_list(d) == [2**31 - 1, -(2**31), 0, 2**31 - 1, -(2**31), -5, 5, 2147483520]
    d, _, _ = probe("    cvt.rzi.u32.f32 %vd, %va;", x, types=("f32", "u32", "u32"), out="u32")
    assert as_list(d) == [3_000_000_000, 0, 0, 2**32 - 1, 0, 0, 5, 2147483520]
    d, _, _ = probe("    cvt.rzi.s64.f64 %vd, %va;", [1e19, -1e19, NAN, -7.9], types=("f64", "u32", "u32"), out="s64")
    assert as_list(d) == [2**63 - 1, -(2**63), 0, -7]


def test_cvt_rounding_modes_ties_to_even():
    x = [0.5, 1.5, 2.5, -2.5, -0.5, 3.5, 2.4999998, -1.5]
    d, _, _ = probe("    cvt.rni.s32.f32 %vd, %va;", x, types=("f32", "u32", "u32"), out="s32")
    assert as_list(d) == [round(v) for v in np.float32(x).tolist()]  # Python rounds half to even
    d, _, _ = probe("    cvt.rmi.s32.f32 %vd, %va;", x, types=("f32", "u32", "u32"), out="s32")
    assert as_list(d) == [math.floor(v) for v in x]
    d, _, _ = probe("    cvt.rpi.s32.f32 %vd, %va;", x, types=("f32", "u32", "u32"), out="s32")
    assert as_list(d) == [math.ceil(v) for v in x]
    d, _, _ = probe("    cvt.rni.f32.f32 %vd, %va;", x, types=("f32", "u32", "u32"), out="f32")
    np.testing.assert_array_equal(d, np.round(np.float32(x)))


def test_cvt_sat_clamps_floats_to_unit_interval_and_ints_to_range():
    x = [-1.0, 0.25, 1.5, NAN, -0.0, math.inf]
    d, _, _ = probe("    cvt.sat.f32.f32 %vd, %va;", x, types=("f32", "u32", "u32"), out="f32")
    np.testing.assert_array_equal(d, np.float32([0.0, 0.25, 1.0, 0.0, 0.0, 1.0]))
    v = [300, -300, 127, -128, 0x1_0000_0005]
    d, _, _ = probe("    cvt.sat.s8.s32 %vd, %va;", v, types=("s32", "u32", "u32"), out="s8")
    assert as_list(d) == [127, -128, 127, -128, 5]
    d, _, _ = probe("    cvt.s8.s32 %vd, %va;", v, types=("s32", "u32", "u32"), out="s8")
    assert as_list(d) == [_signed(x, 8) for x in v]
    d, _, _ = probe("    cvt.sat.u16.s32 %vd, %va;", [70000, -1, 65535, 12], types=("s32", "u32", "u32"), out="u16")
    assert as_list(d) == [65535, 0, 65535, 12]


def test_cvt_f16_round_trip_matches_numpy():
    x = np.array(
        [1.0, 65504.0, 65520.0, 1e6, -1e6, 5.96e-8, 2.98e-8, 1e-9, 1.0009765625, 1.00048828125, 1.00146484375, NAN],
        dtype=np.float32,
    )
    d, _, _ = probe("    cvt.rn.f16.f32 %vd, %va;", x, types=("f32", "u32", "u32"), out="f16")
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)  # NumPy rounds to nearest even, overflow to inf
    assert d[:-1].view(np.uint16).tolist() == expected[:-1].view(np.uint16).tolist()
    assert math.isnan(d[-1])
    halves = np.array([1.0, 65504.0, np.inf, 6e-8, -2.5, 0.1], dtype=np.float16)
    d, _, _ = probe("    cvt.f32.f16 %vd, %va;", halves, types=("f16", "u32", "u32"), out="f32")
    np.testing.assert_array_equal(d, halves.astype(np.float32))
    d, _, _ = probe("    cvt.rzi.s32.f16 %vd, %va;", halves, types=("f16", "u32", "u32"), out="s32")
    assert as_list(d) == [1, 65504, 2**31 - 1, 0, -2, 0]


def test_f16_arithmetic_rounds_in_half_precision():
    a = np.array([1.0, 2048.0, 65504.0, 0.1, -3.0], dtype=np.float16)
    b = np.array([0.0004883, 1.0, 65504.0, 0.2, 3.0], dtype=np.float16)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)  # exact sums and products, one rounding below
    with np.errstate(over="ignore"):
        sums, products = (wide_a + wide_b).astype(np.float16), (wide_a * wide_b).astype(np.float16)
    d, _, _ = probe("    add.rn.f16 %vd, %va, %vb;", a, b, types=("f16", "f16", "u32"), out="f16")
    np.testing.assert_array_equal(d, sums)
    d, _, _ = probe("    mul.rn.f16 %vd, %va, %vb;", a, b, types=("f16", "f16", "u32"), out="f16")
    np.testing.assert_array_equal(d, products)


# ---------------------------------------------------------------- atomics


def test_atom_inc_dec_wrap_per_thread():
    """inc: old >= b ? 0 : old + 1; dec: (old == 0 || old > b) ? b : old - 1."""
    old = [0, 4, 5, 9, 0xFFFFFFFF, 7]
    lim = [5, 5, 5, 5, 0xFFFFFFFF, 0]
    d, c, _ = probe("    atom.global.inc.u32 %vd, [%caddr], %vb;", [0] * 6, lim, old)
    assert as_list(d) == old
    assert as_list(c) == [0 if o >= b else o + 1 for o, b in zip(old, lim)]
    d, c, _ = probe("    atom.global.dec.u32 %vd, [%caddr], %vb;", [0] * 6, lim, old)
    assert as_list(d) == old
    assert as_list(c) == [b if (o == 0 or o > b) else o - 1 for o, b in zip(old, lim)]


def test_atom_inc_wraps_when_many_threads_share_a_counter():
    n = 64
    d, c, findings = probe("    atom.global.inc.u32 %vd, [%cbase], 5;", [0] * n, None, [0] * n)
    # each thread gets a distinct step of the 0..5 cycle: the multiset of old values is fixed
    assert sorted(as_list(d)) == sorted(i % 6 for i in range(n))
    assert int(c[0]) == n % 6
    assert findings == []


def test_atom_cas_returns_old_and_swaps_only_on_match():
    old = [5, 5, 0, 0xFFFFFFFF]
    cmp = [5, 4, 0, 0xFFFFFFFF]
    d, c, _ = probe("    atom.global.cas.b32 %vd, [%caddr], %vb, %va;", [100, 101, 102, 103], cmp, old, types=("b32", "b32", "b32"), out="b32")
    assert as_list(d) == old
    assert as_list(c) == [100, 5, 102, 103]


def test_atom_cas_only_one_thread_wins_a_shared_word():
    n = 96
    d, c, _ = probe("    atom.global.cas.b32 %vd, [%cbase], 0, %va;", list(range(1, n + 1)), None, [0] * n, types=("b32", "b32", "b32"), out="b32")
    winners = [i for i, v in enumerate(as_list(d)) if v == 0]
    assert len(winners) == 1
    assert int(c[0]) == winners[0] + 1
    assert all(v == winners[0] + 1 for i, v in enumerate(as_list(d)) if i != winners[0])


def test_atom_add_u64_wraps_and_returns_a_serial_chain():
    n = 40
    addends = [2**40 + i for i in range(n)]
    initial = 2**64 - 2**40
    d, c, _ = probe(
        "    atom.global.add.u64 %vd, [%cbase], %va;", addends, None, [initial] + [0] * (n - 1),
        types=("u64", "u64", "u64"), out="u64",
    )  # fmt: skip
    final = (initial + sum(addends)) % 2**64
    assert int(c[0]) == final
    olds = as_list(d)
    # serial order: every old value plus its addend is the next thread's old value (or the final one)
    assert sorted(olds + [final]) == sorted([initial] + [(o + a) % 2**64 for o, a in zip(olds, addends)])


def test_a_32_bit_address_register_plus_offset_wraps_at_32_bits():
    # %sa - 64 is below zero (the shared variable is at 0); + 68 comes back to sh[1], as on the hardware.
    body = """
    .shared .align 4 .b32 sh[4];
    .reg .b32 %sa, %below;
    mov.u32 %sa, sh;
    st.shared.u32 [%sa+4], %va;
    sub.u32 %below, %sa, 64;
    ld.shared.u32 %vd, [%below+68];"""
    d, _, findings = probe(body, [1234])
    assert as_list(d) == [1234] and findings == []
