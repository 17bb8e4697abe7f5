"""Warpgroup matrix products (`sim.wgmma`, `sim.wgmma_ops`): D checked bit for bit against NumPy in the order
`sim.wgmma` states, A from registers and from a descriptor, the accesses to accumulators in flight, the
missing `wgmma.fence`, and the layouts the simulator refuses. The layouts are the PTX ISA's (wgmma register
fragments, matrix descriptor format, no-swizzle core matrices)."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.check import check
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim import wgmma as wg
from gpurace.sim.launch import simulate
from gpurace.sim.tensor_maps import swizzled
from gpurace.sim.wgmma_ops import EARLY, UNFENCED
from test_expectations import ROOT

CORPUS = ROOT / "tests" / "kernels" / "wgmma"


def reference(a: np.ndarray, b_rows: np.ndarray) -> np.ndarray:
    """A (…, 64, 16) * B given as its rows of K (…, N, 16), from zero, k by k, rounding to float32 each step."""
    acc = np.zeros((*a.shape[:-1], b_rows.shape[-2]), dtype=np.float32)
    for k in range(16):
        acc = acc + a[..., :, k, None].astype(np.float32) * b_rows[..., None, :, k].astype(np.float32)
    return acc


def test_the_corpus_product_matches_numpy_bit_for_bit():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 64, 16)).astype(np.float16)
    b = rng.standard_normal((2, 8, 16)).astype(np.float16)
    out = np.zeros(1024, dtype=np.float32)
    result = simulate(CORPUS / "mma_after_wait.cu", grid=2, block=128, args=[a, b, out], arch="sm_90a")
    assert result.clean
    np.testing.assert_array_equal(out.reshape(2, 64, 8), reference(a, b))


def test_reading_an_accumulator_before_the_wait_names_both_lines():
    args = [np.zeros((2, 64, 16), np.float16), np.zeros((2, 8, 16), np.float16), np.zeros(1024, np.float32)]
    (finding,) = check(CORPUS / "mma_read_before_wait.cu", grid=2, block=128, args=args, arch="sm_90a").findings
    assert (finding.kind, finding.cause) == ("invalid-wgmma-use", EARLY)
    assert [s.loc.line for s in finding.sites] == [23, 26]


def test_the_descriptor_layout_places_core_matrices_by_lbo_and_sbo():
    desc = (0x400 >> 4) | ((128 >> 4) << 16) | ((256 >> 4) << 32) | (5 << 49)
    d = wg.Descriptor.decode(desc)
    assert (d.start, d.lbo, d.sbo, d.base_offset, d.span) == (0x400, 128, 256, 0, 0)  # no swizzle: no base offset
    addrs = d.chunk_addresses(np.array([0, 7, 8, 17]), False)
    assert addrs.tolist() == [[0x400, 0x480], [0x400 + 112, 0x480 + 112], [0x500, 0x580], [0x600 + 16, 0x680 + 16]]
    # MN-major: the chunk of rows 8i.. at k lies at (i) SBO + (k / 8) LBO + (k % 8) 16
    mn = d.chunk_addresses(np.arange(16), True)
    assert mn[1, 9] == 0x400 + 256 + 128 + 16


@pytest.mark.parametrize("span", [32, 64, 128])
def test_swizzled_descriptors_permute_chunks_as_tma_does(span):
    """Element (r, k) of a K-major tile of rows of `span` bytes and of an MN-major one of k-rows of `span`
    bytes, each stored densely from a 1024-aligned address and swizzled as TMA swizzles it, is where the
    descriptor reads it."""
    mode = {128: 1, 64: 2, 32: 3}[span]
    e = span // 2
    base = 0x2000
    k_major = wg.Descriptor.decode((base >> 4) | ((8 * span) >> 4) << 32 | mode << 62)
    rows = np.arange(64)
    dense = (rows[:, None] * span + np.arange(2)[None, :] * 16).astype(np.uint64)
    expect = base + swizzled(dense, span)
    assert (k_major.chunk_addresses(rows, False) == expect).all()
    # MN-major: k-rows of span bytes (e rows of M), 8 k-rows per SBO, blocks of e rows of M at LBO
    lbo, sbo = 16 * span, 8 * span
    mn_major = wg.Descriptor.decode((base >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | mode << 62)
    k = np.arange(16)
    blocks = rows[::8]
    dense = ((blocks[:, None] // e) * lbo + k[None, :] * span + (blocks[:, None] % e) * 2).astype(np.uint64)
    assert (mn_major.chunk_addresses(rows, True) == base + swizzled(dense, span)).all()


def test_a_base_offset_moves_the_swizzle_pattern_to_its_start():
    """A 128-byte swizzle pattern starting 384 bytes past a 1024-byte boundary: base offset (start >> 7) & 7 = 3,
    and row r of the pattern has its chunks XORed with r % 8."""
    start = 0x2000 + 384
    d = wg.Descriptor.decode((start >> 4) | (1024 >> 4) << 32 | 3 << 49 | 1 << 62)
    rows = np.arange(8)
    expect = start + rows[:, None] * 128 + ((np.arange(2)[None, :] ^ rows[:, None]) * 16)
    assert (d.chunk_addresses(rows, False) == expect).all()


def test_chunks_to_matrix_undoes_either_order():
    values = np.arange(16 * 16, dtype=np.float16).reshape(16, 16)  # rows r, k
    k_major = values.reshape(16, 2, 8).view(np.uint8)
    mn_major = np.ascontiguousarray(values.reshape(2, 8, 16).swapaxes(1, 2)).view(np.uint8)  # [2, 16 k, 8 r]
    assert (wg.chunks_to_matrix(k_major, "f16", False) == values).all()
    assert (wg.chunks_to_matrix(mn_major, "f16", True) == values).all()


def test_the_d_fragment_is_the_isa_layout():
    frag = wg.d_fragment(16)
    # lane 5: groupID 1, threadID_in_group 1; element 6 is row 1 + 8, column 8 + 2
    assert (frag.row_of[5, 6], frag.col_of[5, 6]) == (9, 10)
    assert frag.registers == 8


PROLOGUE = """\
.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout)
{
    .reg .b32 %t, %lane, %warp, %r<16>, %a<4>;
    .reg .f32 %d<4>;
    .reg .b64 %ga, %gb, %gout, %rd<8>, %descb;
    .reg .pred %p;
    .shared .align 128 .b8 sb[256];
    mov.u32 %t, %tid.x;
    ld.param.u64 %ga, [pa];
    ld.param.u64 %gb, [pb];
    ld.param.u64 %gout, [pout];
"""
"""The start of the m64n8 test kernels: parameters a, b and out, the registers, and B's shared tile."""

STORE_D = """\
    // D: register i of lane (g, t) of warp w is row 16w + g + 8 (i / 2), column 2t + i % 2
    shr.u32 %r1, %lane, 2;
    add.u32 %r1, %r1, %r3;
    shl.b32 %r1, %r1, 3;
    and.b32 %r2, %lane, 3;
    shl.b32 %r2, %r2, 1;
    add.u32 %r1, %r1, %r2;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd3, %gout, %rd3;
    st.global.f32 [%rd3], %d0;
    st.global.f32 [%rd3+4], %d1;
    st.global.f32 [%rd3+256], %d2;
    st.global.f32 [%rd3+260], %d3;
    ret;
}
"""
"""Their end: each lane's four f32 elements of D to out (64 x 8, row-major)."""

HEADER = PROLOGUE.replace("{", "{{") + """\
    // B (8 rows of 16 halves) to shared memory, core matrices as the corpus lays them out: thread t < 128
    // copies half k = t % 16 of row n = t / 16
    shr.u32 %r1, %t, 4;
    and.b32 %r2, %t, 15;
    shr.u32 %r3, %r2, 3;
    and.b32 %r4, %r2, 7;
    shl.b32 %r5, %r1, 4;
    shl.b32 %r6, %r3, 7;
    shl.b32 %r7, %r4, 1;
    add.u32 %r5, %r5, %r6;
    add.u32 %r5, %r5, %r7;
    mov.u32 %r8, sb;
    add.u32 %r5, %r5, %r8;
    mul.wide.u32 %rd1, %t, 2;
    add.s64 %rd1, %gb, %rd1;
    ld.global.u16 %r9, [%rd1];
    st.shared.u16 [%r5], %r9;
    {fence}
    bar.sync 0;
    // A from registers: lane's four .f16x2 registers as mma.m16n8k16's A, read from a (64 x 16, row-major)
    // as 32-bit pairs: register i holds row 16w + g + 8 (i % 2), halves 2t + 8 (i / 2) .. +1
    shr.u32 %warp, %t, 5;
    and.b32 %lane, %t, 31;
    shr.u32 %r1, %lane, 2;
    and.b32 %r2, %lane, 3;
    shl.b32 %r3, %warp, 4;
    add.u32 %r1, %r1, %r3;
    shl.b32 %r1, %r1, 4;
    shl.b32 %r2, %r2, 1;
    add.u32 %r1, %r1, %r2;
    mul.wide.u32 %rd2, %r1, 2;
    add.s64 %rd2, %ga, %rd2;
    ld.global.b32 %a0, [%rd2];
    ld.global.b32 %a1, [%rd2+256];
    ld.global.b32 %a2, [%rd2+16];
    ld.global.b32 %a3, [%rd2+272];
    cvt.u64.u32 %descb, %r8;
    shr.u64 %descb, %descb, 4;
    or.b64 %descb, %descb, {desc_bits};
    mov.f32 %d0, 0f00000000;
    mov.f32 %d1, 0f00000000;
    mov.f32 %d2, 0f00000000;
    mov.f32 %d3, 0f00000000;
    {wgmma_fence}
    setp.ne.b32 %p, 1, 0;
    wgmma.mma_async.sync.aligned.m64n8k16.f32.{etype}.{etype} {{%d0, %d1, %d2, %d3}}, {{%a0, %a1, %a2, %a3}}, %descb, %p, 1, {scale_b}, 0;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
""" + STORE_D.replace("}", "}}")
DESC_BITS = (128 >> 4) << 16 | (256 >> 4) << 32


def run_register_a(etype="f16", scale_b=1, fence="fence.proxy.async.shared::cta;", wgmma_fence="wgmma.fence.sync.aligned;", desc=DESC_BITS):
    dtype = np.float16 if etype == "f16" else np.uint16
    rng = np.random.default_rng(3)
    values = rng.standard_normal((64 * 16 + 128,)).astype(np.float32)
    if etype == "f16":
        raw = values.astype(np.float16)
    else:  # bf16: the top half of the float32 bits
        raw = (values.view(np.uint32) >> 16).astype(np.uint16)
    a, b = raw[: 64 * 16].copy(), raw[64 * 16 :].copy()
    out = np.zeros(64 * 8, dtype=np.float32)
    text = HEADER.format(fence=fence, wgmma_fence=wgmma_fence, etype=etype, scale_b=scale_b, desc_bits=desc)
    result = check(parse_ptx(text, "k.ptx"), grid=1, block=128, args=[a.view(dtype), b.view(dtype), out], arch="sm_90a")
    to_f32 = (lambda x: x.astype(np.float32)) if etype == "f16" else (lambda x: (x.astype(np.uint32) << 16).view(np.float32))
    return result, out.reshape(64, 8), to_f32(a).reshape(64, 16), to_f32(b).reshape(8, 16)


@pytest.mark.parametrize("etype", ["f16", "bf16"])
def test_a_from_registers_b_from_a_descriptor_matches_numpy(etype):
    result, out, a, b = run_register_a(etype)
    assert result.findings == []
    np.testing.assert_array_equal(out, reference(a, b))


def test_imm_scale_b_negates_b():
    result, out, a, b = run_register_a(scale_b=-1)
    np.testing.assert_array_equal(out, reference(a, -b))


def test_a_product_with_no_wgmma_fence_before_it_is_a_finding():
    result, *_ = run_register_a(wgmma_fence="")
    assert [(f.kind, f.cause) for f in result.findings] == [("invalid-wgmma-use", UNFENCED)]


def test_generic_writes_of_an_operand_need_a_proxy_fence():
    result, *_ = run_register_a(fence="")
    assert [(f.kind, f.space) for f in result.findings] == [("data-race", "shared")]
    assert "generic-proxy write not fenced" in result.findings[0].cause


def reference_k(a: np.ndarray, b_rows: np.ndarray) -> np.ndarray:
    """A (M x K) * B given as its rows of K (N x K), from zero, k by k, rounding to float32 each step."""
    acc = np.zeros((a.shape[0], b_rows.shape[0]), dtype=np.float32)
    for k in range(a.shape[1]):
        acc = acc + a[:, k, None].astype(np.float32) * b_rows[None, :, k].astype(np.float32)
    return acc


@pytest.mark.parametrize("trans", [0, 1, 2, 3], ids=["k-major", "a-mn-major", "b-mn-major", "both-mn-major"])
@pytest.mark.parametrize("mode", [0, 1, 2, 3], ids=["no-swizzle", "128B", "64B", "32B"])
def test_each_canonical_layout_gives_the_matrix_product(mode, trans):
    """layouts.cu lays A and B out in each swizzle mode, K-major and MN-major, and multiplies them over four
    products whose descriptors advance through the tiles: D equals NumPy's product bit for bit, and nothing
    is reported."""
    rng = np.random.default_rng(10 * mode + trans)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    out = np.zeros(64 * 64, dtype=np.float32)
    result = check(CORPUS / "layouts.cu", grid=1, block=128, args=[a, b, out, mode, trans], arch="sm_90a")
    assert result.findings == []
    np.testing.assert_array_equal(out.reshape(64, 64), reference_k(a, b))


def test_tma_s_swizzle_feeds_the_descriptors_swizzle():
    """tma_swizzle.cu: TMA loads A and B through 128-byte swizzled maps and the products read them through
    128-byte swizzle descriptors (B MN-major), as Triton's Hopper matmul does: D is the plain product."""
    spec = "tensormap:f16:64x64:64x64:{}:swizzle=128B"
    args = [spec.format(3), spec.format(4), "buf:4096", "buf:4096:rand", "buf:4096:rand"]
    result = simulate(CORPUS / "tma_swizzle.cu", grid=1, block=128, args=args, arch="sm_90a")
    assert result.findings == []
    out, a, b = result.args[2:5]
    a, b = a.reshape(64, 64), b.reshape(64, 64)  # b by rows of K: B itself
    assert a.dtype == np.float16 and np.abs(a).max() > 0
    np.testing.assert_array_equal(out.reshape(64, 64), reference_k(a, b.T))


def test_cp_async_copies_fenced_after_the_barrier_feed_the_product():
    """cp_async_fenced.cu: cp.async fills 128-byte swizzled tiles (B MN-major), each thread fences after the
    barrier, and D is the plain product."""
    args = ["buf:4096:rand", "buf:4096:rand", "buf:4096"]
    result = simulate(CORPUS / "cp_async_fenced.cu", grid=1, block=128, args=args, arch="sm_90a")
    assert result.findings == []
    a, b, out = result.args
    np.testing.assert_array_equal(out.reshape(64, 64), reference_k(a.reshape(64, 64), b.reshape(64, 64).T))


@pytest.mark.parametrize("mode", [0, 1], ids=["no-swizzle", "128B"])
def test_tf32_products_read_k_major_operands_and_drop_the_low_mantissa_bits(mode):
    """layouts_tf32.cu: four m64n64k8 tf32 products over K-major tiles, unswizzled and 128-byte swizzled: D is
    the product of A and B with each value cut to tf32 (sign, exponent, top 10 mantissa bits), bit for bit."""
    rng = np.random.default_rng(40 + mode)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    out = np.zeros(64 * 64, dtype=np.float32)
    result = check(CORPUS / "layouts_tf32.cu", grid=1, block=128, args=[a, b, out, mode], arch="sm_90a")
    assert result.findings == []
    tf32 = lambda x: (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)  # noqa: E731
    expected = reference_k(tf32(a), tf32(b))
    assert not np.array_equal(expected, reference_k(a, b))  # the cut matters for these values
    np.testing.assert_array_equal(out.reshape(64, 64), expected)


def reference_by_rows(a: np.ndarray, b_rows: np.ndarray) -> np.ndarray:
    """A (64, K) * B as its rows of K (N, K) for float inputs: float32 from zero, k by k (`sim.wgmma`)."""
    acc = np.zeros((a.shape[0], b_rows.shape[0]), dtype=np.float32)
    for k in range(a.shape[1]):
        acc = acc + a[:, k, None].astype(np.float32) * b_rows[None, :, k].astype(np.float32)
    return acc


def fp8(codes: np.ndarray, exponent_bits: int) -> np.ndarray:
    """The values of 8-bit float codes, computed here from the format (finite codes only)."""
    mantissa_bits, bias = 7 - exponent_bits, (1 << (exponent_bits - 1)) - 1
    exponent = (codes.astype(np.int64) >> mantissa_bits) & ((1 << exponent_bits) - 1)
    fraction = (codes & ((1 << mantissa_bits) - 1)) / float(1 << mantissa_bits)
    magnitude = np.where(exponent == 0, fraction * 2.0 ** (1 - bias), (1 + fraction) * 2.0 ** (exponent - bias))
    return np.where(codes & 0x80, -magnitude, magnitude).astype(np.float32)


def finite_codes(rng, shape, exponent_bits: int) -> np.ndarray:
    """Random codes of finite values of moderate size (exponent field below the top)."""
    top = (1 << exponent_bits) - 2
    exponent = rng.integers(max(0, (1 << (exponent_bits - 1)) - 4), top, shape)
    mantissa = rng.integers(0, 1 << (7 - exponent_bits), shape)
    sign = rng.integers(0, 2, shape) << 7
    return (sign | (exponent << (7 - exponent_bits)) | mantissa).astype(np.uint8)


@pytest.mark.parametrize("mode", [0, 1], ids=["no-swizzle", "64B"])
def test_8bit_integer_products_are_exact_in_s32(mode):
    """layouts_8bit.cu `int8_s32`: s8 A times u8 B over K = 64 (two m64n8k32), K-major tiles: D exact."""
    rng = np.random.default_rng(50 + mode)
    a = rng.integers(-128, 128, (64, 64)).astype(np.int8)
    b = rng.integers(0, 256, (8, 64)).astype(np.uint8)
    out = np.zeros(64 * 8, dtype=np.int32)
    result = check(CORPUS / "layouts_8bit.cu", kernel="int8_s32", grid=1, block=128, args=[a, b, out, mode], arch="sm_90a")
    assert result.findings == []
    np.testing.assert_array_equal(out.reshape(64, 8), a.astype(np.int64) @ b.astype(np.int64).T)


@pytest.mark.parametrize("mode", [0, 1], ids=["no-swizzle", "64B"])
def test_fp8_products_decode_e4m3_and_e5m2_and_sum_in_float32(mode):
    """`fp8_f32`: e4m3 A times e5m2 B, each code's value computed from the format here, summed k by k."""
    rng = np.random.default_rng(60 + mode)
    a, b = finite_codes(rng, (64, 64), 4), finite_codes(rng, (8, 64), 5)
    out = np.zeros(64 * 8, dtype=np.float32)
    result = check(CORPUS / "layouts_8bit.cu", kernel="fp8_f32", grid=1, block=128, args=[a, b, out, mode], arch="sm_90a")
    assert result.findings == []
    np.testing.assert_array_equal(out.reshape(64, 8), reference_by_rows(fp8(a, 4), fp8(b, 5)))


def test_fp8_products_into_f16_round_once_and_pack_pairs():
    """`fp8_f16`: e4m3 x e4m3 accumulated in float32 from D and rounded to f16 at the end of each product (D is
    f16 registers between the two), two to a register."""
    rng = np.random.default_rng(70)
    a, b = finite_codes(rng, (64, 64), 4), finite_codes(rng, (8, 64), 4)
    out = np.zeros(64 * 4, dtype=np.uint32)
    result = check(CORPUS / "layouts_8bit.cu", kernel="fp8_f16", grid=1, block=128, args=[a, b, out, 0], arch="sm_90a")
    assert result.findings == []
    first = reference_by_rows(fp8(a[:, :32], 4), fp8(b[:, :32], 4)).astype(np.float16)
    d = first.astype(np.float32)
    for k in range(32, 64):
        d = d + fp8(a[:, k, None], 4) * fp8(b[None, :, k], 4)
    expected = d.astype(np.float16)
    assert not np.array_equal(expected, reference_by_rows(fp8(a, 4), fp8(b, 4)).astype(np.float16))  # the rounding shows
    np.testing.assert_array_equal(out.view(np.float16).reshape(64, 8), expected)


def test_the_8bit_float_tables_follow_the_formats():
    from gpurace.sim.tensor_core import FP8_VALUES

    codes = np.arange(256, dtype=np.uint8)
    e4m3, e5m2 = FP8_VALUES["e4m3"], FP8_VALUES["e5m2"]
    finite4 = (codes & 0x7F) != 0x7F  # e4m3: S.1111.111 is NaN, no infinities
    np.testing.assert_array_equal(e4m3[finite4], fp8(codes[finite4], 4))
    assert np.isnan(e4m3[~finite4]).all() and np.nanmax(e4m3) == 448
    finite5 = (codes & 0x7C) != 0x7C  # e5m2: the top exponent is infinity or NaN, as in IEEE 754
    np.testing.assert_array_equal(e5m2[finite5], fp8(codes[finite5], 5))
    assert list(e5m2[[0x7C, 0xFC]]) == [np.inf, -np.inf] and np.isnan(e5m2[[0x7D, 0x7F, 0xFE]]).all()


TF32_REGISTER_A = (PROLOGUE + """\
    // B (8 rows of 8 tf32, row n = column n of B) to shared memory, K-major: thread t < 64 copies k = t % 8 of
    // row n = t / 8 to (k / 4) * 128 + n * 16 + (k % 4) * 4 (LBO 128)
    setp.ge.u32 %p, %t, 64;
    @%p bra LOADED;
    shr.u32 %r1, %t, 3;
    and.b32 %r2, %t, 7;
    shr.u32 %r3, %r2, 2;
    and.b32 %r4, %r2, 3;
    shl.b32 %r5, %r1, 4;
    shl.b32 %r6, %r3, 7;
    shl.b32 %r7, %r4, 2;
    add.u32 %r5, %r5, %r6;
    add.u32 %r5, %r5, %r7;
    mov.u32 %r8, sb;
    add.u32 %r5, %r5, %r8;
    mul.wide.u32 %rd1, %t, 4;
    add.s64 %rd1, %gb, %rd1;
    ld.global.b32 %r9, [%rd1];
    st.shared.b32 [%r5], %r9;
LOADED:
    fence.proxy.async.shared::cta;
    bar.sync 0;
    // A from registers, as mma.m16n8k8's tf32 A: register i of lane (g, t) of warp w holds row
    // 16w + g + 8 (i % 2), k = t + 4 (i / 2) of a (64 x 8, row-major)
    shr.u32 %warp, %t, 5;
    and.b32 %lane, %t, 31;
    shr.u32 %r1, %lane, 2;
    and.b32 %r2, %lane, 3;
    shl.b32 %r3, %warp, 4;
    add.u32 %r1, %r1, %r3;
    shl.b32 %r1, %r1, 3;
    add.u32 %r1, %r1, %r2;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd2, %ga, %rd2;
    ld.global.b32 %a0, [%rd2];
    ld.global.b32 %a1, [%rd2+256];
    ld.global.b32 %a2, [%rd2+16];
    ld.global.b32 %a3, [%rd2+272];
    mov.u32 %r8, sb;
    cvt.u64.u32 %descb, %r8;
    shr.u64 %descb, %descb, 4;
    or.b64 %descb, %descb, DESC;
    mov.f32 %d0, 0f00000000;
    mov.f32 %d1, 0f00000000;
    mov.f32 %d2, 0f00000000;
    mov.f32 %d3, 0f00000000;
    wgmma.fence.sync.aligned;
    setp.ne.b32 %p, 1, 0;
    wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, %descb, %p, 1, 1;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
""" + STORE_D).replace("DESC", str((128 >> 4) << 16 | (256 >> 4) << 32))


def test_tf32_a_from_registers_is_mma_m16n8k8_s_a_layout():
    """m64n8k8 tf32 with A in four registers per lane (each warp's 16 rows laid out as `mma.m16n8k8`'s tf32 A)
    and B K-major from a descriptor: D is the product of the operands cut to tf32, bit for bit."""
    rng = np.random.default_rng(80)
    a = rng.standard_normal((64, 8)).astype(np.float32)
    b_rows = rng.standard_normal((8, 8)).astype(np.float32)  # row n is column n of B
    out = np.zeros(64 * 8, dtype=np.float32)
    result = check(parse_ptx(TF32_REGISTER_A, "k.ptx"), grid=1, block=128, args=[a, b_rows, out], arch="sm_90a")
    assert result.findings == []
    tf32 = lambda x: (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)  # noqa: E731
    expected = reference_by_rows(tf32(a), tf32(b_rows))
    assert not np.array_equal(expected, reference_by_rows(a, b_rows))  # the cut matters for these values
    np.testing.assert_array_equal(out.reshape(64, 8), expected)
