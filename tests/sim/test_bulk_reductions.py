"""Bulk reductions (`sim.bulk_reductions`): what each operation computes, element by element, against NumPy; how
they race (atomic with each other and with atomics of covering scope, not with plain accesses); their async-proxy
read of the source; the reduction into another block's shared memory through its mbarrier; and the forms refused.

Expected behaviour is the PTX ISA's (`cp.reduce.async.bulk`: each element reduced by `.redOp` in `.type`, `.inc`
and `.dec` bounded by the source element, `.add.f32` flushing subnormals, each element's reduction `.relaxed.gpu`).
The corpus kernels `tests/kernels/bulk_copy/reduce_*.cu` and `tests/kernels/clusters/reduce_to_rank0.cu` check the
findings through the command line; their results are checked here.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.check import check
from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import simulate
from gpurace.sim.memory.floats import bf16_to_f32, f32_to_bf16
from test_expectations import ROOT

KERNELS = ROOT / "tests" / "kernels"

KERNEL = """\
.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .b32 %t, %tile, %r<8>;
    .reg .b64 %in, %out, %rd<4>;
    .reg .pred %p;
    .shared .align 16 .b8 tile[64];
    mov.u32 %t, %tid.x;
    ld.param.u64 %in, [pin];
    ld.param.u64 %out, [pout];
    mov.u32 %tile, tile;
    setp.eq.u32 %p, %t, 0;
    // thread t copies 4 bytes of the source into the tile, then thread 0 reduces the tile into out
    mul.wide.u32 %rd1, %t, 4;
    add.s64 %rd2, %in, %rd1;
    ld.global.u32 %r1, [%rd2];
    shl.b32 %r2, %t, 2;
    add.u32 %r2, %r2, %tile;
    st.shared.u32 [%r2], %r1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
{body}
    ret;
}}
"""

REDUCE = """
    @%p cp.reduce.async.bulk.global.shared::cta.bulk_group.{op} [%out], [%tile], 64;
    @%p cp.async.bulk.commit_group;
    @%p cp.async.bulk.wait_group 0;"""


def reduce(op: str, dst: np.ndarray, src: np.ndarray, body: str = REDUCE, threads: int = 16, grid: int = 1):
    """Run `body` with the 64 bytes of `src` as the tile and `dst` as out; returns the findings."""
    module = parse_ptx(KERNEL.format(body=body.format(op=op)), "k.ptx")
    words = np.frombuffer(src.tobytes(), dtype=np.uint32).copy()
    return check(module, grid=grid, block=threads, args=[words, dst], arch="sm_90a").findings


RNG = np.random.default_rng(7)


def ints(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=64 // np.dtype(dtype).itemsize, dtype=dtype, endpoint=True)


@pytest.mark.parametrize(
    "op, dtype, expected",
    [
        ("add.u32", np.uint32, lambda d, s: d + s),
        ("add.s32", np.int32, lambda d, s: d + s),
        ("add.u64", np.uint64, lambda d, s: d + s),
        ("min.u32", np.uint32, np.minimum),
        ("min.s32", np.int32, np.minimum),
        ("max.u64", np.uint64, np.maximum),
        ("max.s64", np.int64, np.maximum),
        ("and.b32", np.uint32, np.bitwise_and),
        ("or.b64", np.uint64, np.bitwise_or),
        ("xor.s32", np.int32, np.bitwise_xor),
        ("inc.u32", np.uint32, lambda d, s: np.where(d >= s, 0, d + 1).astype(np.uint32)),
        ("dec.u32", np.uint32, lambda d, s: np.where((d == 0) | (d > s), s, d - 1).astype(np.uint32)),
    ],
)
def test_an_integer_reduction_combines_each_element_as_numpy_does(op, dtype, expected):
    dst, src = ints(dtype), ints(dtype)
    if op.startswith(("inc", "dec")):  # small counters and bounds, so that both branches happen
        dst, src = (dst % 8).astype(dtype), (src % 8).astype(dtype)
    want = expected(dst.copy(), src)
    with np.errstate(over="ignore"):
        assert reduce(op, dst, src) == []
    np.testing.assert_array_equal(dst, want)


def test_a_float_add_rounds_each_element_once():
    dst = RNG.standard_normal(8).astype(np.float64)
    src = RNG.standard_normal(8).astype(np.float64)
    want = dst + src
    reduce("add.f64", dst, src)
    np.testing.assert_array_equal(dst, want)


def test_an_f32_add_flushes_subnormal_inputs_and_results_to_signed_zero():
    tiny = np.float32(1e-39)  # subnormal
    dst = np.array([1.5, tiny, -tiny, 2.0, 1.3e-38, 3.0, -1.0, -0.0] * 2, dtype=np.float32)
    src = np.array([2.25, 1.0, -0.0, tiny, -1.2e-38, -3.0, -tiny, -tiny] * 2, dtype=np.float32)
    reduce("add.f32", dst, src)
    # tiny flushes to +0 and -tiny to -0 (so -tiny + -0 is -0); 1.3e-38 - 1.2e-38 is subnormal and flushes to +0
    want = np.array([3.75, 1.0, -0.0, 2.0, 0.0, 0.0, -1.0, -0.0] * 2, dtype=np.float32)
    np.testing.assert_array_equal(dst.view(np.uint32), want.view(np.uint32))


def test_half_precision_adds_and_bounds_round_in_their_type():
    dst = RNG.standard_normal(32).astype(np.float16)
    src = RNG.standard_normal(32).astype(np.float16)
    want = dst + src
    reduce("add.noftz.f16", dst, src)
    np.testing.assert_array_equal(dst, want)
    d16 = f32_to_bf16(RNG.standard_normal(32).astype(np.float32))
    s16 = f32_to_bf16(RNG.standard_normal(32).astype(np.float32))
    want_max = f32_to_bf16(np.fmax(bf16_to_f32(d16), bf16_to_f32(s16)))
    want_add = f32_to_bf16(bf16_to_f32(d16) + bf16_to_f32(s16))
    d_max, d_add = d16.copy(), d16.copy()
    reduce("max.bf16", d_max, s16)
    reduce("add.noftz.bf16", d_add, s16)
    np.testing.assert_array_equal(d_max, want_max)
    np.testing.assert_array_equal(d_add, want_add)


def test_the_corpus_reduction_sums_the_blocks_tiles():
    a = np.arange(1024, dtype=np.uint32) * 3
    out = np.full(256, 7, dtype=np.uint32)
    result = simulate(KERNELS / "bulk_copy" / "reduce_add.cu", grid=4, block=256, args=[a, out], arch="sm_90a")
    assert result.clean
    np.testing.assert_array_equal(out, 7 + a.reshape(4, 256).sum(axis=0))


def test_a_reduction_into_another_blocks_shared_memory_completes_on_its_mbarrier():
    a = np.random.default_rng(3).integers(-1000, 1000, size=512, dtype=np.int32)
    out = np.zeros(128, dtype=np.int32)
    path = KERNELS / "clusters" / "reduce_to_rank0.cu"
    result = simulate(path, grid=8, block=64, cluster=4, args=[a, out], arch="sm_90a")
    assert result.clean
    np.testing.assert_array_equal(out, a.reshape(2, 4, 64).sum(axis=1).reshape(-1))


# ---------------------------------------------------------------- races

TWO_BLOCKS = """
    @%p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%out], [%tile], 64;
    @%p cp.async.bulk.commit_group;
    @%p cp.async.bulk.wait_group 0;
    mov.u32 %r3, %ctaid.x;
    mad.lo.u32 %r3, %r3, 100, %t;
    setp.eq.u32 %p, %r3, 100;  // thread 0 of block 1
    @%p {other} [%out+{at}], 1;"""


@pytest.mark.parametrize(
    "other, at, race",
    [
        ("red.global.add.u32", 0, False),  # atomics of gpu scope, as the reductions' own
        ("red.relaxed.cta.global.add.u32", 0, True),  # a block-scope atomic from another block
        ("st.global.u32", 0, True),  # a plain store
        ("st.global.u32", 64, False),  # past the reduced bytes
    ],
)
def test_a_reduction_races_with_what_is_not_an_atomic_of_covering_scope(other, at, race):
    dst = np.zeros(32, dtype=np.uint32)
    found = reduce("", dst, np.ones(16, dtype=np.uint32), TWO_BLOCKS.replace("{other}", other).replace("{at}", str(at)), grid=2)
    assert [(f.kind, f.space) for f in found] == ([("data-race", "global")] if race else [])


def test_two_blocks_reductions_onto_the_same_bytes_do_not_race():
    dst = np.zeros(16, dtype=np.uint32)
    assert reduce("add.u32", dst, np.arange(16, dtype=np.uint32), grid=3) == []
    np.testing.assert_array_equal(dst, 3 * np.arange(16))


def test_an_unfenced_write_to_the_source_is_a_proxy_race():
    body = KERNEL.replace("    fence.proxy.async.shared::cta;\n", "")
    module = parse_ptx(body.format(body=REDUCE.format(op="add.u32")), "k.ptx")
    findings = check(module, grid=1, block=16, args=[np.ones(16, np.uint32), np.zeros(16, np.uint32)], arch="sm_90a").findings
    assert [(f.kind, f.space) for f in findings] == [("data-race", "shared")]
    assert "generic-proxy write not fenced before async-proxy read" in findings[0].cause


def test_writing_the_source_before_the_wait_races_with_the_reduction():
    body = """
    @%p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%out], [%tile], 64;
    @%p cp.async.bulk.commit_group;
    @%p st.shared.u32 [%tile], %t;
    @%p cp.async.bulk.wait_group 0;"""
    (finding,) = reduce("", np.zeros(16, np.uint32), np.ones(16, np.uint32), body)
    assert finding.kind == "data-race" and "write of a cp.async.bulk source before its wait" in finding.cause
    assert finding.sites[0].op == "cp.reduce.async.bulk read"


# ---------------------------------------------------------------- refused forms


@pytest.mark.parametrize(
    "line, message",
    [
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16 [%out], [%tile], 64;", "needs .noftz"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.s32 [%out], [%tile], 64;", "no .inc on .s32"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.s64 [%out], [%tile], 64;", "no .add on .s64"),
        ("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.f32 [%tile], [%tile], 64, [%tile];", "no .add on .f32"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.mul.u32 [%out], [%tile], 64;", r"modifier\(s\) \.mul"),
        ("cp.reduce.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.add.u32 [%tile], [%out], 64, [%tile];", "not a form of cp.reduce.async.bulk"),
    ],
)
def test_forms_the_isa_lacks_are_refused_by_name(line, message):
    with pytest.raises(UserError, match=message):
        reduce("", np.zeros(16, np.uint32), np.zeros(16, np.uint32), "    " + line)


# ---------------------------------------------------------------- TMA reductions (cp.reduce.async.bulk.tensor)

ROWS, COLS = 40, 100


def test_a_tma_reduction_adds_each_box_element_inside_the_tensor():
    a = np.random.default_rng(11).integers(-50, 50, size=2048, dtype=np.int32)
    tensor = np.random.default_rng(12).integers(-50, 50, size=ROWS * COLS, dtype=np.int32)
    want = tensor.reshape(ROWS, COLS).copy()
    for b, tile in enumerate(a.reshape(4, 16, 32)):
        col = 16 * b - 8
        for r in range(16):
            for c in range(32):
                if 30 + r < ROWS and 0 <= col + c < COLS:
                    want[30 + r, col + c] += tile[r, c]
    spec = f"tensormap:i32:{ROWS}x{COLS}:16x32:2"
    result = simulate(KERNELS / "bulk_copy" / "tma_reduce_add.cu", grid=4, block=512, args=[spec, a, tensor], arch="sm_90a")
    assert result.clean
    np.testing.assert_array_equal(tensor.reshape(ROWS, COLS), want)


@pytest.mark.parametrize("op", ["inc", "xor"])
def test_a_tma_reduction_the_isa_lacks_for_the_maps_type_is_refused(op, tmp_path):
    text = (KERNELS / "bulk_copy" / "tma_reduce_add.cu").read_text().replace('tma_reduce_2d("add"', f'tma_reduce_2d("{op}"')
    path = tmp_path / "k.cu"
    path.write_text(text.replace('"bulk_ptx.cuh"', f'"{KERNELS / "bulk_copy" / "bulk_ptx.cuh"}"'))
    spec = f"tensormap:f32:{ROWS}x{COLS}:16x32:2"
    with pytest.raises(UserError, match=f"no .{op} on .f32"):
        simulate(path, grid=4, block=512, args=[spec, np.zeros(2048, np.float32), np.zeros(4000, np.float32)], arch="sm_90a")
