"""Cluster-scope mbarriers and multicast bulk copies (`sim.mbarriers`, `sim.mbarrier_ops`, `sim.bulk_copies`).

An mbarrier in another block's shared memory takes remote arrivals (`.shared::cluster` or a generic `mapa`
address), which synchronise with a wait in the owning block when both are of `.cluster` scope; a `.cta` wait
orders nothing of another block's arrival. Waits and `init` on another block's object are findings. The
complete-tx of a bulk copy from another block (a multicast, a copy into distributed shared memory) orders its
bytes before every waiter of the phase, whatever the wait's scope. Expected behaviour is the PTX ISA's
(`mbarrier.arrive`, `mbarrier.try_wait`, the table of mbarrier operations by shared-memory location,
`cp.async.bulk` `.multicast::cluster`). The corpus kernels of `tests/kernels/clusters/` check the findings of the
command line; their results are checked here.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.check import check
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import simulate
from test_expectations import ROOT

CLUSTERS = ROOT / "tests" / "kernels" / "clusters"


def variant(tmp_path, name: str, *changes: tuple[str, str]):
    """A copy of corpus kernel `name` with each (old, new) of `changes` made (and its include made absolute)."""
    text = (CLUSTERS / name).read_text()
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    text = text.replace('"../bulk_copy/bulk_ptx.cuh"', f'"{ROOT / "tests/kernels/bulk_copy/bulk_ptx.cuh"}"')
    path = tmp_path / name
    path.write_text(text)
    return path


def test_remote_arrivals_at_cluster_scope_publish_the_partial_sums():
    a = np.random.default_rng(5).integers(-100, 100, size=256, dtype=np.int32)
    out = np.zeros(2, dtype=np.int32)
    result = check(CLUSTERS / "remote_arrive.cu", grid=8, block=32, cluster=4, args=[a, out], arch="sm_90a")
    assert result.findings == []
    np.testing.assert_array_equal(out, a.reshape(2, 128).sum(axis=1))


@pytest.mark.parametrize("detector", ["hb", "gwcp", "tsan", "lockset"])
def test_a_cta_scope_wait_does_not_synchronise_with_remote_arrivals(tmp_path, detector):
    path = variant(tmp_path, "remote_arrive.cu", ("bar_wait_cluster(&bar, 0);", "bar_wait(&bar, 0);"))
    out = np.zeros(2, dtype=np.int32)
    findings = check(path, grid=8, block=32, cluster=4, args=[np.ones(256, np.int32), out], arch="sm_90a", detector=detector).findings
    # the remote stores of partials[rank] (line 28) race with rank 0's reads (line 33); the mbarrier operations
    # themselves never race with each other
    assert [(f.kind, f.space, tuple(s.loc.line for s in f.sites)) for f in findings] == [("data-race", "shared", (28, 33))]


REMOTE_WAIT = """asm volatile("{\\n .reg .pred p;\\n W:\\n mbarrier.try_wait.parity.acquire.cluster.b64 p, [%0], 0;\\n"
                     " @!p bra W;\\n}" ::"l"(cluster.map_shared_rank(&bar, 0)) : "memory");"""


def test_a_wait_on_another_blocks_mbarrier_is_a_finding(tmp_path):
    # rank 1 waits on rank 0's object through a generic address (a .shared::cta one never reaches another block)
    path = variant(
        tmp_path, "remote_arrive.cu", ("bar_wait_cluster(&bar, 0);", REMOTE_WAIT),
        ("if (threadIdx.x == 0 && rank == 0) {", "if (threadIdx.x == 0 && rank == 1) {"),
    )  # fmt: skip
    out = np.zeros(2, dtype=np.int32)
    findings = check(path, grid=8, block=32, cluster=4, args=[np.ones(256, np.int32), out], arch="sm_90a").findings
    misuse = [f for f in findings if f.kind == "invalid-mbarrier-use"]
    assert misuse and "mbarrier wait on an mbarrier object of another block of the cluster" in misuse[0].cause


def test_a_multicast_load_lands_in_every_block_of_the_mask():
    a = np.arange(512, dtype=np.float32) + 1
    out = np.zeros(1024, dtype=np.float32)
    result = check(CLUSTERS / "multicast_load.cu", grid=4, block=256, cluster=2, args=[a, out], arch="sm_90a")
    assert result.findings == []
    tiles = a.reshape(2, 256)[:, ::-1]
    np.testing.assert_array_equal(out.reshape(4, 256), np.repeat(tiles, 2, axis=0))


def test_a_multicast_to_one_rank_leaves_the_other_blocks_mbarrier_waiting(tmp_path):
    path = variant(tmp_path, "multicast_load.cu", ("&bar, 0x3);", "&bar, 0x1);"))
    out = np.zeros(1024, dtype=np.float32)
    findings = simulate(path, grid=4, block=256, cluster=2, args=[np.ones(512, np.float32), out], arch="sm_90a").findings
    # rank 1's phase waits for bytes that never come; rank 0 then waits at the last cluster barrier for ever
    assert {f.kind for f in findings} == {"deadlock"}
    assert any("mbarrier phase never completes" in f.cause and "a tx-count of 1024" in f.cause for f in findings)


def test_a_multicast_to_a_rank_the_cluster_lacks_is_out_of_bounds(tmp_path):
    path = variant(tmp_path, "multicast_load.cu", ("&bar, 0x3);", "&bar, 0x7);"))
    out = np.zeros(1024, dtype=np.float32)
    findings = simulate(path, grid=4, block=256, cluster=2, args=[np.ones(512, np.float32), out], arch="sm_90a").findings
    assert "out-of-bounds" in [f.kind for f in findings]


COPY_TO_NEIGHBOUR = """\
.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 pout)
{
    .reg .b32 %t, %bar, %tile, %r<8>;
    .reg .b64 %out, %rd<4>;
    .reg .pred %p;
    .shared .align 16 .b8 tile[256];
    .shared .align 8 .b64 bar;
    mov.u32 %t, %tid.x;
    ld.param.u64 %out, [pout];
    mov.u32 %bar, bar;
    mov.u32 %tile, tile;
    mov.u32 %r7, %ctaid.x;
    shl.b32 %r1, %t, 2;
    add.u32 %r1, %r1, %tile;
    add.u32 %r2, %t, %r7;
    st.shared.u32 [%r1], %r2;
    fence.proxy.async.shared::cta;
    setp.eq.u32 %p, %t, 0;
    @%p mbarrier.init.shared::cta.b64 [%bar], 1;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    setp.eq.u32 %p, %r7, 0;
    @%p bra SEND;
    setp.eq.u32 %p, %t, 0;
    @%p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%bar], 256;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p, [%bar], 0;
    @!%p bra WAIT;
    ld.shared.u32 %r3, [%r1];
    mul.wide.u32 %rd1, %t, 4;
    add.s64 %rd1, %out, %rd1;
    st.global.u32 [%rd1], %r3;
    bra DONE;
SEND:
    setp.eq.u32 %p, %t, 0;
    mapa.shared::cluster.u32 %r4, %tile, 1;
    mapa.shared::cluster.u32 %r5, %bar, 1;
    @%p cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r4], [%tile], 256, [%r5];
DONE:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}
"""


@pytest.mark.parametrize("detector", ["hb", "gwcp", "tsan", "lockset"])
def test_a_copy_from_another_block_is_ordered_before_a_cta_scope_wait_on_its_mbarrier(detector):
    # block 0 copies its tile into block 1's; block 1's wait (of CTA scope) sees the complete-tx of cluster scope
    out = np.zeros(64, dtype=np.uint32)
    module = parse_ptx(COPY_TO_NEIGHBOUR, "k.ptx")
    result = check(module, grid=2, block=64, cluster=2, args=[out], arch="sm_90a", detector=detector)
    assert result.findings == []
    np.testing.assert_array_equal(out, np.arange(64))


def test_a_multicast_tma_load_delivers_the_box_to_both_blocks():
    tensor = np.random.default_rng(2).standard_normal((40, 100)).astype(np.float32)
    out = np.zeros(4 * 512, dtype=np.float32)
    path = CLUSTERS / "tma_multicast_load.cu"
    result = check(path, grid=4, block=512, cluster=2, args=["tensormap:f32:40x100:16x32:2", out, tensor], arch="sm_90a")
    assert result.findings == []
    padded = np.zeros((40 + 32, 100 + 64), dtype=np.float32)
    padded[16:56, 32:132] = tensor
    for b in range(4):
        col = 32 * (b // 2) - 8
        np.testing.assert_array_equal(out[512 * b : 512 * (b + 1)].reshape(16, 32), padded[24 + 16 : 40 + 16, col + 32 : col + 64])
