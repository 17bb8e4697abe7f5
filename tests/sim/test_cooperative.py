"""Cooperative launches in the simulator: the grid workspace cooperative groups find through %envreg1/%envreg2,
co-residency, and what `check --cooperative` refuses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.check import check
from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.cooperative import WORKSPACE_NAME, max_resident_blocks
from gpurace.sim.launch import simulate

COOPERATIVE = Path(__file__).resolve().parents[1] / "kernels" / "cooperative"

# Stores the grid workspace's address as cooperative groups read it (%envreg1 high, %envreg2 low), then the
# workspace's first word (`wsSize`) when there is one.
PROBE = parse_ptx(
    ".version 8.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry _Z5probePy(.param .u64 out) {\n"
    "  .reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r1, %envreg1; mov.u32 %r2, %envreg2;\n"
    "  cvt.u64.u32 %rd2, %r1; cvt.u64.u32 %rd3, %r2;\n"
    "  shl.b64 %rd2, %rd2, 32; or.b64 %rd4, %rd2, %rd3;\n"
    "  st.global.u64 [%rd1], %rd4;\n"
    "  setp.eq.u64 %p1, %rd4, 0;\n"
    "  @%p1 bra DONE;\n"
    "  ld.global.u32 %r3, [%rd4];\n"
    "  cvt.u64.u32 %rd5, %r3;\n"
    "  st.global.u64 [%rd1+8], %rd5;\n"
    "DONE:\n"
    "  ret;\n}\n",
    "probe.ptx",
)


def test_a_cooperative_launch_finds_its_workspace_through_envreg1_and_envreg2():
    out = np.zeros(2, dtype=np.uint64)
    result = simulate(PROBE, grid=1, block=1, args=[out], cooperative=True)
    workspace = result.memory.nearest(int(out[0])).allocation
    assert (workspace.name, workspace.base, workspace.size) == (WORKSPACE_NAME, int(out[0]), 8)
    assert out[1] == 8  # wsSize: the workspace's own size
    assert result.findings == []


def test_a_launch_that_is_not_cooperative_has_no_workspace():
    out = np.full(2, 7, dtype=np.uint64)
    result = simulate(PROBE, grid=1, block=1, args=[out])
    assert out.tolist() == [0, 7]
    assert all(a.name != WORKSPACE_NAME for a in result.memory.global_allocations())


@pytest.mark.parametrize(
    "threads, shared, blocks",
    [(256, 0, 160), (1024, 0, 40), (1000, 0, 40), (32, 0, 640), (256, 40 << 10, 40), (128, 20 << 10, 120), (2048, 0, 0)],
)
def test_resident_blocks_are_the_occupancy_per_multiprocessor_times_40(threads, shared, blocks):
    assert max_resident_blocks(threads, shared, 75) == blocks


@pytest.mark.parametrize("capability, blocks", [(75, 0), (80, 40), (86, 0), (90, 80)])
def test_shared_memory_per_multiprocessor_grows_with_the_compute_capability(capability, blocks):
    # 110 KiB blocks: none fit in compute 7.5's and 8.6's multiprocessors (64 and 100 KiB), one in 8.0's
    # (164 KiB), two in 9.0's (228 KiB)
    assert max_resident_blocks(128, 110 << 10, capability) == blocks


def test_check_refuses_a_cooperative_grid_the_device_cannot_hold_naming_the_limit():
    with pytest.raises(UserError, match=r"--cooperative: a cooperative launch of 161 blocks .* at most 160 blocks of 256 threads"):
        check(COOPERATIVE / "grid_sync.cu", grid=161, block=256, args=["buf:41216", "buf:41216", 41216], cooperative=True)


# 40 KiB of static shared memory: one block per multiprocessor, whatever its size.
BIG_SHARED = parse_ptx(
    ".version 8.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry _Z3bigv() {\n"
    "  .shared .align 4 .b8 buf[40960];\n"
    "  .reg .b32 %r<2>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  st.shared.u32 [buf], %r1;\n"
    "  ret;\n}\n",
    "big.ptx",
)


def test_static_and_dynamic_shared_memory_count_against_residency():
    assert simulate(BIG_SHARED, grid=40, block=32, cooperative=True).geometry.nblocks == 40
    with pytest.raises(UserError, match="at most 40 blocks of 32 threads and 40960 bytes of shared memory"):
        simulate(BIG_SHARED, grid=41, block=32, cooperative=True)
    with pytest.raises(UserError, match="at most 40 blocks of 32 threads and 45056 bytes of shared memory"):
        simulate(BIG_SHARED, grid=41, block=32, shared_bytes=4096, cooperative=True)


def test_grid_sync_without_a_cooperative_launch_traps_and_says_why():
    report = check(COOPERATIVE / "grid_sync.cu", grid=2, block=32, args=["buf:64", "buf:64", 64], cooperative=False)
    (finding,) = report.findings
    assert finding.kind == "trap"
    assert "valid only in a cooperative launch" in finding.cause and "--cooperative" in finding.cause


def test_check_launches_cooperatively_by_default_exactly_the_kernels_that_use_this_grid():
    grid_sync = check(COOPERATIVE / "grid_sync.cu", grid=2, block=32, args=["buf:64", "buf:64", 64])
    assert grid_sync.findings == [] and grid_sync.launch["cooperative"] is True
    block_only = check(COOPERATIVE / "groups.cu", grid=2, block=32)
    assert "cooperative" not in block_only.launch


def test_cooperative_cannot_be_combined_with_search():
    result = CliRunner().invoke(cli, ["check", str(COOPERATIVE / "grid_sync.cu"), "--cooperative", "--search", "--grid", "2", "--block", "32"])
    assert result.exit_code == 2
    assert "--cooperative cannot be combined with --search" in result.stderr


@pytest.mark.parametrize("detector", ["hb", "gwcp", "tsan", "lockset"])
def test_every_detector_sees_grid_sync_as_synchronisation(detector):
    """The last block to arrive reads its own arrival (an acquire of a read-modify-write that continued the
    other blocks' releases): it must synchronise with them all, and the race without grid.sync() stays."""
    args = ["buf:256", "buf:256", 256]
    clean = check(COOPERATIVE / "grid_sync.cu", grid=4, block=64, args=args, cooperative=True, detector=detector)
    assert clean.findings == []
    (race,) = check(COOPERATIVE / "grid_sync_missing.cu", grid=4, block=64, args=args, cooperative=True, detector=detector).findings
    assert (race.kind, race.space, sorted(s.loc.line for s in race.sites)) == ("data-race", "global", [14, 15])
