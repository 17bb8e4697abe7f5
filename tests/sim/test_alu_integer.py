"""Integer, carry and bit-manipulation semantics of the ALU against Python-integer references."""

from __future__ import annotations

import random

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Imm, Instruction, Reg
from gpurace.sim.alu import compile_alu

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def alu(spec: str, operands=()):
    opcode, *mods = spec.split(".")
    return compile_alu(Instruction(opcode, tuple(mods), tuple(operands), ptx_line=7, text=spec))


def u32(*values):
    return np.array([v & M32 for v in values], dtype=np.uint32)


def u64(*values):
    return np.array([v & M64 for v in values], dtype=np.uint64)


def s32(arr):
    return [int(x) for x in np.asarray(arr).view(np.int32)]


def s64(arr):
    return [int(x) for x in np.asarray(arr).view(np.int64)]


def signed(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


RNG = random.Random(1234)
EDGE64 = [0, 1, 2, 3, M64, M64 - 1, 1 << 63, (1 << 63) - 1, 1 << 32, M32, 0x123456789ABCDEF0]
RAND64 = EDGE64 + [RNG.getrandbits(64) for _ in range(40)]


def test_not_alu_opcode_gives_none():
    assert alu("ld.global.u32") is None
    assert alu("bra") is None


def test_unsupported_modifier_names_instruction_and_line():
    with pytest.raises(UserError, match=r"PTX line 7.*add\.foo\.s32"):
        alu("add.foo.s32")


def test_wrong_operand_count_is_rejected():
    with pytest.raises(UserError, match="operands"):
        alu("add.s32", (Reg("%r1"), Reg("%r2")))


def test_interface_types():
    assert alu("add.s32").src_types == ("s32", "s32")
    assert alu("shl.b32").src_types == ("b32", "u32")
    assert alu("mul.wide.s32").dst_types == ("s64",)
    assert alu("bfe.u32").src_types == ("u32", "u32", "u32")
    assert alu("prmt.b32").src_types == ("b32", "b32", "b32")
    assert alu("lop3.b32").src_types == ("b32",) * 4
    op = alu("addc.cc.u32")
    assert op.carry_in and op.carry_out


def test_add_sub_mul_mad_wrap_64():
    a, b, c = u64(*RAND64), u64(*reversed(RAND64)), u64(*RAND64[1:], 5)
    A, B, C = RAND64, list(reversed(RAND64)), RAND64[1:] + [5]
    assert alu("add.s64").fn(a, b).tolist() == [(x + y) & M64 for x, y in zip(A, B)]
    assert alu("sub.u64").fn(a, b).tolist() == [(x - y) & M64 for x, y in zip(A, B)]
    assert alu("mul.lo.s64").fn(a, b).tolist() == [(x * y) & M64 for x, y in zip(A, B)]
    assert alu("mad.lo.u64").fn(a, b, c).tolist() == [(x * y + z) & M64 for x, y, z in zip(A, B, C)]


def test_mul_hi_64_signed_and_unsigned():
    a, b = u64(*RAND64), u64(*reversed(RAND64))
    A, B = RAND64, list(reversed(RAND64))
    assert alu("mul.hi.u64").fn(a, b).tolist() == [(x * y) >> 64 for x, y in zip(A, B)]
    expect = [(signed(x, 64) * signed(y, 64)) >> 64 for x, y in zip(A, B)]
    assert s64(alu("mul.hi.s64").fn(a, b)) == expect


def test_mul_hi_and_wide_32():
    vals = [0, 1, M32, 1 << 31, 0x7FFFFFFF, 123456789, 0xDEADBEEF]
    a, b = u32(*vals), u32(*reversed(vals))
    pairs = list(zip(vals, reversed(vals)))
    assert s32(alu("mul.hi.s32").fn(a, b)) == [(signed(x, 32) * signed(y, 32)) >> 32 for x, y in pairs]
    assert alu("mul.hi.u32").fn(a, b).tolist() == [(x * y) >> 32 for x, y in pairs]
    assert s64(alu("mul.wide.s32").fn(a, b)) == [signed(x, 32) * signed(y, 32) for x, y in pairs]
    assert alu("mul.wide.u32").fn(a, b).tolist() == [x * y for x, y in pairs]
    assert alu("mul.wide.u16").fn(np.array([0xFFFF], np.uint16), np.array([0xFFFF], np.uint16)).tolist() == [0xFFFF * 0xFFFF]


def test_saturating_add_and_mad_hi():
    a = u32(0x7FFFFFFF, -(2**31), 5)
    b = u32(1, -1, -7)
    assert s32(alu("add.sat.s32").fn(a, b)) == [2**31 - 1, -(2**31), -2]
    assert s32(alu("sub.sat.s32").fn(a, u32(-1, 1, 7))) == [2**31 - 1, -(2**31), -2]
    hi = alu("mad.hi.sat.s32").fn(u32(0x7FFFFFFF), u32(0x7FFFFFFF), u32(0x7FFFFFFF))
    assert s32(hi) == [2**31 - 1]


def test_mul24():
    a, b = u32(0xFF800000 | 3, 0x00FFFFFF), u32(0x00000002, 0x00FFFFFF)
    # low 24 bits sign-extended for .s32: 0x800003 -> -8388605
    assert s32(alu("mul24.lo.s32").fn(a, b))[0] == signed(-8388605 * 2, 32)
    assert alu("mul24.hi.u32").fn(a, b).tolist()[1] == ((0xFFFFFF * 0xFFFFFF) >> 16) & M32
    assert alu("mad24.lo.u32").fn(u32(3), u32(4), u32(5)).tolist() == [17]


def test_128_bit_add_chain_carries():
    rng = random.Random(7)
    xs = [rng.getrandbits(128) for _ in range(20)] + [(1 << 128) - 1, 1 << 64]
    ys = [rng.getrandbits(128) for _ in range(20)] + [1, (1 << 64) - 1]
    lo = alu("add.cc.u64").fn(u64(*[x & M64 for x in xs]), u64(*[y & M64 for y in ys]))
    hi = alu("addc.u64").fn(u64(*[x >> 64 for x in xs]), u64(*[y >> 64 for y in ys]), carry=lo[1])
    got = [(int(h) << 64) | int(l) for h, l in zip(hi, lo[0])]
    assert got == [(x + y) & ((1 << 128) - 1) for x, y in zip(xs, ys)]


def test_96_bit_sub_chain_borrows():
    xs, ys = [0, 5, 1 << 95, (1 << 96) - 1], [1, 5, 1, (1 << 96) - 1]
    limb = lambda vs, i: u32(*[(v >> (32 * i)) & M32 for v in vs])  # noqa: E731
    r0, b0 = alu("sub.cc.u32").fn(limb(xs, 0), limb(ys, 0))
    r1, b1 = alu("subc.cc.u32").fn(limb(xs, 1), limb(ys, 1), carry=b0)
    r2 = alu("subc.u32").fn(limb(xs, 2), limb(ys, 2), carry=b1)
    got = [int(a) | int(b) << 32 | int(c) << 64 for a, b, c in zip(r0, r1, r2)]
    assert got == [(x - y) % (1 << 96) for x, y in zip(xs, ys)]


def test_madc_chain_multiplies_64_by_32():
    x, y = 0xFFFFFFFF_FFFFFFFF, 0xFFFFFFFF
    lo, c0 = alu("mad.lo.cc.u32").fn(u32(x & M32), u32(y), u32(0))
    mid, c1 = alu("madc.hi.cc.u32").fn(u32(x & M32), u32(y), u32(0), carry=c0)
    assert c0.tolist() == [False]
    assert (int(mid[0]) << 32 | int(lo[0])) == (x & M32) * y
    assert c1.tolist() == [False]


def test_division_edge_cases():
    a = u32(7, -7, 7, -7, 5, -5, 0, -(2**31))
    b = u32(2, 2, -2, -2, 0, 0, 0, -1)
    assert s32(alu("div.s32").fn(a, b)) == [3, -3, -3, 3, -1, -1, -1, -(2**31)]
    assert s32(alu("rem.s32").fn(a, b)) == [1, -1, 1, -1, 5, -5, 0, 0]
    ua, ub = u32(7, 5, M32), u32(2, 0, 0)
    assert alu("div.u32").fn(ua, ub).tolist() == [3, M32, M32]
    assert alu("rem.u32").fn(ua, ub).tolist() == [1, 5, M32]
    assert s64(alu("div.s64").fn(u64(-(2**63)), u64(-1))) == [-(2**63)]
    assert alu("div.u16").fn(np.array([9, 9], np.uint16), np.array([4, 0], np.uint16)).tolist() == [2, 0xFFFF]


def test_abs_neg_min_max_sad():
    a, b = u32(-5, 3, -(2**31)), u32(2, -9, 1)
    assert s32(alu("abs.s32").fn(a)) == [5, 3, -(2**31)]
    assert s32(alu("neg.s32").fn(a)) == [5, -3, -(2**31)]
    assert s32(alu("min.s32").fn(a, b)) == [-5, -9, -(2**31)]
    assert alu("min.u32").fn(a, b).tolist() == [2, 3, 1]
    assert s32(alu("max.relu.s32").fn(a, b)) == [2, 3, 1]
    assert s32(alu("sad.s32").fn(a, b, u32(1, 1, 1))) == [8, 13, signed(2**31 + 2, 32)]
    packed = alu("max.s16x2").fn(u32(0xFFFF0001), u32(0x00020000))
    assert packed.tolist() == [0x00020001]


def test_dp4a_and_dp2a():
    a, b, c = u32(0x80FF0102), u32(0x02030405), u32(10)
    sa = [2, 1, -1, -128]
    ub = [5, 4, 3, 2]
    assert s32(alu("dp4a.s32.u32").fn(a, b, c)) == [10 + sum(x * y for x, y in zip(sa, ub))]
    assert alu("dp4a.u32.u32").fn(a, b, c).tolist() == [10 + sum(x * y for x, y in zip([2, 1, 255, 128], ub))]
    # a halves: 0x0102 = 258, 0x80FF = -32513 (signed); b bytes hi: 3, 2
    assert s32(alu("dp2a.hi.s32.u32").fn(a, b, c)) == [10 + 258 * 3 + (-32513) * 2]
    assert s32(alu("dp2a.lo.s32.u32").fn(a, b, c)) == [10 + 258 * 5 + (-32513) * 4]


def test_shifts_by_large_amounts():
    a = u32(0x80000001, 0x80000001, 0x80000001, 0x80000001, 0x40000000)
    n = u32(1, 31, 32, 0xFFFFFFFF, 33)
    assert alu("shl.b32").fn(a, n).tolist() == [2, 0x80000000, 0, 0, 0]
    assert alu("shr.u32").fn(a, n).tolist() == [0x40000000, 1, 0, 0, 0]
    assert alu("shr.s32").fn(a, n).tolist() == [0xC0000000, M32, M32, M32, 0]
    assert alu("shl.b64").fn(u64(1, 1), u32(63, 64)).tolist() == [1 << 63, 0]
    assert alu("shr.s64").fn(u64(-8, -8), u32(1, 1000)).tolist() == [(-4) & M64, M64]
    assert alu("shl.b16").fn(np.array([1, 1], np.uint16), u32(15, 16)).tolist() == [0x8000, 0]


def test_shf_clamp_vs_wrap():
    lo, hi = u32(0x89ABCDEF, 0x89ABCDEF, 0x89ABCDEF), u32(0x01234567, 0x01234567, 0x01234567)
    n = u32(8, 32, 40)
    v = 0x01234567_89ABCDEF
    assert alu("shf.l.clamp.b32").fn(lo, hi, n).tolist() == [((v << 8) >> 32) & M32, 0x89ABCDEF, 0x89ABCDEF]
    assert alu("shf.l.wrap.b32").fn(lo, hi, n).tolist() == [((v << 8) >> 32) & M32, 0x01234567, ((v << 8) >> 32) & M32]
    assert alu("shf.r.clamp.b32").fn(lo, hi, n).tolist() == [(v >> 8) & M32, 0x01234567, 0x01234567]
    assert alu("shf.r.wrap.b32").fn(lo, hi, n).tolist() == [(v >> 8) & M32, 0x89ABCDEF, (v >> 8) & M32]


def test_logic_and_lop3():
    a, b, c = u32(0xF0F0F0F0), u32(0xCCCCCCCC), u32(0xAAAAAAAA)
    assert alu("and.b32").fn(a, b).tolist() == [0xC0C0C0C0]
    assert alu("not.b32").fn(a).tolist() == [0x0F0F0F0F]
    assert alu("cnot.b32").fn(u32(0, 5)).tolist() == [1, 0]
    assert alu("xor.pred").fn(np.array([True, True]), np.array([True, False])).tolist() == [False, True]
    for lut in (0x96, 0xE8, 0x80, 0x01, 0xF0, 0x3C):  # results on the canonical inputs are the LUT itself
        assert alu("lop3.b32").fn(a, b, c, u32(lut)).tolist() == [lut * 0x01010101]
    x, y, z = u32(0x12345678), u32(0x0F0F0F0F), u32(0xFF00FF00)
    assert alu("lop3.b32").fn(x, y, z, u32(0xE8)).tolist() == [((0x12345678 & 0x0F0F0F0F) | (0x12345678 & 0xFF00FF00) | (0x0F0F0F0F & 0xFF00FF00))]


def _prmt_ref(a, b, c, mode=None):
    src = (b << 32) | a
    sel = {
        "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
        "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
        "rc8": [[i] * 4 for i in range(4)],
        "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
        "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
        "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
    }
    out = 0
    for i in range(4):
        if mode is None:
            s = (c >> (4 * i)) & 0xF
            byte = (src >> (8 * (s & 7))) & 0xFF
            if s & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = (src >> (8 * sel[mode][c & 3][i])) & 0xFF
        out |= byte << (8 * i)
    return out


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
def test_prmt(mode):
    a, b = 0x83828180, 0x07060504
    cs = [0x3210, 0x7654, 0x7531, 0x89AB, 0xBA98, 0xFEDC, 0, 1, 2, 3]
    spec = "prmt.b32" + (f".{mode}" if mode else "")
    got = alu(spec).fn(u32(*[a] * len(cs)), u32(*[b] * len(cs)), u32(*cs)).tolist()
    assert got == [_prmt_ref(a, b, c, mode) for c in cs]
    for c in cs[:6]:  # one selector for every thread, as with an immediate
        uniform = alu(spec).fn(u32(a, a), u32(b, b), u32(c, c)).tolist()
        assert uniform == [_prmt_ref(a, b, c, mode)] * 2
    if mode is None:
        assert got[0] == a and got[1] == b
        assert got[4] == M32 and got[5] == 0  # msb of the selector replicates the byte's sign


def test_bit_counts():
    vals = [0, 1, 0x80000000, M32, 0x00F00000, 0x7FFFFFFF]
    a = u32(*vals)
    assert alu("popc.b32").fn(a).tolist() == [bin(v).count("1") for v in vals]
    assert alu("clz.b32").fn(a).tolist() == [32 - v.bit_length() for v in vals]
    assert alu("bfind.u32").fn(a).tolist() == [v.bit_length() - 1 & M32 for v in vals]
    assert alu("bfind.shiftamt.u32").fn(a).tolist() == [M32 if v == 0 else 32 - v.bit_length() for v in vals]
    assert alu("bfind.s32").fn(u32(-1, -2, 5, -(2**31))).tolist() == [M32, 0, 2, 30]
    assert alu("clz.b64").fn(u64(0, 1, 1 << 63)).tolist() == [64, 63, 0]
    assert alu("popc.b64").fn(u64(M64)).tolist() == [64]
    assert alu("brev.b32").fn(u32(*vals)).tolist() == [int(f"{v:032b}"[::-1], 2) for v in vals]
    assert alu("brev.b64").fn(u64(1, 0x0123456789ABCDEF)).tolist() == [1 << 63, int(f"{0x0123456789ABCDEF:064b}"[::-1], 2)]


def test_fns_examples_from_the_isa():
    mask = u32(*[0xAAAAAAAA] * 4)
    assert alu("fns.b32").fn(mask, u32(3, 3, 2, 2), u32(1, -1, 1, -1)).tolist() == [3, 3, 3, 1]
    assert alu("fns.b32").fn(u32(0b1011, 0b1011, 0), u32(0, 1, 0), u32(3, 0, 1)).tolist() == [3, 1, M32]


def _bfe_ref(a, pos, length, bits, is_signed):
    pos, length = pos & 0xFF, length & 0xFF
    msb = bits - 1
    sbit = 0 if (not is_signed or length == 0) else (a >> min(pos + length - 1, msb)) & 1
    d = 0
    for i in range(bits):
        bit = (a >> (pos + i)) & 1 if (i < length and pos + i <= msb) else sbit
        d |= bit << i
    return d


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
def test_bfe_against_the_isa_pseudocode(t):
    bits = int(t[1:])
    rng = random.Random(bits)
    cases = [(rng.getrandbits(bits), p, n) for p in (0, 1, 7, bits - 1, bits, bits + 5, 255, 256 + 3) for n in (0, 1, 8, bits, bits + 3, 255)]
    a = np.array([c[0] for c in cases], dtype=np.uint32 if bits == 32 else np.uint64)
    got = alu(f"bfe.{t}").fn(a, u32(*[c[1] for c in cases]), u32(*[c[2] for c in cases])).tolist()
    assert got == [_bfe_ref(v, p, n, bits, t[0] == "s") for v, p, n in cases]


def test_bfi():
    a, b = u32(0xFFFFFFFF, 0xABCD, 0xFF, 0xFF), u32(0, 0x12345678, 0, 0x11111111)
    got = alu("bfi.b32").fn(a, b, u32(4, 8, 30, 32), u32(8, 16, 8, 4)).tolist()
    assert got == [0xFF0, 0x12ABCD78, 0xC0000000, 0x11111111]


def test_szext():
    assert s32(alu("szext.clamp.s32").fn(u32(0xF0, 0xF0, 0x70, 0x12345678), u32(8, 0, 8, 40))) == [-16, 0, 0x70, 0x12345678]
    assert alu("szext.wrap.u32").fn(u32(0xFFFFFFFF, 0x1FF), u32(0, 8 + 32)).tolist() == [0, 0xFF]


def test_bmsk():
    # a mask of width b from bit a; .wrap reduces both modulo 32, .clamp saturates
    assert alu("bmsk.clamp.b32").fn(u32(4, 0, 28, 32, 0, 31), u32(8, 32, 8, 1, 0, 1)).tolist() == [
        0xFF0, 0xFFFFFFFF, 0xF0000000, 0, 0, 0x80000000
    ]
    assert alu("bmsk.wrap.b32").fn(u32(4, 36, 28, 0), u32(8, 8, 8, 33)).tolist() == [0xFF0, 0xFF0, 0xF0000000, 0x1]


def test_immediate_operands_are_counted():
    op = alu("add.s32", (Reg("%r1"), Reg("%r2"), Imm(3)))
    assert op.fn(u32(1), u32(3)).tolist() == [4]
