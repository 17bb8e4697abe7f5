"""Thread-block clusters (sm_90+): launch shape, special registers, distributed shared memory, cluster barriers.

**Shape.** A launch with cluster dimensions `(X, Y, Z)` (`--cluster`, or the kernel's `__cluster_dims__`, which
nvcc writes as `.reqnctapercluster X, Y, Z` with `.explicitcluster`) groups its blocks into clusters of X x Y x Z
neighbouring blocks: block `ctaid` belongs to cluster `ctaid / (X, Y, Z)` and has rank
`cluster_ctaid.x + X * (cluster_ctaid.y + Y * cluster_ctaid.z)` in it (`%cluster_ctarank`). The grid must be a
multiple of the cluster and a cluster at most 8 blocks (the portable size; 16 needs an attribute gpurace does not
model), as `cudaLaunchKernelEx` requires, else the launch fails with `cudaErrorInvalidClusterSize`. Without cluster
dimensions every block is a cluster of one, as the PTX ISA says (`%cluster_nctarank` is 1,
`%is_explicit_cluster` false).

**Distributed shared memory.** `mapa` maps the address of a shared variable of the executing block to the same
variable in block `rank` of its cluster. The simulator writes the target into the shared address itself: bits
24..31 of a `.shared::cluster` offset hold `rank + 1` (0: the executing block, so every `.shared::cta` address is
also a `.shared::cluster` address of its own block, as in the ISA), and the low 24 bits the offset in that block
(more than any block's 227 KiB). A generic address of distributed shared memory (what
`cluster_group::map_shared_rank` returns) is that offset in the generic shared window. Resolution
(`memory.access`) turns such an address into the *target* block's shared bytes, so the access is an event on
that block's memory and the detectors compare it with the owner's own accesses. A rank beyond the cluster is
out of bounds. `.shared::cta` accesses do not look at the rank bits (a `.shared::cta` access of another block's
memory is out of bounds).

**Barrier.** `barrier.cluster.arrive` and `barrier.cluster.wait` split a barrier over every thread of the
cluster: a wait returns once every thread of the cluster has arrived on the phase the waiting thread arrived on
(`ClusterBarrier`). An arrive releases (by default, or `.release`) what the thread did before it to every thread
whose wait completes that phase (`.acquire`, the only kind of wait); a `.relaxed` arrive orders nothing,
unless the thread ran a fence of cluster scope or wider before it (`fence.acq_rel.cluster`,
`fence.mbarrier_init.release.cluster`, ...): a fence followed by a strong operation is a release pattern in
the PTX memory model, so the arrive then releases what the thread did before it (what it did between the fence
and the arrive as well: the detectors' arrive has one position). The
detectors see `SyncEvent`s of kinds "cluster-arrive" (the releasing arrivals) and "cluster-wait", both grouped
by phase (`phase_key`).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import SpecialReg
from gpurace.sim.broadcast import same_for_all
from gpurace.sim.events import SyncEvent

MAX_PORTABLE_CLUSTER = 8
"""Blocks per cluster a launch may have without `cudaFuncAttributeNonPortableClusterSizeAllowed`."""

RANK_SHIFT = 24
"""Bit of a shared offset where the target rank + 1 of a distributed shared memory address starts."""
OFFSET_MASK = (1 << RANK_SHIFT) - 1
NO_RANK = 0xFF
"""The rank bits `mapa` writes for a rank no cluster has (resolution then finds the address out of bounds)."""

CLUSTER_WAIT = 6
"""The engine's status of a thread blocked in `barrier.cluster.wait` (beside RUN, BAR, WARP, DONE, PARKED,
and the mbarrier WAITING)."""

_INVALID = "cudaErrorInvalidClusterSize: a kernel launch error has occurred due to cluster misconfiguration"


def launch_cluster(requested: tuple[int, int, int] | None, directives: dict) -> tuple[tuple[int, int, int], bool]:
    """(cluster dimensions, explicit) of a launch: `--cluster` or the kernel's `.reqnctapercluster`; (1,1,1)
    and not explicit for neither. Both, and different, is the error a GPU gives."""
    from gpurace.sim.geometry import format_dims as _fmt  # geometry builds on this module

    compiled = directives.get("reqnctapercluster")
    if compiled is not None:
        compiled = tuple(compiled) + (1,) * (3 - len(compiled))
        if min(compiled) < 1:
            raise UserError(f".reqnctapercluster {_fmt(compiled)}: cluster dimensions must be positive")
    if requested is not None and compiled is not None and tuple(requested) != compiled:
        raise UserError(
            f"--cluster {_fmt(requested)}: the kernel was compiled with __cluster_dims__({_fmt(compiled)}) "
            f"({_INVALID})"
        )
    dims = requested if requested is not None else compiled
    if dims is None:
        return (1, 1, 1), "explicitcluster" in directives
    return (int(dims[0]), int(dims[1]), int(dims[2])), True


def check_cluster(grid: tuple[int, int, int], cluster: tuple[int, int, int]) -> None:
    """A UserError for cluster dimensions a GPU refuses to launch with this grid."""
    from gpurace.sim.geometry import format_dims as _fmt  # geometry builds on this module

    why = cluster_refusal(grid, cluster)
    if why is not None:
        raise UserError(f"--cluster {_fmt(cluster)}: {why} ({_INVALID})")


def cluster_refusal(grid: tuple[int, int, int], cluster: tuple[int, int, int]) -> str | None:
    """Why a GPU refuses to launch this grid with these cluster dimensions (`cudaErrorInvalidClusterSize`), or None."""
    from gpurace.sim.geometry import format_dims as _fmt  # geometry builds on this module

    size = cluster[0] * cluster[1] * cluster[2]
    if size > MAX_PORTABLE_CLUSTER:
        return (
            f"{size} blocks per cluster exceed the portable maximum of {MAX_PORTABLE_CLUSTER} (larger clusters need "
            "cudaFuncAttributeNonPortableClusterSizeAllowed, which gpurace does not model)"
        )
    for g, c, axis in zip(grid, cluster, "xyz"):
        if g % c:
            return f"the grid ({_fmt(grid)}) is not a multiple of the cluster in {axis}"
    return None


def cluster_layout(grid: tuple[int, int, int], cluster: tuple[int, int, int], ctaid: np.ndarray) -> np.ndarray:
    """`rank_block[b, r]`: the linear id of the block of rank r in the cluster of block b, for every block
    (`ctaid`: (3, nblocks) block indices)."""
    cx, cy, cz = cluster
    size = cx * cy * cz
    base = (ctaid // np.array(cluster, dtype=np.int64)[:, None]) * np.array(cluster, dtype=np.int64)[:, None]
    r = np.arange(size, dtype=np.int64)
    off = np.stack([r % cx, (r // cx) % cy, r // (cx * cy)])
    pos = base[:, :, None] + off[:, None, :]  # (3, nblocks, size)
    return pos[0] + grid[0] * (pos[1] + grid[1] * pos[2])


def special_registers(geo, n: int) -> dict[tuple[str, str | None], np.ndarray]:
    """The cluster special registers of every thread of `geo` (`ThreadState`'s table); without clusters
    (one block each) they are the block's own registers and constants, which cost no memory per thread."""
    sp: dict[tuple[str, str | None], np.ndarray] = {}
    cluster = np.array(geo.cluster, dtype=np.uint32)[:, None]
    alone = geo.cluster_size == 1
    in_cluster = None if alone else geo.ctaid % cluster
    for i, c in enumerate("xyz"):
        sp[("cluster_ctaid", c)] = same_for_all(n, 0, np.uint32) if alone else in_cluster[i].astype(np.uint32)
        sp[("cluster_nctaid", c)] = same_for_all(n, geo.cluster[i], np.uint32)
        sp[("clusterid", c)] = geo.ctaid[i] if alone else (geo.ctaid[i] // cluster[i]).astype(np.uint32)
        sp[("nclusterid", c)] = same_for_all(n, geo.grid[i] // geo.cluster[i], np.uint32)
    cx, cy = geo.cluster[0], geo.cluster[1]
    rank = None if alone else (in_cluster[0] + cx * (in_cluster[1] + cy * in_cluster[2])).astype(np.uint32)
    sp[("cluster_ctarank", None)] = same_for_all(n, 0, np.uint32) if alone else rank
    sp[("cluster_nctarank", None)] = same_for_all(n, geo.cluster_size, np.uint32)
    sp[("is_explicit_cluster", None)] = same_for_all(n, geo.explicit_cluster, np.bool_)
    return sp


# ---------------------------------------------------------------------- distributed shared memory


def map_shared(offsets: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """`mapa` on shared offsets: the same offset in block `rank` of the cluster (ranks past any cluster get
    `NO_RANK`, which no cluster has)."""
    tag = np.where(rank < NO_RANK - 1, rank + 1, NO_RANK).astype(np.uint64)
    return (offsets & np.uint64(OFFSET_MASK)) | (tag << np.uint64(RANK_SHIFT))


def remote_shared(offsets: np.ndarray, blocks: np.ndarray, rank_block: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(owner block, offset in it, rank known) of `.shared::cluster` offsets accessed by threads of `blocks`."""
    tag = (offsets >> np.uint64(RANK_SHIFT)).astype(np.int64)
    remote = tag != 0
    if not remote.any():
        return blocks, offsets, np.ones(len(offsets), dtype=np.bool_)
    size = rank_block.shape[1]
    rank = tag - 1
    known = ~remote | (rank < size)
    owner = blocks.copy()
    sel = remote & known
    owner[sel] = rank_block[blocks[sel], rank[sel]]
    return owner, offsets & np.uint64(OFFSET_MASK), known


# ---------------------------------------------------------------------- barrier


def phase_key(cluster: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The group of a cluster barrier phase in `SyncEvent`s: cluster id * 2**32 + phase number."""
    return (cluster.astype(np.int64) << np.int64(32)) + phase.astype(np.int64)


class ClusterBarrier:
    """The split-phase barrier of every cluster (`barrier.cluster.arrive`/`wait`) and the threads waiting at it.

    Each thread counts its arrivals; its k-th arrival is on phase k of its cluster, and its wait after it
    returns once all threads of the cluster have made k arrivals."""

    def __init__(self, eng) -> None:
        self.eng = eng
        self.members = eng.geo.cluster_size * eng.geo.block_size
        self.count: dict[int, int] = {}  # phase key -> arrivals on that phase so far

    # Per-thread state, made on first use: most kernels have no cluster barrier, and a launch of a million
    # threads would pay for these arrays before its first instruction.

    @cached_property
    def cluster_of(self) -> np.ndarray:
        """The cluster of each thread."""
        geo = self.eng.geo
        return geo.block_cluster[geo.block_of]

    @cached_property
    def arrivals(self) -> np.ndarray:
        """The arrivals each thread has made."""
        return np.zeros(self.eng.geo.nthreads, dtype=np.int64)

    @cached_property
    def arrive_pc(self) -> np.ndarray:
        """Where each thread's last arrival was (-1: none awaiting its wait)."""
        return np.full(self.eng.geo.nthreads, -1, dtype=np.int64)

    @cached_property
    def fenced(self) -> np.ndarray:
        """Whether each thread ran a fence of cluster scope or wider."""
        return np.zeros(self.eng.geo.nthreads, dtype=np.bool_)

    def fence(self, idx: np.ndarray) -> None:
        """Threads `idx` ran a fence of cluster scope or wider: their later relaxed arrives release."""
        self.fenced[idx] = True

    def arrive(self, pc: int, idx: np.ndarray, relaxed: bool) -> None:
        """Threads `idx` arrive on their next phase (the detectors see the arrivals that release: all but the
        relaxed ones of threads that ran no fence of cluster scope before)."""
        eng = self.eng
        again = idx[self.arrivals[idx] > 0]
        if len(again):
            # an arrive must follow the wait of the thread's previous arrival (the ISA makes it undefined)
            unwaited = again[self.arrive_pc[again] >= 0]
            if len(unwaited):
                g = int(unwaited[0])
                eng.report(
                    "barrier-divergence",
                    "barrier.cluster.arrive again before barrier.cluster.wait for the previous arrival",
                    [eng.site(pc, g, "cluster barrier"), eng.site(int(self.arrive_pc[g]), g, "cluster barrier")],
                    count=len(unwaited),
                )
        keys = phase_key(self.cluster_of[idx], self.arrivals[idx])
        ukeys, counts = np.unique(keys, return_counts=True)
        for k, c in zip(ukeys.tolist(), counts.tolist()):
            self.count[k] = self.count.get(k, 0) + c
        self.arrivals[idx] += 1
        self.arrive_pc[idx] = pc
        release = self.fenced[idx] if relaxed else np.ones(len(idx), dtype=np.bool_)
        if release.any():
            rel = idx[release]
            eng.emit(SyncEvent(eng.next_seq(), "cluster-arrive", rel, keys[release], np.full(len(rel), pc, dtype=np.int64)))
        blocked = np.flatnonzero(eng.status == CLUSTER_WAIT)
        waiting = blocked[np.isin(self._wait_keys(blocked), ukeys)]
        if len(waiting):
            self._release(waiting)

    def _wait_keys(self, idx: np.ndarray) -> np.ndarray:
        return phase_key(self.cluster_of[idx], self.arrivals[idx] - 1)

    def _complete(self, keys: np.ndarray) -> np.ndarray:
        return np.array([self.count.get(k, 0) >= self.members for k in keys.tolist()], dtype=np.bool_)

    def wait(self, pc: int, idx: np.ndarray) -> np.ndarray:
        """Threads `idx` wait for the phase of their last arrival; returns which of them may go on now (the
        others block until the phase completes)."""
        eng = self.eng
        never = self.arrivals[idx] == 0
        if never.any():
            g = int(idx[np.argmax(never)])
            eng.report(
                "barrier-divergence",
                "barrier.cluster.wait without an earlier barrier.cluster.arrive (it waits for no phase)",
                [eng.site(pc, g, "cluster barrier")],
                count=int(never.sum()),
            )
        keys = self._wait_keys(idx)
        go = never | self._complete(keys)
        passed = idx[go & ~never]
        if len(passed):
            self._acquire(passed)
        stay = idx[~go]
        eng.status[stay] = CLUSTER_WAIT
        return go

    def _acquire(self, idx: np.ndarray) -> None:
        eng = self.eng
        self.arrive_pc[idx] = -1
        eng.emit(SyncEvent(eng.next_seq(), "cluster-wait", idx, self._wait_keys(idx), eng.pc[idx].copy()))

    def _release(self, blocked: np.ndarray) -> None:
        """Blocked waiters whose phase just completed go on past their wait."""
        done = blocked[self._complete(self._wait_keys(blocked))]
        if not len(done):
            return
        eng = self.eng
        self._acquire(done)
        eng.resume(done)
        eng.pc[done] += 1
        eng.progress = True

    def report_stuck(self) -> bool:
        """Nothing can run: a deadlock finding for threads blocked at a cluster wait (True if there were any)."""
        eng = self.eng
        blocked = np.flatnonzero(eng.status == CLUSTER_WAIT)
        if not len(blocked):
            return False
        g = int(blocked[0])
        key = int(self._wait_keys(blocked[:1])[0])
        arrived = self.count.get(key, 0)
        eng.report(
            "deadlock",
            f"barrier.cluster.wait waits for all {self.members} threads of the cluster to arrive, "
            f"but only {arrived} can (the others exited or wait elsewhere)",
            [eng.site(int(eng.pc[g]), g, "cluster barrier")],
            count=len(blocked),
        )
        return True


# ---------------------------------------------------------------------- instructions


def decode_mapa(dec):
    """`mapa.shared::cluster.u32/u64 d, a, rank` (shared addresses) and `mapa.u32/u64 d, a, rank` (generic).

    A rank outside the cluster, or a generic address outside shared memory, is an `out-of-bounds` finding at
    the `mapa`; the address it gives then resolves to no memory, so an access through it is one too."""
    from gpurace.sim.memory.layout import SHARED_WINDOW, WINDOW_SIZE

    dst, src, rank_op = dec.operands(3)
    t = dec.last_type()
    if t not in ("u32", "u64", "b32", "b64"):
        raise UserError(f"`{dec.ins.text}`: mapa takes .u32 or .u64 addresses")
    generic = "shared::cluster" not in dec.ins.modifiers
    read = dec.reader(src, t)
    rank_of = dec.reader(rank_op, "u32")
    write = dec.writer(dst, t)
    eng, pc, nxt = dec.eng, dec.pc, dec.pc + 1
    size = eng.geo.cluster_size
    dt = np.dtype(np.uint32 if t.endswith("32") else np.uint64)

    def report(idx, bad, cause):
        g = int(idx[np.argmax(bad)])
        eng.report("out-of-bounds", cause, [eng.site(pc, g, "mapa")], space="shared", count=int(bad.sum()))

    def mapa(idx):
        a = read(idx).astype(np.uint64)
        rank = rank_of(idx).astype(np.int64)
        outside = rank >= size
        if outside.any():
            r = int(rank[np.argmax(outside)])
            report(idx, outside, f"mapa names rank {r} of a cluster of {size} block{'s' if size > 1 else ''}")
            rank = np.where(outside, NO_RANK, rank)
        if generic:
            shared = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
            if not shared.all():
                report(idx, ~shared, "mapa of a generic address that is not in shared memory")
            mapped = map_shared(a - np.uint64(SHARED_WINDOW), rank) + np.uint64(SHARED_WINDOW)
            out = np.where(shared, mapped, np.uint64(0))
        else:
            out = map_shared(a, rank)
        write(idx, out.astype(dt))
        return nxt

    return mapa


def decode_barrier(dec):
    """`barrier.cluster.arrive{.release|.relaxed}{.aligned}` and `barrier.cluster.wait{.acquire}{.aligned}`."""
    mods = dec.ins.modifiers
    dec.operands(0)
    arrive, wait = "arrive" in mods, "wait" in mods
    if arrive == wait:
        raise UserError(f"`{dec.ins.text}`: barrier.cluster needs exactly one of .arrive and .wait")
    if (arrive and "acquire" in mods) or (wait and ({"release", "relaxed"} & set(mods))):
        raise UserError(f"`{dec.ins.text}`: .arrive takes .release or .relaxed, .wait takes .acquire")
    eng, pc, nxt = dec.eng, dec.pc, dec.pc + 1
    barrier = eng.cluster_barrier
    if arrive:
        relaxed = "relaxed" in mods

        def cluster_arrive(idx):
            barrier.arrive(pc, idx, relaxed)
            return nxt

        return cluster_arrive

    def cluster_wait(idx):
        go = barrier.wait(pc, idx)
        if go.all():
            return nxt
        eng.pc[idx[go]] = nxt
        return None

    return cluster_wait


def decode_getctarank(dec):
    """`getctarank{.shared::cluster}.u32 d, a`: the rank of the block of the cluster whose shared memory the
    (`.shared::cluster` or generic) address `a` names."""
    from gpurace.sim.memory.layout import SHARED_WINDOW, WINDOW_SIZE

    dst, src = dec.operands(2)
    t = dec.ins.types[-1] if dec.ins.types else None
    if t not in ("u32", "u64"):
        raise UserError(f"`{dec.ins.text}`: getctarank takes a .u32 or .u64 address")
    generic = "shared::cluster" not in dec.ins.modifiers
    read = dec.reader(src, t)
    write = dec.writer(dst, "u32")
    eng, pc, nxt = dec.eng, dec.pc, dec.pc + 1
    rank = SpecialReg("cluster_ctarank")

    def getctarank(idx):
        a = read(idx).astype(np.uint64)
        if generic:
            shared = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
            if not shared.all():
                g = int(idx[np.argmax(~shared)])
                cause = "getctarank of a generic address that is not in shared memory"
                eng.report("out-of-bounds", cause, [eng.site(pc, g, "getctarank")], space="shared", count=int((~shared).sum()))
            a = np.where(shared, a - np.uint64(SHARED_WINDOW), np.uint64(0))
        tag = (a >> np.uint64(RANK_SHIFT)).astype(np.int64)
        write(idx, np.where(tag != 0, tag - 1, eng.state.special(rank, idx)).astype(np.uint32))
        return nxt

    return getctarank
