"""Cooperative launches (`cudaLaunchCooperativeKernel`, `check --cooperative`): the grid workspace and co-residency.

Cooperative groups reach the grid-wide barrier through memory the driver
gives each cooperative launch, the *grid workspace*: `cg::this_grid()` reads
its address from the special registers `%envreg1` (high 32 bits) and
`%envreg2` (low 32 bits) (`details::get_grid_workspace` in CUDA's
`cooperative_groups/details/driver_abi.h`), and it is

    struct grid_workspace { unsigned int wsSize; unsigned int barrier; };

`grid.sync()` is a `bar.sync`, then one thread per block adds to `barrier`
with `atom.add.release.gpu` (block 0 adds `0x80000000 - (blocks - 1)`, the
others 1, so the top bit flips once every block has arrived) and spins on
`ld.acquire.gpu` until it sees the flip, then another `bar.sync`
(`details::sync_grids` in `cooperative_groups/details/sync.h`). The
simulator needs nothing special for it: the release/acquire pair and the
barriers order every block's accesses before the sync with every block's
accesses after it, as the race detectors already know.

A launch that is not cooperative has no workspace: the registers read 0,
`grid_group::is_valid()` is false and `grid.sync()` executes `trap`, as on
a GPU. `trap_hint` says so in the finding.

All blocks of a cooperative launch must be resident on the device at once.
`max_resident_blocks` is the occupancy of the virtual device of `gpurace
exec` (the same calculation as the shim's
`cudaOccupancyMaxActiveBlocksPerMultiprocessor`, times its
`multiProcessorCount`); a larger grid fails with
`cudaErrorCooperativeLaunchTooLarge` under `exec` and is refused by `check`.
"""

from __future__ import annotations

import struct

from gpurace.frontend.ptx.ir import SpecialReg
from gpurace.sim.geometry import MAX_THREADS_PER_BLOCK, WARP_SIZE
from gpurace.sim.memory.layout import reserved_shared_bytes, shared_bytes_per_sm
from gpurace.sim.program import Program

WORKSPACE_NAME = "the cooperative grid workspace"
WORKSPACE_BYTES = 8  # sizeof(grid_workspace)
WORKSPACE_ALIGN = 256

# The virtual device (`runtime/shim/cudart.c`: SM_COUNT, MAX_THREADS_PER_SM, MAX_BLOCKS_PER_SM; its shared memory
# per multiprocessor is `layout.shared_bytes_per_sm`).
SM_COUNT = 40
MAX_THREADS_PER_SM = 1024
MAX_BLOCKS_PER_SM = 16

_ENVREGS = ("envreg1", "envreg2")


def workspace_bytes() -> bytes:
    """A fresh workspace: `wsSize` its own size, `barrier` 0 (no block has arrived)."""
    return struct.pack("<II", WORKSPACE_BYTES, 0)


def envreg_values(workspace: int) -> dict[str, int]:
    """What `%envreg1`/`%envreg2` hold in a launch whose grid workspace is at `workspace` (0: none)."""
    return {"envreg1": (workspace >> 32) & 0xFFFFFFFF, "envreg2": workspace & 0xFFFFFFFF}


def reads_grid_workspace(program: Program) -> bool:
    """Whether the kernel reads the grid workspace's address (uses `cg::this_grid()`)."""
    return any(isinstance(op, SpecialReg) and op.name in _ENVREGS for ins in program.instructions for op in ins.operands)


def trap_hint(cooperative: bool, program: Program) -> str:
    """What to add to a `trap` finding: why a kernel that reads the grid workspace outside a cooperative launch
    traps (`grid_group::sync()` of an invalid group does); nothing otherwise."""
    if cooperative or not reads_grid_workspace(program):
        return ""
    return (
        "; the kernel uses cooperative_groups::this_grid(), whose grid is valid only in a cooperative launch "
        "(grid.sync() traps otherwise): launch it with cudaLaunchCooperativeKernel, or check it with --cooperative"
    )


def max_resident_blocks(block_threads: int, shared_per_block: int, capability: int) -> int:
    """How many blocks of `block_threads` threads and `shared_per_block` bytes of shared memory (static and
    dynamic) the virtual device of compute `capability` holds at once."""
    if block_threads > MAX_THREADS_PER_BLOCK:
        return 0
    warps = -(-block_threads // WARP_SIZE)
    per_sm = min(MAX_THREADS_PER_SM // (warps * WARP_SIZE), MAX_BLOCKS_PER_SM)
    occupied = shared_per_block + reserved_shared_bytes(capability)
    if occupied:
        per_sm = min(per_sm, shared_bytes_per_sm(capability) // occupied)
    return per_sm * SM_COUNT


def too_large(grid, block, shared_per_block: int, capability: int) -> str | None:
    """Why a cooperative launch of `grid` x `block` cannot have all its blocks resident on the virtual device of
    compute `capability`, or None when it can."""
    blocks = grid[0] * grid[1] * grid[2]
    threads = block[0] * block[1] * block[2]
    limit = max_resident_blocks(threads, shared_per_block, capability)
    if blocks <= limit:
        return None
    return (
        f"a cooperative launch of {blocks} blocks is more than can be resident at once: at most {limit} blocks of "
        f"{threads} threads and {shared_per_block} bytes of shared memory ({limit // SM_COUNT} per multiprocessor "
        f"on the simulated device's {SM_COUNT} multiprocessors)"
    )
