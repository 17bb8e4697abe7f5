"""Forward progress, and the findings the engine reports when a kernel cannot make any.

Correct kernels that rely on independent thread scheduling or on other blocks
(a spin lock inside one warp, a flag set by another block, a grid larger than
a GPU holds) must finish with the right result and no findings. Kernels that
cannot finish (a barrier half the block never reaches, a flag nobody sets) or
that break the rules (a warp sync naming exited lanes, out-of-bounds and
misaligned accesses) must each give one finding of the right kind, at the
right source line, instead of hanging or crashing.
"""

from __future__ import annotations

import numpy as np
from kernel_files import module, run

from gpurace.sim.launch import simulate


def test_spin_lock_taken_by_every_lane_of_a_warp():
    res = run("progress_warp_lock.cu")
    lock, counter = res.args
    assert counter[0] == 32
    assert lock[0] == 0


def test_block_waits_for_a_flag_set_by_another_block():
    res = run("progress_flag_wait.cu")
    data, flag, copy = res.args
    expected = np.cumsum(np.arange(64))
    np.testing.assert_array_equal(data, expected)
    np.testing.assert_array_equal(copy, expected)
    assert flag[0] == 1


def test_grid_larger_than_a_gpu_holds_runs():
    res = run("progress_big_grid.cu")
    assert res.geometry.nblocks == 100_000
    g = np.arange(3_200_000, dtype=np.uint32)
    np.testing.assert_array_equal(res.args[0], g ^ np.uint32(0x5555))
    assert res.stats.thread_instructions >= 3_200_000


def test_barrier_reached_by_half_the_block():
    res = run("deadlock_partial_barrier.cu")  # @expect: the __syncthreads line and the exit
    (finding,) = res.findings
    assert finding.kind == "barrier-divergence"
    assert "exited" in finding.cause
    waiting, gone = finding.sites
    assert waiting.thread[0] < 16 <= gone.thread[0]
    t = np.arange(32)
    np.testing.assert_array_equal(res.args[0], np.where(t < 16, t + 100, t))  # the waiting half went on


def test_flag_nobody_sets_is_a_livelock():
    res = run("livelock_flag.cu", max_steps=10_000)
    (finding,) = res.findings
    assert finding.kind == "livelock"
    assert finding.details["threads"] == 32
    assert res.stats.steps < 10_000  # detected by the no-progress rule, not the step budget


def test_step_budget_ends_a_busy_spin_with_a_livelock():
    """A spin whose registers keep changing is not provably stuck; the step budget ends it."""
    res = run("livelock_counting.cu", max_steps=2_000)
    (finding,) = res.findings
    assert "step budget of 2000" in finding.cause
    assert res.stats.steps == 2_000


def test_warp_sync_against_block_barrier_is_a_deadlock():
    res = run("deadlock_warp_vs_block.cu")  # @expect: deadlock, barrier line then __syncwarp line
    barrier, warp_sync = res.findings[0].sites
    assert barrier.thread[0] >= 16 and warp_sync.thread[0] < 16


def test_barrier_at_two_statements():
    res = run("barrier_two_statements.cu")
    (finding,) = res.findings
    assert finding.count == 2  # once per block
    # the barrier still releases both halves, as hardware does: every store happened
    t = np.arange(64)
    np.testing.assert_array_equal(res.args[0], np.tile(np.where(t % 2 == 0, t, -t), 2))


def test_same_kernel_on_a_random_schedule_is_still_correct():
    for seed in range(3):
        res = simulate(module("progress_warp_lock.cu"), grid=1, block=32, args=["buf:1", "buf:1"], policy="random", seed=seed)
        assert res.findings == []
        assert res.args[1][0] == 32


def test_syncwarp_naming_exited_lanes():
    res = run("syncwarp_exited.cu")
    (finding,) = res.findings
    assert "0xffff0000" in finding.cause
    assert finding.sites[0].lane < 16


def test_store_one_past_the_end():
    res = run("oob_store.cu")
    (finding,) = res.findings
    assert "past the end" in finding.cause
    assert "out (int*)" in finding.cause
    assert finding.sites[0].thread == (32, 0, 0)
    assert finding.space == "global"
    # the in-bounds stores happened, the out-of-bounds one did not
    np.testing.assert_array_equal(res.args[0][0::2], np.arange(32))


def test_misaligned_load():
    res = run("misaligned_load.cu")
    (finding,) = res.findings
    assert "4-byte alignment" in finding.cause
    assert finding.count == 32
