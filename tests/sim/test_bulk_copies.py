"""Bulk asynchronous copies (`sim.bulk_copies`, `sim.async_copies`, `sim.mbarriers`): what they copy, when they
complete, the races with copies in flight and with unfenced generic writes (`sim.proxy_fences`), the misuse of
tx-counts, and the forms the simulator refuses.

The corpus kernels in `tests/kernels/bulk_copy/` check the findings through the command line; here their results
are checked against NumPy, and hand-written PTX covers the cases a .cu file cannot reach. Expected behaviour is
the PTX ISA's (`cp.async.bulk`, `cp.async.bulk.commit_group`, `cp.async.bulk.wait_group`, `mbarrier`,
`fence.proxy.async`).
"""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.check import check
from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.async_copies import BULK, BULK_MBARRIER, READ_DESTINATION
from gpurace.sim.launch import simulate
from gpurace.sim.proxy_fences import UNFENCED
from test_expectations import ROOT

CORPUS = ROOT / "tests" / "kernels" / "bulk_copy"


def test_a_bulk_load_completed_through_the_mbarrier_delivers_the_tile():
    a = np.arange(512, dtype=np.float32)
    out = np.zeros(512, dtype=np.float32)
    result = simulate(CORPUS / "load_wait.cu", grid=2, block=256, args=[a, out], arch="sm_90a")
    assert result.clean
    np.testing.assert_array_equal(out, a.reshape(2, 256)[:, ::-1].reshape(-1))


def test_a_bulk_store_writes_global_memory_by_its_wait():
    a = np.arange(512, dtype=np.float32)
    out = np.zeros(512, dtype=np.float32)
    result = simulate(CORPUS / "store_fenced.cu", grid=2, block=256, args=[a, out], arch="sm_90a")
    assert result.clean
    np.testing.assert_array_equal(out, 2 * a)


def test_reading_the_tile_before_the_wait_names_the_bulk_copy_as_the_cause():
    a, out = np.arange(512, dtype=np.float32), np.zeros(512, dtype=np.float32)
    findings = check(CORPUS / "load_no_wait.cu", grid=2, block=256, args=[a, out], arch="sm_90a").findings
    races = [f for f in findings if f.kind == "data-race"]
    assert [f.cause for f in races] == [BULK[BULK_MBARRIER][READ_DESTINATION]]
    assert [s.loc.line for s in races[0].sites] == [20, 22]


def test_an_unfenced_generic_write_read_by_a_bulk_store_is_a_race_between_the_two_lines():
    a, out = np.arange(512, dtype=np.float32), np.zeros(512, dtype=np.float32)
    findings = check(CORPUS / "store_unfenced.cu", grid=2, block=256, args=[a, out], arch="sm_90a").findings
    assert [(f.kind, f.space, f.cause) for f in findings] == [("data-race", "shared", UNFENCED)]
    assert [s.loc.line for s in findings[0].sites] == [14, 17]


KERNEL = """\
.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .b32 %t, %bar, %tile, %r<8>;
    .reg .b64 %in, %out, %rd<4>;
    .reg .pred %p;
    .shared .align 16 .b8 tile[256];
    .shared .align 8 .b64 bar;
    mov.u32 %t, %tid.x;
    ld.param.u64 %in, [pin];
    ld.param.u64 %out, [pout];
    mov.u32 %bar, bar;
    mov.u32 %tile, tile;
{body}
    ret;
}}
"""


def run_ptx(body: str, threads: int = 1):
    a = np.arange(64, dtype=np.uint32) + 1
    out = np.zeros(64, dtype=np.uint32)
    module = parse_ptx(KERNEL.format(body=body), "k.ptx")
    report = check(module, grid=1, block=threads, args=[a, out], arch="sm_90a")
    return report.findings


def test_copies_that_complete_more_bytes_than_expected_are_mbarrier_misuse():
    findings = run_ptx(
        """
    mbarrier.init.shared::cta.b64 [%bar], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%bar], 128;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%tile], [%in], 256, [%bar];
    mbarrier.try_wait.parity.shared::cta.b64 %p, [%bar], 0;"""
    )
    assert [f.kind for f in findings] == ["invalid-mbarrier-use"]
    assert "complete 256 bytes (complete_tx) where its tx-count expects 128" in findings[0].cause


def test_a_phase_whose_copies_deliver_fewer_bytes_than_expected_never_completes():
    findings = run_ptx(
        """
    mbarrier.init.shared::cta.b64 [%bar], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%bar], 512;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%tile], [%in], 256, [%bar];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p, [%bar], 0;
    @!%p bra WAIT;"""
    )
    assert [f.kind for f in findings] == ["deadlock"]
    assert "a tx-count of 512" in findings[0].cause


def test_a_copy_may_be_issued_before_the_expect_tx_it_completes():
    findings = run_ptx(
        """
    mbarrier.init.shared::cta.b64 [%bar], 1;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%tile], [%in], 256, [%bar];
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%bar], 256;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p, [%bar], 0;
    @!%p bra WAIT;
    ld.shared.u32 %r1, [%tile];
    st.global.u32 [%out], %r1;"""
    )
    assert findings == []


def test_a_copy_towards_an_uninitialised_mbarrier_is_not_made():
    findings = run_ptx("    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%tile], [%in], 16, [%bar];")
    assert [f.kind for f in findings] == ["invalid-mbarrier-use"]


def test_a_misaligned_bulk_copy_is_a_finding():
    findings = run_ptx(
        """
    mbarrier.init.shared::cta.b64 [%bar], 1;
    add.u32 %r1, %tile, 8;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%in], 16, [%bar];"""
    )
    assert "misaligned-access" in [f.kind for f in findings]


@pytest.mark.parametrize(
    "line, message",
    [
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%tile], [%in], 24, [%bar];", "multiple of 16"),
        ("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.multicast::cluster [%tile], [%in], 16, [%bar], 3;", "multicast"),
        ("cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%out], [%tile], 16, 65535;", "cp_mask"),
        ("cp.async.bulk.wait_group %t;", "non-negative integer constant"),
        ("cp.async.bulk.global.global.bulk_group [%out], [%in], 16;", "not a form of cp.async.bulk"),
    ],
)
def test_unsupported_bulk_forms_are_refused_by_name(line, message):
    with pytest.raises(UserError, match=message):
        run_ptx("    mbarrier.init.shared::cta.b64 [%bar], 1;\n    " + line)


def test_prefetch_is_a_no_op():
    assert run_ptx("    cp.async.bulk.prefetch.L2.global [%in], 256;") == []


# ---------------------------------------------------------------- TMA (cp.async.bulk.tensor, tensor maps)

ROWS, COLS, BOX_ROWS, BOX_COLS = 40, 100, 16, 32


def box_at(tensor: np.ndarray, row: int, col: int) -> np.ndarray:
    """The 16x32 box of `tensor` at (row, col), zeros outside the tensor: what a TMA tile load delivers."""
    padded = np.zeros((ROWS + 2 * BOX_ROWS, COLS + 2 * BOX_COLS), dtype=tensor.dtype)
    padded[BOX_ROWS : BOX_ROWS + ROWS, BOX_COLS : BOX_COLS + COLS] = tensor
    return padded[row + BOX_ROWS : row + 2 * BOX_ROWS, col + BOX_COLS : col + 2 * BOX_COLS]


def test_a_tma_tile_load_delivers_the_box_with_zeros_outside_the_tensor():
    tensor = np.random.default_rng(1).standard_normal((ROWS, COLS)).astype(np.float32)
    out = np.zeros(4 * 512, dtype=np.float32)
    spec = f"tensormap:f32:{ROWS}x{COLS}:{BOX_ROWS}x{BOX_COLS}:2"
    result = simulate(CORPUS / "tma_load_wait.cu", grid=4, block=512, args=[spec, out, tensor], arch="sm_90a")
    assert result.clean
    expected = np.stack([box_at(tensor, 24, 32 * b - 8) for b in range(4)])
    np.testing.assert_array_equal(out.reshape(4, BOX_ROWS, BOX_COLS), expected)


def test_a_tma_tile_store_writes_the_elements_inside_the_tensor_only():
    a = np.arange(4 * 512, dtype=np.float32) + 1
    tensor = np.full((ROWS, COLS), -1, dtype=np.float32)
    spec = f"tensormap:f32:{ROWS}x{COLS}:{BOX_ROWS}x{BOX_COLS}:2"
    result = simulate(CORPUS / "tma_store_fenced.cu", grid=4, block=512, args=[spec, a, tensor], arch="sm_90a")
    assert result.clean
    expected = np.full((ROWS + 2 * BOX_ROWS, COLS + 2 * BOX_COLS), -1, dtype=np.float32)
    for b, tile in enumerate(a.reshape(4, BOX_ROWS, BOX_COLS)):
        col = 32 * b - 8
        expected[24 + BOX_ROWS : 24 + 2 * BOX_ROWS, col + BOX_COLS : col + 2 * BOX_COLS] = tile
    np.testing.assert_array_equal(tensor, expected[BOX_ROWS : BOX_ROWS + ROWS, BOX_COLS : BOX_COLS + COLS])


@pytest.mark.parametrize(
    "spec, message",
    [
        ("tensormap:f32:40x100:16x32", "tensormap:TYPE:DIMS:BOX:ARG"),
        ("tensormap:f7:40x100:16x32:2", "element type"),
        ("tensormap:f32:40x100:16x3:2", "multiple of 16 bytes"),
        ("tensormap:f32:40x101:16x32:2", "row strides"),
        ("tensormap:f32:40x100:16x32:0", "must be a buffer"),
        ("tensormap:f32:40x100:16x512:2", "1..256"),
    ],
)
def test_bad_tensor_map_specs_are_refused(spec, message):
    out = np.zeros(2048, dtype=np.float32)
    with pytest.raises(UserError, match=message):
        simulate(CORPUS / "tma_load_wait.cu", grid=4, block=512, args=[spec, out, np.zeros(4000, np.float32)], arch="sm_90a")


STORE = """
    shl.b32 %r1, %t, 2;
    add.u32 %r1, %r1, %tile;
    st.shared.u32 [%r1], %t;
    {fence}
    bar.sync 0;
    setp.eq.u32 %p, %t, 0;
    @%p cp.async.bulk.global.shared::cta.bulk_group [%out], [%tile], 256;
    @%p cp.async.bulk.commit_group;
    @%p cp.async.bulk.wait_group 0;"""


@pytest.mark.parametrize(
    "fence, unfenced",
    [
        ("fence.proxy.async;", False),
        ("fence.proxy.async.shared::cta;", False),
        ("fence.proxy.async.shared::cluster;", False),
        ("fence.proxy.async.global;", True),  # fences global memory only
        ("fence.proxy.alias;", True),
        ("", True),
    ],
)
def test_which_proxy_fences_cover_generic_writes_to_shared_memory(fence, unfenced):
    findings = run_ptx(STORE.format(fence=fence), threads=64)
    assert [f.cause for f in findings] == ([UNFENCED] if unfenced else [])


def test_a_bulk_store_a_thread_never_waits_for_lands_when_it_exits():
    a = np.arange(64, dtype=np.uint32) + 1
    out = np.zeros(64, dtype=np.uint32)
    body = STORE.format(fence="fence.proxy.async;").replace("    @%p cp.async.bulk.wait_group 0;", "")
    simulate(parse_ptx(KERNEL.format(body=body), "k.ptx"), grid=1, block=64, args=[a, out], arch="sm_90a")
    np.testing.assert_array_equal(out, np.arange(64))


F16_STORE = """\
.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .align 64 .b8 map[128], .param .u64 pin, .param .u64 pt)
{
    .reg .b32 %t, %tile, %r<8>;
    .reg .b64 %in, %m, %rd<4>;
    .reg .pred %p;
    .shared .align 128 .b8 tile[256];
    mov.u32 %t, %tid.x;
    ld.param.u64 %in, [pin];
    mul.wide.u32 %rd1, %t, 2;
    add.s64 %rd1, %in, %rd1;
    ld.global.u16 %r1, [%rd1];
    mov.u32 %tile, tile;
    shl.b32 %r2, %t, 1;
    add.u32 %r2, %r2, %tile;
    st.shared.u16 [%r2], %r1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p, %t, 0;
    mov.b64 %m, map;
    cvta.param.u64 %m, %m;
    mov.u32 %r3, 16;
    mov.u32 %r4, 1;
    @%p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%m, {%r3, %r4}], [%tile];
    @%p cp.async.bulk.commit_group;
    @%p cp.async.bulk.wait_group 0;
    ret;
}
"""


def test_a_tma_store_of_f16_elements_writes_each_element_inside_the_tensor():
    values = (np.arange(128, dtype=np.float16) + 1).view(np.uint16)
    tensor = np.zeros((8, 24), dtype=np.uint16)
    module = parse_ptx(F16_STORE, "k.ptx")
    result = check(module, grid=1, block=128, args=["tensormap:f16:8x24:8x16:2", values, tensor], arch="sm_90a")
    assert result.findings == []
    expected = np.zeros((16, 40), dtype=np.uint16)
    expected[1:9, 16:32] = values.reshape(8, 16)
    np.testing.assert_array_equal(tensor, expected[:8, :24])
