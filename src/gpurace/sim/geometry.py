"""Launch geometry: where each simulated thread sits in the grid.

Every thread of the launch gets a global linear id `g` (blocks in linear order,
threads within a block in linear x-fastest order). All per-thread state in the
simulator is an array indexed by `g`, so the geometry is computed once as
arrays: block index, thread index, warp and lane, and the `%tid`/`%ctaid`
components the special registers read; and the launch's clusters of blocks
(`sim.clusters`), one block each unless the launch has cluster dimensions.
A launch larger than `--resident-threads` runs in waves of blocks
(`sim.waves`): each wave has a geometry of its own (`Geometry.wave`), whose
`g` counts from the wave's first thread (`thread_base` in the launch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from gpurace.errors import UserError
from gpurace.limits import Limits
from gpurace.sim.clusters import MAX_PORTABLE_CLUSTER, check_cluster, cluster_layout

WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)


_DIM_RE = re.compile(r"^[0-9]+$")
_MAX_DIM_DIGITS = 18
"""Longer decimal numbers are far past every CUDA limit; they are refused before conversion."""


def parse_dims(text: str, what: str) -> tuple[int, int, int]:
    """Parse `X`, `X,Y` or `X,Y,Z` (also `[X,Y]` as GPUVerify headers write it, or `XxY`) into three positive ints.

    Only decimal digits are dimensions: anything else (signs, hex, Unicode
    digits, a number too long to be any launch) is a UserError naming `--what`.
    """
    body = text.strip().strip("[]()")
    parts = [p.strip() for p in body.replace("x", ",").split(",")]
    if not 1 <= len(parts) <= 3 or not all(parts):
        raise UserError(f"--{what}: expected X[,Y[,Z]], got {text!r}")
    if not all(_DIM_RE.match(p) for p in parts):
        raise UserError(f"--{what}: expected positive decimal integers, got {text!r}")
    if any(len(p) > _MAX_DIM_DIGITS for p in parts):
        raise UserError(f"--{what}: {text[:40]!r} is far past what CUDA allows ({_limits_text(what)})")
    dims = [int(p) for p in parts]
    if any(d <= 0 for d in dims):
        raise UserError(f"--{what}: dimensions must be positive, got {text!r}")
    while len(dims) < 3:
        dims.append(1)
    return (dims[0], dims[1], dims[2])


def _limits_text(what: str) -> str:
    if what == "cluster":
        return f"at most {MAX_PORTABLE_CLUSTER} blocks"
    dims = MAX_GRID_DIMS if what == "grid" else MAX_BLOCK_DIMS
    return f"at most {format_dims(dims, ' x ')}" + ("" if what == "grid" else f" and {MAX_THREADS_PER_BLOCK} threads")


def format_dims(dims: tuple[int, int, int], sep: str = ",") -> str:
    """`(256, 1, 1)` -> `256,1,1`, as `--grid`/`--block` take it."""
    return sep.join(str(d) for d in dims)


def check_dims(grid: tuple[int, int, int], block: tuple[int, int, int]) -> None:
    """A UserError naming --grid or --block when the launch is one CUDA itself would refuse."""
    for what, dims, limits in (("block", block, MAX_BLOCK_DIMS), ("grid", grid, MAX_GRID_DIMS)):
        for d, limit, axis in zip(dims, limits, "xyz"):
            if d > limit:
                raise UserError(f"--{what} {format_dims(dims)}: {axis} dimension {d:,} exceeds the CUDA limit {limit:,}")
    bsize = block[0] * block[1] * block[2]
    if bsize > MAX_THREADS_PER_BLOCK:
        raise UserError(
            f"--block {format_dims(block)}: {bsize:,} threads per block exceed the CUDA limit {MAX_THREADS_PER_BLOCK}"
        )


def check_launch(grid: tuple[int, int, int], block: tuple[int, int, int], limits: Limits) -> int:
    """The thread count of a launch, after checking it against CUDA's limits and gpurace's `--max-threads`.

    Called before anything per thread is allocated, since a launch CUDA
    allows (2**31-1 blocks of 1024 threads) can still be far more threads
    than a simulation can hold.
    """
    check_dims(grid, block)
    nthreads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
    limits.check_threads(nthreads, f"--grid {format_dims(grid)} --block {format_dims(block)}")
    return nthreads


@dataclass(frozen=True)
class Geometry:
    """Grid and block dimensions, and the per-thread coordinate arrays derived from them.

    Each array is computed the first time it is read, on its own: a launch that runs in waves (`sim.waves`)
    needs few of the whole launch's arrays (the detectors read `block_of`, some `warp_of` and `lane`), and all
    of them together would cost 52 bytes per thread, 870 MB for a launch of 16M threads, at every launch.
    """

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] = (1, 1, 1)  # blocks per cluster (`sim.clusters`)
    explicit_cluster: bool = False  # launched with cluster dimensions (`%is_explicit_cluster`)
    rank_block: np.ndarray | None = field(default=None, repr=False, compare=False)  # (nblocks, cluster size)

    first_block: int = 0  # a wave's first block (`sim.waves`): block and warp ids below are relative to it
    wave_blocks: int = 0  # the blocks of a wave; 0 for the whole launch

    @staticmethod
    def create(
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        cluster: tuple[int, int, int] = (1, 1, 1),
        explicit_cluster: bool = False,
    ) -> Geometry:
        """The geometry of a launch; `cluster` groups its blocks into clusters (`sim.clusters`)."""
        check_dims(grid, block)
        check_cluster(grid, cluster)
        nblocks = grid[0] * grid[1] * grid[2]
        block_ctaid = _coords(np.arange(nblocks, dtype=np.int64), grid)
        rank_block = cluster_layout(grid, cluster, block_ctaid)
        return Geometry(grid, block, cluster, explicit_cluster, rank_block)

    def wave(self, first_block: int, nblocks: int) -> Geometry:
        """The geometry of a wave of this launch (`sim.waves`): blocks `first_block` .. `first_block + nblocks - 1`.

        Its arrays are indexed by thread within the wave and its block and warp ids count from the wave's first
        block, so that every per-thread, per-warp and per-block array of the engine is the wave's size; `%tid`
        and `%ctaid` (and reports) keep the launch's coordinates. Only launches without clusters run in waves.
        """
        if self.cluster_size != 1:
            raise ValueError("a launch with clusters does not run in waves")
        rank_block = np.arange(nblocks, dtype=np.int64)[:, None]
        return Geometry(
            self.grid, self.block, explicit_cluster=self.explicit_cluster, rank_block=rank_block,
            first_block=first_block, wave_blocks=nblocks,
        )  # fmt: skip

    # Per thread, computed on first use: each block's values repeated (`_per_block`) or one block's values tiled
    # (`_in_block`), never by division over every thread.

    @cached_property
    def tid(self) -> np.ndarray:
        """(3, n) thread index within block."""
        return np.tile(_coords(np.arange(self.block_size, dtype=np.int64), self.block).astype(np.uint32), self.nblocks)

    @cached_property
    def ctaid(self) -> np.ndarray:
        """(3, n) block index (the launch's)."""
        blocks = np.arange(self.first_block, self.first_block + self.nblocks, dtype=np.int64)
        return np.repeat(_coords(blocks, self.grid).astype(np.uint32), self.block_size, axis=1)

    @cached_property
    def block_of(self) -> np.ndarray:
        """(n,) linear block id."""
        return np.repeat(np.arange(self.nblocks, dtype=np.int64), self.block_size)

    @cached_property
    def tid_linear(self) -> np.ndarray:
        """(n,) linear thread id within block."""
        return np.tile(np.arange(self.block_size, dtype=np.int64), self.nblocks)

    @cached_property
    def warp_of(self) -> np.ndarray:
        """(n,) warp id."""
        return self.block_of * self.warps_per_block + np.tile(np.arange(self.block_size, dtype=np.int64) // WARP_SIZE, self.nblocks)

    @cached_property
    def lane(self) -> np.ndarray:
        """(n,) lane id."""
        return np.tile(np.arange(self.block_size, dtype=np.uint32) % WARP_SIZE, self.nblocks)

    @property
    def block_size(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def nblocks(self) -> int:
        """Blocks of the launch, or of the wave."""
        return self.wave_blocks or self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def thread_base(self) -> int:
        """The launch's id of this geometry's thread 0 (0 but in a later wave)."""
        return self.first_block * self.block_size

    @property
    def warp_base(self) -> int:
        """The launch's id of this geometry's warp 0."""
        return self.first_block * self.warps_per_block

    @property
    def cluster_size(self) -> int:
        return self.cluster[0] * self.cluster[1] * self.cluster[2]

    @property
    def block_cluster(self) -> np.ndarray:
        """(nblocks,) the cluster of each block, as the lowest linear block id in it."""
        return self.rank_block[:, 0]

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
        b, t = divmod(int(g), self.block_size)
        return _dims_of(t, self.block), _dims_of(self.first_block + b, self.grid)

    def thread_label(self, g: int) -> str:
        """`block (x,y,z) thread (x,y,z)` of global thread `g`, for messages."""
        thread, block = self.thread_coords(g)
        return f"block ({format_dims(block)}) thread ({format_dims(thread)})"

    def first_thread_of_warp(self, warp: np.ndarray) -> np.ndarray:
        """The id of lane 0 of each warp id (both in this geometry: a wave's count from its first thread)."""
        b = warp // self.warps_per_block
        w = warp % self.warps_per_block
        return b * self.block_size + w * WARP_SIZE


def _coords(linear: np.ndarray, dims: tuple[int, int, int]) -> np.ndarray:
    """(3, n) x-fastest coordinates in `dims` of the linear ids `linear`."""
    return np.stack([linear % dims[0], (linear // dims[0]) % dims[1], linear // (dims[0] * dims[1])])


def _dims_of(linear: int, dims: tuple[int, int, int]) -> tuple[int, int, int]:
    """The x-fastest coordinates in `dims` of one linear id."""
    return linear % dims[0], (linear // dims[0]) % dims[1], linear // (dims[0] * dims[1])
