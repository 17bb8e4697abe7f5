"""Parked spinners: a spinning thread sleeps until a byte it read changes, and wakes to run in full.

A lock taken in turn by every block leader must cost a few iterations per
waiter (O(blocks)), not one per waiter per round (O(blocks^2)); waiters must
still take the lock one at a time, in the order the policy gives; a flag wait
must be woken by another block's store, and the woken threads' accesses must
reach the detectors; a spin that nothing can end must still be a livelock at
its source line.
"""

from __future__ import annotations

import numpy as np
from kernel_files import module, run

from gpurace.check import check
from gpurace.sim.launch import simulate


def lock_per_leader(blocks: int):
    res = simulate(module("lock_per_block.cu"), grid=blocks, block=32, args=["buf:1", "buf:2"])
    assert res.findings == []
    lock, counters = res.args
    assert lock[0] == 0
    assert counters[0] == blocks and counters[1] == blocks * (blocks - 1) // 2
    return res.stats


def test_lock_taken_by_every_block_leader_costs_linear_in_blocks():
    small, large = lock_per_leader(64), lock_per_leader(512)
    # one holder per round, and each round's steps do not grow with the waiters
    assert small.rounds == 63 and large.rounds == 511
    assert large.steps <= 8.5 * small.steps
    # Without parking, every waiter runs an iteration every round: about 4 * 512^2 / 2 = 524,288 more
    # thread-instructions at 512 blocks, and 8x blocks would cost 64x. Parked, 8x blocks cost 8x.
    assert large.thread_instructions <= 8.5 * small.thread_instructions
    assert large.thread_instructions < 150_000


def test_lock_waiters_wake_in_the_policys_order():
    orders = {}
    for policy in ("min-pc", "reverse"):
        args = ["buf:1", "buf:1", "buf:8"]
        res = simulate(module("parking_lock_order.cu"), grid=8, block=32, args=args, policy=policy)
        assert res.findings == []
        orders[policy] = res.args[2].tolist()
    # min-pc lets the lowest thread win every contest, reverse the highest warp: so the lock goes round in
    # block order, or in reverse block order
    assert orders == {"min-pc": list(range(8)), "reverse": list(range(7, -1, -1))}


def test_parked_runs_are_reproducible():
    for policy in ("min-pc", "random"):
        args = ["buf:1", "buf:1", "buf:8"]
        kernel = module("parking_lock_order.cu")
        runs = [simulate(kernel, grid=8, block=32, args=args, policy=policy, seed=5) for _ in range(2)]
        assert runs[0].stats == runs[1].stats
        np.testing.assert_array_equal(runs[0].args[2], runs[1].args[2])
        assert sorted(runs[0].args[2].tolist()) == list(range(8))  # each leader took the lock once


def test_flag_wait_woken_by_another_blocks_store():
    res = run("parking_flag_publish.cu")
    data, flag, copies = res.args
    expected = np.arange(32) * 5050
    np.testing.assert_array_equal(data, expected)
    np.testing.assert_array_equal(copies, np.tile(expected, 15))
    assert flag[0] == 1
    # block 0's loop takes 100 rounds; the 15 waiting leaders park instead of spinning through them
    # (3 instructions an iteration: 4,500 thread-instructions), and all wake within a round of each other
    assert res.stats.rounds <= 102
    assert res.stats.thread_instructions < 35_000


def test_woken_spinners_accesses_reach_the_detectors():
    report = check(module("parking_flag_unfenced.cu"), grid=4, block=32, args=["buf:32", "buf:1", "buf:128"])
    (finding,) = report.findings
    assert finding.kind == "data-race" and finding.space == "global"
    write, read = finding.sites
    assert (write.loc.line, write.op) == (23, "write")
    assert (read.loc.line, read.op) == (31, "read")
    assert write.block == (0, 0, 0) and read.block != (0, 0, 0)


def test_spin_nothing_can_end_is_a_livelock_at_its_line():
    """Block 0 parks on a flag while block 1 works (rounds with progress), then block 1 exits: nothing left
    can wake the parked threads."""
    res = run("parking_wait_after_work.cu", max_steps=100_000)  # @expect: livelock at the spin
    (finding,) = res.findings
    assert finding.kind == "livelock"
    assert "spin without making progress" in finding.cause
    assert finding.details["threads"] == 32
    (site,) = finding.sites
    assert site.loc.line == 12 and site.block == (0, 0, 0)
    assert res.stats.steps < 100_000  # found when block 1 exited, not by the step budget
    # block 1's loop: 200 rounds, about 45,000 thread-instructions; block 0's 32 spinners, parked, do not run
    # their 3 instructions in each round (19,200 more)
    assert res.stats.rounds >= 199
    assert res.stats.thread_instructions < 50_000
