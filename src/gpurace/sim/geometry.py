"""Launch geometry: where each simulated thread sits in the grid.

Every thread of the launch gets a global linear id `g` (blocks in linear order,
threads within a block in linear x-fastest order). All per-thread state in the
simulator is an array indexed by `g`, so the geometry is computed once as
arrays: block index, thread index, warp and lane, and the `%tid`/`%ctaid`
components the special registers read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpurace.errors import UserError

WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)


def parse_dims(text: str, what: str) -> tuple[int, int, int]:
    """Parse `X`, `X,Y` or `X,Y,Z` (also `[X,Y]` as GPUVerify headers write it) into three positive ints."""
    body = text.strip().strip("[]()")
    parts = [p.strip() for p in body.replace("x", ",").split(",") if p.strip()]
    if not 1 <= len(parts) <= 3:
        raise UserError(f"--{what}: expected X[,Y[,Z]], got {text!r}")
    try:
        dims = [int(p, 0) for p in parts]
    except ValueError:
        raise UserError(f"--{what}: expected positive integers, got {text!r}") from None
    if any(d <= 0 for d in dims):
        raise UserError(f"--{what}: dimensions must be positive, got {text!r}")
    while len(dims) < 3:
        dims.append(1)
    return (dims[0], dims[1], dims[2])


@dataclass(frozen=True)
class Geometry:
    """Grid and block dimensions plus the per-thread coordinate arrays derived from them."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    tid: np.ndarray = field(repr=False, compare=False)  # (3, n) thread index within block
    ctaid: np.ndarray = field(repr=False, compare=False)  # (3, n) block index
    block_of: np.ndarray = field(repr=False, compare=False)  # (n,) linear block id
    tid_linear: np.ndarray = field(repr=False, compare=False)  # (n,) linear thread id within block
    warp_of: np.ndarray = field(repr=False, compare=False)  # (n,) global warp id
    lane: np.ndarray = field(repr=False, compare=False)  # (n,) lane id

    @staticmethod
    def create(grid: tuple[int, int, int], block: tuple[int, int, int]) -> Geometry:
        for d, limit, axis in zip(block, MAX_BLOCK_DIMS, "xyz"):
            if d > limit:
                raise UserError(f"--block: {axis} dimension {d} exceeds the CUDA limit {limit}")
        for d, limit, axis in zip(grid, MAX_GRID_DIMS, "xyz"):
            if d > limit:
                raise UserError(f"--grid: {axis} dimension {d} exceeds the CUDA limit {limit}")
        bsize = block[0] * block[1] * block[2]
        if bsize > MAX_THREADS_PER_BLOCK:
            raise UserError(f"--block: {bsize} threads per block exceed the CUDA limit {MAX_THREADS_PER_BLOCK}")
        nblocks = grid[0] * grid[1] * grid[2]
        n = nblocks * bsize
        g = np.arange(n, dtype=np.int64)
        block_of = g // bsize
        tlin = g % bsize
        tid = np.stack([tlin % block[0], (tlin // block[0]) % block[1], tlin // (block[0] * block[1])]).astype(np.uint32)
        ctaid = np.stack(
            [block_of % grid[0], (block_of // grid[0]) % grid[1], block_of // (grid[0] * grid[1])]
        ).astype(np.uint32)
        warps_per_block = -(-bsize // WARP_SIZE)
        warp_of = block_of * warps_per_block + tlin // WARP_SIZE
        lane = (tlin % WARP_SIZE).astype(np.uint32)
        return Geometry(grid, block, tid, ctaid, block_of, tlin, warp_of, lane)

    @property
    def block_size(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def nblocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def nthreads(self) -> int:
        return self.nblocks * self.block_size

    @property
    def warps_per_block(self) -> int:
        return -(-self.block_size // WARP_SIZE)

    @property
    def nwarps(self) -> int:
        return self.nblocks * self.warps_per_block

    def thread_coords(self, g: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """(threadIdx, blockIdx) of global thread `g`, for reports."""
        return (
            (int(self.tid[0, g]), int(self.tid[1, g]), int(self.tid[2, g])),
            (int(self.ctaid[0, g]), int(self.ctaid[1, g]), int(self.ctaid[2, g])),
        )

    def first_thread_of_warp(self, warp: np.ndarray) -> np.ndarray:
        """Global id of lane 0 of each global warp id."""
        b = warp // self.warps_per_block
        w = warp % self.warps_per_block
        return b * self.block_size + w * WARP_SIZE
