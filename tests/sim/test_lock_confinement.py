"""The default check stops after schedule 0 when no other lock order can race (`detect.lock_confinement`,
`sim.order_paths`), and keeps every schedule when one could: an access outside the lock, a value read inside
that decides a branch, a counter of spins that forms an address, a lock whose scope does not cover its takers,
shared memory, two locks held at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.check import check
from gpurace.cli import cli
from gpurace.frontend.load import load_module
from gpurace.sim.launch import select_kernel
from gpurace.sim.order_paths import order_independent_paths
from gpurace.sim.program import build_program

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
STOPPED = {"count": 1, "seed": 0, "planned": 3, "ended_by": "locks"}


def lines(finding) -> tuple:
    return tuple(sorted(s.loc.line for s in finding.sites))


def independent(tmp_path: Path, source: str) -> bool:
    path = tmp_path / "k.cu"
    path.write_text(source)
    module = load_module(str(path))
    return order_independent_paths(build_program(module, select_kernel(module, None)))


def test_a_launch_whose_accesses_all_sit_inside_one_lock_runs_schedule_0_only():
    path = KERNELS / "schedules" / "lock_counter_inside.cu"
    default = check(path, grid=4, block=32, args=["buf:1", "buf:4"])
    assert default.findings == []
    assert default.launch["schedules"] == STOPPED
    assert [r["policy"] for r in default.stats["schedules"]] == ["min-pc"]
    asked = check(path, grid=4, block=32, args=["buf:1", "buf:4"], schedules=3)
    assert asked.findings == [] and asked.launch["schedules"] == {"count": 3, "seed": 0}
    text = CliRunner().invoke(cli, ["check", str(path), "--grid", "4", "--block", "32", "--arg", "buf:1", "--arg", "buf:4"])
    assert text.exit_code == 0
    assert (
        "1 of 3 schedules per launch (seed 0; every access inside a critical section of one lock, on a path no lock "
        "order changes, ended the exploration)"
    ) in " ".join(text.output.split())


def test_a_value_read_inside_that_decides_a_branch_keeps_the_other_orders():
    """Under min-pc every access sits inside the lock; block 1's write after its release happens only when it
    wins, which reverse shows."""
    report = check(KERNELS / "schedules" / "lock_first_taker_writes_outside.cu", grid=2, block=1, args=["buf:1"])
    found = sorted((f.kind, f.space, lines(f), f.schedule["policy"]) for f in report.findings)
    assert found == [("data-race", "global", (17, 22), "reverse"), ("data-race", "global", (18, 22), "reverse")]
    assert "ended_by" not in report.launch["schedules"]


@pytest.mark.parametrize(
    "path, launch, expected",
    [
        # a write after the release: the flip schedule's race
        ("schedules/lock_winner_read_then_write.cu", dict(grid=2, block=1, args=["buf:1"]), [("data-race", "global", (22, 26))]),
        # a block-scoped lock taken by two blocks orders nothing between them
        (
            "predictable/cta_lock_across_blocks.cu",
            dict(grid=2, block=32, args=["buf:1", "buf:1"]),
            [("data-race", "global", (15, 15)), ("data-race", "global", (15, 23)), ("data-race", "global", (30, 30))],
        ),
    ],
)
def test_a_launch_that_breaks_a_condition_keeps_its_schedules(path, launch, expected):
    report = check(KERNELS / path, **launch)
    assert sorted((f.kind, f.space, lines(f)) for f in report.findings) == expected
    assert "ended_by" not in report.launch["schedules"]
    assert len(report.stats["schedules"]) > 1


LOCKED = r"""
__device__ int lock_word = 0;
__global__ void k(int* out, int* other)
{
    %s
    while (atomicCAS(&lock_word, 0, 1) != 0) { %s }
    __threadfence();
    %s
    __threadfence();
    atomicExch(&lock_word, 0);
}
"""


def test_a_counter_of_spins_that_forms_an_address_depends_on_the_order(tmp_path):
    assert not independent(tmp_path, LOCKED % ("int tries = 0;", "tries++;", "out[tries] = 1;"))


def test_a_value_read_that_forms_an_address_depends_on_the_order(tmp_path):
    assert not independent(tmp_path, LOCKED % ("", "", "other[out[0]] = 1;"))


def test_addresses_computed_inside_the_section_from_the_thread_index_do_not(tmp_path):
    assert independent(tmp_path, LOCKED % ("", "", "out[blockIdx.x] = out[0] + 1;"))


def test_two_locks_held_at_once_keep_the_schedules(tmp_path):
    path = tmp_path / "nested.cu"
    path.write_text(
        r"""
__device__ int outer = 0, inner = 0;
__global__ void k(int* total)
{
    if (threadIdx.x == 0) {
        while (atomicCAS(&outer, 0, 1) != 0) {}
        __threadfence();
        while (atomicCAS(&inner, 0, 1) != 0) {}
        __threadfence();
        *total = *total + 1;
        __threadfence();
        atomicExch(&inner, 0);
        __threadfence();
        atomicExch(&outer, 0);
    }
}
"""
    )
    report = check(path, grid=4, block=32, args=["buf:1"])
    assert report.findings == []
    assert "ended_by" not in report.launch["schedules"]


def test_shared_memory_keeps_the_schedules(tmp_path):
    """The first read of a shared word is judged by order (`detect.initcheck`)."""
    path = tmp_path / "shared.cu"
    path.write_text(
        r"""
__global__ void k(int* total)
{
    __shared__ int lock_word;
    __shared__ int seen;
    if (threadIdx.x == 0) lock_word = seen = 0;
    __syncthreads();
    if (threadIdx.x % 32 == 0) {
        while (atomicCAS_block(&lock_word, 0, 1) != 0) {}
        __threadfence_block();
        seen = seen + 1;
        __threadfence_block();
        atomicExch_block(&lock_word, 0);
    }
}
"""
    )
    report = check(path, grid=1, block=64, args=["buf:1"])
    assert report.findings == []
    assert "ended_by" not in report.launch["schedules"] and len(report.stats["schedules"]) > 1


def test_a_block_wide_count_of_predicates_depends_on_what_they_read(tmp_path):
    """`__syncthreads_count` of a value read inside the section: the count is a value from memory."""
    assert not independent(tmp_path, LOCKED % ("", "", "if (__syncthreads_count(out[0] > 0) > 1) other[0] = 1;"))


def test_a_section_released_without_the_release_pattern_keeps_the_schedules(tmp_path):
    """Block 0 computes first, so under min-pc it takes the lock last; it releases without a fence before the
    store, which orders nothing after it. In this run nothing follows it, but in an order where block 0 goes
    first, the next section races with its count: the section's release breaks the conditions."""
    path = tmp_path / "unfenced.cu"
    path.write_text(
        r"""
__device__ int lock_word = 0;
__global__ void k(int* total)
{
    if (blockIdx.x != 0) {
        while (atomicCAS(&lock_word, 0, 1) != 0) {}
        __threadfence();
        *total = *total + 1;
        __threadfence();
        atomicExch(&lock_word, 0);
    } else {
        int add = 0;
        for (unsigned int i = 0; i < 64 * blockDim.x; i++)
            add = add * 3 + i;
        while (atomicCAS(&lock_word, 0, 1) != 0) {}
        __threadfence();
        *total = *total + add;
        atomicExch(&lock_word, 0);
    }
}
"""
    )
    report = check(path, grid=3, block=1, args=["buf:1"])
    assert "ended_by" not in report.launch["schedules"] and len(report.stats["schedules"]) == 4
