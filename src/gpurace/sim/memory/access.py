"""Address resolution: from an instruction's addresses to backing-store indices, canonical addresses and errors.

`Access` is what one memory instruction's addresses resolve to, one entry per
executing thread. It is computed once per instruction and shared by the load,
store or atomic that follows and by the event the engine emits, so bounds,
alignment and canonicalisation are done exactly once per batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.sim.clusters import remote_shared
from gpurace.sim.memory.layout import (
    CANON_LOCAL_TAG,
    CANON_OFFSET_MASK,
    CANON_OWNER_SHIFT,
    CANON_SHARED_TAG,
    CONST_BASE,
    CONST_LIMIT,
    GLOBAL_BASE,
    LOCAL_WINDOW,
    PARAM_BASE,
    SHARED_WINDOW,
    AllocationTable,
    ErrorKind,
    Space,
    space_of,
)


@dataclass
class Access:
    """One instruction's resolved addresses (arrays of length N, one per thread, in batch order).

    - `space`: the Space each access resolved to (never GENERIC);
    - `space_address`: the address within that space (generic address for
      global and const, offset for shared, local and param);
    - `index`: byte offset into that space's backing store (0 where not ok);
    - `canonical`: a launch-wide unique byte address (see the package docstring);
    - `error`: an ErrorKind code per thread, `ok` is `error == OK`;
    - `address`: the address as the instruction computed it (for reports).

    `uniform_space` is the single space of all ok lanes, or None when they mix
    (generic accesses hitting several spaces), letting loads and stores skip
    per-space grouping in the common case.
    """

    space: np.ndarray
    space_address: np.ndarray
    index: np.ndarray
    canonical: np.ndarray
    error: np.ndarray
    address: np.ndarray
    threads: np.ndarray
    blocks: np.ndarray
    size: int
    write: bool
    uniform_space: Space | None

    @property
    def ok(self) -> np.ndarray:
        return self.error == ErrorKind.OK

    @property
    def all_ok(self) -> bool:
        return not self.error.any()

    def __len__(self) -> int:
        return len(self.address)


@dataclass
class SpaceLimits:
    """What resolution needs to know about the memory's current shape."""

    global_table: AllocationTable
    const_table: AllocationTable
    shared_size: int
    shared_stride: int
    local_size: int
    local_stride: int
    param_size: int
    rank_block: np.ndarray  # (nblocks, cluster size): the block of each rank of a block's cluster
    block_base: int = 0  # the launch's id of the stores' block 0, and of their thread 0 (a wave's, `sim.waves`)
    thread_base: int = 0


def _within(offsets: np.ndarray, size: int, limit: int) -> np.ndarray:
    """offset + size <= limit, without wrap-around."""
    if size > limit:
        return np.zeros(offsets.shape, dtype=np.bool_)
    return offsets <= np.uint64(limit - size)


def _resolve_space(
    space: Space, a: np.ndarray, threads: np.ndarray, blocks: np.ndarray, size: int, lim: SpaceLimits, cluster: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(in-bounds, store index, canonical) for accesses at space addresses `a` that all lie in `space`
    (`cluster`: shared offsets may name a block of the cluster, `sim.clusters`)."""
    if space is Space.GLOBAL:
        table = lim.global_table
        one = table.holding_all(a, size)
        if one is not None:
            canon = a - table.shifts[one] if table.shift else a
            return np.ones(len(a), dtype=np.bool_), (canon - np.uint64(GLOBAL_BASE)).view(np.int64), canon
        canon = table.canonical(a)
        return table.contains(a, size), (canon - np.uint64(GLOBAL_BASE)).view(np.int64), canon
    if space is Space.CONST:
        return lim.const_table.contains(a, size), (a - np.uint64(CONST_BASE)).view(np.int64), a
    if space is Space.PARAM:
        return _within(a, size, lim.param_size), a.view(np.int64), a + np.uint64(PARAM_BASE)
    if space is Space.SHARED:
        owner = blocks
        if cluster:
            owner, a, known = remote_shared(a, blocks, lim.rank_block)
            inb = _within(a, size, lim.shared_size) & known
        else:
            inb = _within(a, size, lim.shared_size)
        tag, stride, base = CANON_SHARED_TAG, lim.shared_stride, lim.block_base
    else:
        inb = _within(a, size, lim.local_size)
        owner = threads
        tag, stride, base = CANON_LOCAL_TAG, lim.local_stride, lim.thread_base
    off = a & np.uint64(CANON_OFFSET_MASK)
    index = owner * stride + off.view(np.int64)
    canon = ((owner + base).astype(np.uint64) << np.uint64(CANON_OWNER_SHIFT)) | off | np.uint64(tag)
    return inb, index, canon


def _present(spaces: np.ndarray) -> list[Space]:
    """The distinct spaces in an int8 space-code array (O(N), no sort; the usual single space by its least and
    greatest code, which costs less than counting: `bincount` first widens every code to an intp)."""
    if len(spaces) and (lowest := int(spaces.min())) == int(spaces.max()):
        return [Space(lowest)]
    counts = np.bincount(spaces.view(np.uint8), minlength=len(Space))
    return [Space(int(s)) for s in np.flatnonzero(counts)]


_WINDOW_BASE = {Space.SHARED: SHARED_WINDOW, Space.LOCAL: LOCAL_WINDOW, Space.PARAM: PARAM_BASE}

# Plain ints for the comparisons and fills over lanes below: NumPy compares an array with an IntEnum member
# an order of magnitude slower than with an int.
_CONST, _PARAM = int(Space.CONST), int(Space.PARAM)
_OK, _OUT_OF_BOUNDS, _MISALIGNED, _WRITE_TO_CONST = (
    int(ErrorKind.OK), int(ErrorKind.OUT_OF_BOUNDS), int(ErrorKind.MISALIGNED), int(ErrorKind.WRITE_TO_CONST)
)


def resolve(
    space: Space,
    addrs: np.ndarray,
    threads: np.ndarray,
    blocks: np.ndarray,
    size: int,
    write: bool,
    lim: SpaceLimits,
    owned: bool = False,
) -> Access:
    """Resolve one instruction's addresses; see `Memory.resolve`.

    The common batch (one space, every lane in bounds and aligned) is resolved without a pass that it does not
    need: the space's own arrays are used as they come, and the error codes are filled only where a test fails."""
    if owned and isinstance(addrs, np.ndarray) and addrs.dtype == np.uint64:
        pass  # made for this call: nobody else changes it
    else:
        addrs = np.asarray(addrs).astype(np.uint64)  # a copy: the Access must not change with the caller's registers
    threads = np.asarray(threads, dtype=np.int64)
    blocks = np.asarray(blocks, dtype=np.int64)
    n = len(addrs)
    if size <= 0 or size & (size - 1):
        raise ValueError(f"access size must be a power of two, got {size}")
    space = Space(space)
    cluster = space is not Space.SHARED  # generic and .shared::cluster shared addresses may name another block
    if space is Space.SHARED_CLUSTER:
        space = Space.SHARED
    if space is Space.GENERIC:
        spaces = space_of(addrs)
        a = addrs.copy()
        for s, base in _WINDOW_BASE.items():
            sel = spaces == int(s)
            a[sel] -= np.uint64(base)
    else:
        a = addrs
        spaces = np.full(n, int(space), dtype=np.int8)
        if space is Space.GLOBAL and n and int(addrs.max()) >= CONST_BASE and int(addrs.min()) < CONST_LIMIT:
            # ld.global of a const address reads the const data, as on hardware
            spaces[(addrs >= np.uint64(CONST_BASE)) & (addrs < np.uint64(CONST_LIMIT))] = _CONST

    present = _present(spaces)
    if len(present) == 1:
        inb, index, canonical = _resolve_space(present[0], a, threads, blocks, size, lim, cluster)
    else:
        index = np.zeros(n, dtype=np.int64)
        canonical = np.empty(n, dtype=np.uint64)
        inb = np.empty(n, dtype=np.bool_)
        for s in present:
            sel = np.flatnonzero(spaces == int(s))
            inb[sel], index[sel], canonical[sel] = _resolve_space(s, a[sel], threads[sel], blocks[sel], size, lim, cluster)

    error = np.zeros(n, dtype=np.int8)
    if write:
        read_only = (spaces == _CONST) | (spaces == _PARAM)
        error[read_only] = _WRITE_TO_CONST
    if not inb.all():
        error[~inb] = _OUT_OF_BOUNDS
    if size > 1:
        error[(addrs & np.uint64(size - 1)) != 0] = _MISALIGNED
    if error.any():
        bad = error != _OK
        index = np.where(bad, 0, index)  # a new array: `index` may share memory with the addresses
        ok_spaces = _present(spaces[~bad])
        uniform = ok_spaces[0] if len(ok_spaces) == 1 else None
    else:
        uniform = present[0] if len(present) == 1 else None
    return Access(spaces, a, index, canonical, error, addrs, threads, blocks, size, write, uniform)
