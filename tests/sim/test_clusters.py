"""Thread-block clusters in the simulator (`sim.clusters`): launch shape, the cluster special registers,
distributed shared memory through `mapa`, and the split cluster barrier."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpurace.check import check
from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.clusters import map_shared, remote_shared
from gpurace.sim.launch import simulate

CLUSTERS = Path(__file__).resolve().parents[1] / "kernels" / "clusters"

_HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"

# Each thread 0 stores its block's %cluster_ctarank, %cluster_nctarank, %cluster_ctaid.x/.y, %clusterid.x/.y,
# %nclusterid.x/.y, %is_explicit_cluster into out[9 * linear block id ...].
REGISTERS = parse_ptx(
    _HEAD + ".visible .entry regs(.param .u64 out) {\n"
    "  .reg .pred %p<3>; .reg .b32 %r<16>; .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x; setp.ne.u32 %p1, %r1, 0; @%p1 bra DONE;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ctaid.y; mov.u32 %r4, %nctaid.x;\n"
    "  mad.lo.u32 %r5, %r3, %r4, %r2; mul.lo.u32 %r5, %r5, 36;\n"
    "  cvt.u64.u32 %rd2, %r5; add.u64 %rd1, %rd1, %rd2;\n"
    "  mov.u32 %r6, %cluster_ctarank; st.global.u32 [%rd1], %r6;\n"
    "  mov.u32 %r7, %cluster_nctarank; st.global.u32 [%rd1+4], %r7;\n"
    "  mov.u32 %r8, %cluster_ctaid.x; st.global.u32 [%rd1+8], %r8;\n"
    "  mov.u32 %r9, %cluster_ctaid.y; st.global.u32 [%rd1+12], %r9;\n"
    "  mov.u32 %r10, %clusterid.x; st.global.u32 [%rd1+16], %r10;\n"
    "  mov.u32 %r11, %clusterid.y; st.global.u32 [%rd1+20], %r11;\n"
    "  mov.u32 %r12, %nclusterid.x; st.global.u32 [%rd1+24], %r12;\n"
    "  mov.u32 %r13, %nclusterid.y; st.global.u32 [%rd1+28], %r13;\n"
    "  mov.pred %p2, %is_explicit_cluster; selp.u32 %r14, 1, 0, %p2; st.global.u32 [%rd1+32], %r14;\n"
    "DONE:\n  ret;\n}\n",
    "regs.ptx",
)


def _registers(grid, cluster):
    out = np.zeros(9 * grid[0] * grid[1], dtype=np.uint32)
    result = simulate(REGISTERS, grid=grid, block=32, args=[out], cluster=cluster)
    assert result.findings == []
    return out.reshape(grid[1], grid[0], 9)


def test_cluster_registers_follow_the_cluster_shape():
    regs = _registers((4, 2, 1), (2, 2, 1))
    by, bx = np.meshgrid(np.arange(2), np.arange(4), indexing="ij")
    cx, cy = bx % 2, by % 2
    assert (regs[..., 0] == cx + 2 * cy).all()  # rank: x fastest
    assert (regs[..., 1] == 4).all()
    assert (regs[..., 2] == cx).all() and (regs[..., 3] == cy).all()
    assert (regs[..., 4] == bx // 2).all() and (regs[..., 5] == by // 2).all()
    assert (regs[..., 6] == 2).all() and (regs[..., 7] == 1).all()
    assert (regs[..., 8] == 1).all()


def test_without_a_cluster_launch_every_block_is_its_own_cluster():
    regs = _registers((3, 2, 1), None)
    by, bx = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
    assert (regs[..., 0] == 0).all() and (regs[..., 1] == 1).all()
    assert (regs[..., 4] == bx).all() and (regs[..., 5] == by).all()
    assert (regs[..., 6] == 3).all() and (regs[..., 7] == 2).all()
    assert (regs[..., 8] == 0).all()


@pytest.mark.parametrize(
    ("grid", "cluster", "message"),
    [
        ((3, 1, 1), (2, 1, 1), "not a multiple of the cluster in x"),
        ((4, 3, 1), (1, 2, 1), "not a multiple of the cluster in y"),
        ((16, 1, 1), (16, 1, 1), "exceed the portable maximum of 8"),
    ],
)
def test_launches_a_gpu_refuses_are_user_errors(grid, cluster, message):
    with pytest.raises(UserError, match=message) as err:
        simulate(REGISTERS, grid=grid, block=32, args=[np.zeros(9 * 16 * 3, dtype=np.uint32)], cluster=cluster)
    assert "cudaErrorInvalidClusterSize" in str(err.value)


def test_a_cluster_other_than_the_kernels_cluster_dims_is_refused():
    with pytest.raises(UserError, match=r"compiled with __cluster_dims__\(2,1,1\)"):
        check(CLUSTERS / "dsmem_atomic.cu", arch="compute_90", grid=4, block=64, cluster=4, args=["buf:256", "buf:2"])


def test_map_shared_names_the_target_block_and_resolution_finds_it():
    offsets = np.array([0, 8, 8, 12], dtype=np.uint64)
    mapped = map_shared(offsets, np.array([0, 1, 3, 2], dtype=np.int64))
    rank_block = np.array([[0, 1, 4, 5], [0, 1, 4, 5]], dtype=np.int64)  # two blocks of one cluster of four
    owner, offset, known = remote_shared(mapped, np.array([1, 0, 0, 1], dtype=np.int64), rank_block)
    assert owner.tolist() == [0, 1, 5, 4]
    assert offset.tolist() == [0, 8, 8, 12]
    assert known.all()
    _, _, known = remote_shared(map_shared(offsets[:1], np.array([4])), np.array([0]), rank_block)
    assert not known.any()  # rank 4 of a cluster of four: no such block


def test_a_cluster_reduction_over_distributed_shared_memory_computes_the_sums():
    data = np.arange(512, dtype=np.int32)
    out = np.zeros(2, dtype=np.int32)
    result = simulate(CLUSTERS / "dsmem_reduce.cu", arch="compute_90", grid=8, block=64, cluster=4, args=[data, out])
    assert result.findings == []
    assert out.tolist() == [int(data[:256].sum()), int(data[256:].sum())]


def test_atomics_into_another_blocks_shared_memory_take_effect_there():
    data = np.arange(256, dtype=np.int32)
    out = np.zeros(2, dtype=np.int32)
    result = simulate(CLUSTERS / "dsmem_atomic.cu", arch="compute_90", grid=4, block=64, args=[data, out])
    assert result.geometry.cluster == (2, 1, 1) and result.geometry.explicit_cluster  # from __cluster_dims__
    assert result.findings == []
    assert out.tolist() == [int(data[:128].sum()), int(data[128:].sum())]


# mapa to the rank in the kernel parameter, then a store through the generic address it gives.
MAPA = parse_ptx(
    _HEAD + ".visible .entry remote(.param .u32 rank) {\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .u32 word;\n"
    "  ld.param.u32 %r1, [rank];\n"
    "  mov.u64 %rd1, word; cvta.shared.u64 %rd2, %rd1;\n"
    "  mapa.u64 %rd3, %rd2, %r1;\n"
    "  st.u32 [%rd3], %r1;\n"
    "  ret;\n}\n",
    "mapa.ptx",
)


def test_a_rank_outside_the_cluster_is_out_of_bounds_at_the_mapa_and_the_access():
    result = simulate(MAPA, grid=2, block=1, args=[2], cluster=2)
    kinds = sorted((f.kind, f.sites[0].op) for f in result.findings)
    assert kinds == [("out-of-bounds", "mapa"), ("out-of-bounds", "write")]
    mapa = next(f for f in result.findings if f.sites[0].op == "mapa")
    assert "rank 2 of a cluster of 2 blocks" in mapa.cause
    assert mapa.sites[0].instruction.startswith("mapa.u64")


def test_stores_through_mapa_race_between_the_blocks_of_a_cluster():
    report = check(MAPA, grid=2, block=1, args=[0], cluster=2, detector="hb", schedules=1)
    (race,) = report.findings
    assert (race.kind, race.space) == ("data-race", "shared")
    assert {s.block for s in race.sites} == {(0, 0, 0), (1, 0, 0)}  # block 1 wrote block 0's word, as block 0 did


# Thread 0 of every block exits before the cluster barrier that the others wait at.
EARLY_EXIT = parse_ptx(
    _HEAD + ".visible .entry early() {\n"
    "  .reg .pred %p<2>; .reg .b32 %r<2>;\n"
    "  mov.u32 %r1, %tid.x; setp.eq.u32 %p1, %r1, 0; @%p1 bra DONE;\n"
    "  barrier.cluster.arrive;\n"
    "  barrier.cluster.wait;\n"
    "DONE:\n  ret;\n}\n",
    "early.ptx",
)


def test_a_cluster_wait_that_exited_threads_never_arrive_at_is_a_deadlock():
    result = simulate(EARLY_EXIT, grid=2, block=32, cluster=2)
    (dead,) = result.findings
    assert dead.kind == "deadlock"
    assert "all 64 threads of the cluster" in dead.cause and "only 62" in dead.cause
    assert dead.sites[0].instruction == "barrier.cluster.wait"


# Block 1 stores to block 0's word before its arrive (%r2 = 1) or between its arrive and its wait (%r2 = 2);
# block 0 reads the word after its wait.
SPLIT = parse_ptx(
    _HEAD + ".visible .entry split(.param .u32 when) {\n"
    "  .reg .pred %p<4>; .reg .b32 %r<6>; .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .u32 word;\n"
    "  ld.param.u32 %r2, [when];\n"
    "  mov.u32 %r1, %cluster_ctarank; setp.eq.u32 %p1, %r1, 1;\n"
    "  mov.u64 %rd1, word; cvta.shared.u64 %rd2, %rd1; mapa.u64 %rd3, %rd2, 0;\n"
    "  setp.eq.u32 %p2, %r2, 1; and.pred %p2, %p2, %p1;\n"
    "  setp.eq.u32 %p3, %r2, 2; and.pred %p3, %p3, %p1;\n"
    "  @%p2 st.u32 [%rd3], %r1;\n"
    "  barrier.cluster.arrive;\n"
    "  @%p3 st.u32 [%rd3], %r1;\n"
    "  barrier.cluster.wait;\n"
    "  @!%p1 ld.shared.u32 %r3, [word];\n"
    "  barrier.cluster.arrive;\n"
    "  barrier.cluster.wait;\n"
    "  ret;\n}\n",
    "split.ptx",
)


@pytest.mark.parametrize("detector", ["hb", "gwcp", "tsan", "lockset"])
def test_an_arrive_releases_what_came_before_it_and_not_what_comes_between_it_and_the_wait(detector):
    before = check(SPLIT, grid=2, block=1, args=[1], cluster=2, detector=detector, schedules=1)
    assert before.findings == []
    between = check(SPLIT, grid=2, block=1, args=[2], cluster=2, detector=detector, schedules=1)
    (race,) = between.findings
    assert (race.kind, race.space) == ("data-race", "shared")
    assert sorted(s.instruction for s in race.sites) == ["@!%p1 ld.shared.u32 %r3, [word]", "@%p3 st.u32 [%rd3], %r1"]


def test_the_interval_detector_refuses_cluster_kernels_and_auto_routes_them():
    with pytest.raises(UserError, match="cluster barriers, distributed shared memory"):
        check(SPLIT, grid=2, block=1, args=[1], cluster=2, detector="interval")
    report = check(SPLIT, grid=2, block=1, args=[2], cluster=2, schedules=1)
    assert report.launch["detector"] == "gwcp" and report.launch["cluster"] == [2, 1, 1]
    assert [f.kind for f in report.findings] == ["data-race"]


# getctarank of a word's own address, and of its mapa to rank 1, generic and .shared::cluster.
CTARANK = parse_ptx(
    _HEAD + ".visible .entry ranks(.param .u64 out) {\n"
    "  .reg .b32 %r<8>; .reg .b64 %rd<8>;\n"
    "  .shared .align 4 .u32 word;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r1, %ctaid.x; mul.wide.u32 %rd5, %r1, 12; add.u64 %rd1, %rd1, %rd5;\n"
    "  mov.u64 %rd2, word; cvta.shared.u64 %rd3, %rd2; mapa.u64 %rd4, %rd3, 1;\n"
    "  getctarank.u64 %r2, %rd3; st.global.u32 [%rd1], %r2;\n"
    "  getctarank.u64 %r3, %rd4; st.global.u32 [%rd1+4], %r3;\n"
    "  mov.u32 %r4, word; mapa.shared::cluster.u32 %r5, %r4, 1;\n"
    "  getctarank.shared::cluster.u32 %r6, %r5; st.global.u32 [%rd1+8], %r6;\n"
    "  ret;\n}\n",
    "ctarank.ptx",
)


def test_getctarank_names_the_block_an_address_belongs_to():
    out = np.zeros((4, 3), dtype=np.uint32)
    result = simulate(CTARANK, grid=4, block=1, args=[out], cluster=2)
    assert result.findings == []
    assert out.tolist() == [[0, 1, 1], [1, 1, 1], [0, 1, 1], [1, 1, 1]]


# Thread 0 of every block adds 1 to a global counter with atom.<scope>.
SCOPED_ADD = """.visible .entry count(.param .u64 counter) {{
  .reg .pred %p<2>; .reg .b32 %r<3>; .reg .b64 %rd<2>;
  mov.u32 %r1, %tid.x; setp.ne.u32 %p1, %r1, 0; @%p1 bra DONE;
  ld.param.u64 %rd1, [counter];
  atom.global.{scope}.add.u32 %r2, [%rd1], 1;
DONE:
  ret;
}}
"""


@pytest.mark.parametrize("detector", ["hb", "gwcp", "tsan", "lockset"])
def test_cluster_scope_covers_the_threads_of_the_cluster_and_no_others(detector):
    module = parse_ptx(_HEAD + SCOPED_ADD.format(scope="cluster"), "count.ptx")
    one_cluster = check(module, grid=2, block=32, args=["buf:1"], cluster=2, detector=detector, schedules=1)
    assert one_cluster.findings == []
    two_clusters = check(module, grid=2, block=32, args=["buf:1"], detector=detector, schedules=1)
    (race,) = two_clusters.findings
    assert (race.kind, race.space) == ("data-race", "global")
    assert "insufficient scope" in race.cause and "atom.cluster" in race.cause


# Block 1 writes data and publishes it with st.release.cluster; block 0 spins on ld.acquire.cluster, then reads.
MESSAGE = parse_ptx(
    _HEAD + ".visible .entry message(.param .u64 data, .param .u64 flag) {\n"
    "  .reg .pred %p<3>; .reg .b32 %r<4>; .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [data]; ld.param.u64 %rd2, [flag];\n"
    "  mov.u32 %r1, %ctaid.x; setp.eq.u32 %p1, %r1, 1; @%p1 bra SEND;\n"
    "WAIT:\n"
    "  ld.acquire.cluster.global.u32 %r2, [%rd2]; setp.eq.u32 %p2, %r2, 0; @%p2 bra WAIT;\n"
    "  ld.global.u32 %r3, [%rd1];\n"
    "  ret;\n"
    "SEND:\n"
    "  st.global.u32 [%rd1], 7;\n"
    "  st.release.cluster.global.u32 [%rd2], 1;\n"
    "  ret;\n}\n",
    "message.ptx",
)


@pytest.mark.parametrize("detector", ["hb", "gwcp", "tsan", "lockset"])
def test_release_and_acquire_of_cluster_scope_synchronise_the_blocks_of_a_cluster(detector):
    within = check(MESSAGE, grid=2, block=1, args=["buf:1", "buf:1"], cluster=2, detector=detector, schedules=1)
    assert within.findings == []
    across = check(MESSAGE, grid=2, block=1, args=["buf:1", "buf:1"], detector=detector, schedules=1)
    causes = {f.address.allocation: (f.kind, f.space, f.cause) for f in across.findings}
    assert causes["arg0"] == (  # the data: the release did not cover the reader's cluster
        "data-race",
        "global",
        "insufficient scope of the release `st.release.cluster.global.u32` at PTX line 14",
    )
    assert causes["arg1"][:2] == ("data-race", "global")  # the flag: a store and a load of different clusters
    assert "ld.cluster at PTX line 9 only orders accesses within one cluster" in causes["arg1"][2]


def test_cluster_dimensions_of_zero_in_the_ptx_are_refused():
    module = parse_ptx(_HEAD + ".visible .entry z()\n.reqnctapercluster 0, 1, 1\n{\n  ret;\n}\n", "zero.ptx")
    with pytest.raises(UserError, match="cluster dimensions must be positive"):
        simulate(module, grid=2, block=32)


def test_recording_a_kernel_with_cluster_barriers_is_refused_before_it_runs(tmp_path):
    from click.testing import CliRunner

    from gpurace.cli import cli

    trace = tmp_path / "t.trace"
    launch = ["--arch", "compute_90", "--cluster", "2", "--grid", "4", "--block", "32", "--arg", "buf:4", "--arg", "6"]
    result = CliRunner().invoke(cli, ["check", str(CLUSTERS / "ping_pong.cu"), *launch, "--record", str(trace)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--record cannot record cluster barriers (barrier.cluster) yet" in result.output
    assert not trace.exists()
