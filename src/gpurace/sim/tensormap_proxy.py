"""The tensormap proxy (sm_90): generic-proxy writes to a tensor map that a TMA copy must not use unfenced.

A TMA copy (`cp.async.bulk.tensor`, `sim.tensor_copies`) reads its tensor map through the *tensormap proxy*. A
kernel that edits a map in global or shared memory (`tensormap.replace`, or ordinary stores of a copy of one)
writes it through the generic proxy, and the PTX memory model orders the two only through a pair of proxy
fences: the writer's release (`fence.proxy.tensormap::generic.release.SCOPE`, or the release that
`tensormap.cp_fenceproxy` makes after its copy) after the write, and the consumer's acquire of the map's bytes
(`fence.proxy.tensormap::generic.acquire.SCOPE [addr], 128`) before the copy, each with a scope that includes
the other thread. The PTX ISA asks for both even when one thread writes and copies.

What the simulator checks: a TMA copy by thread U through a map at address M whose bytes have a generic write W
(by thread T) is a `data-race` with the cause below, between W's line and the copy's line, unless T released its
writes after W and U acquired M after that release, both fences' scopes including both threads (`.cta`: one
block, `.cluster`: one cluster, `.gpu` and `.sys`: the grid). That W is ordered before the copy at all (a
barrier, a release-acquire pattern between T and U) is the detectors' business: the copy's read of the map is an
ordinary read event of U (`sim.tensor_copies`). Maps passed as kernel parameters (`__grid_constant__`) cannot
be written by the kernel and need nothing.

The log is kept for kernels that edit maps only (those with a `tensormap` instruction or a
`fence.proxy.tensormap`; one boolean test per store otherwise): one row per generic write to global or shared
memory (the last of each thread to the same bytes), with its release, if any. Not checked: a map that a kernel
without such an instruction writes with ordinary stores and then uses.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.findings import ERROR, Finding, describe_address, make_site
from gpurace.sim.proxy_fences import last_writes

UNFENCED = (
    "generic-proxy write of a tensor map not fenced before a TMA copy uses it: the copy reads the map through the "
    "tensormap proxy, which sees the write only after a fence.proxy.tensormap::generic.release (or "
    "tensormap.cp_fenceproxy) by the writing thread and then a fence.proxy.tensormap::generic.acquire of the map "
    "by the copying thread, with scopes that include both threads"
)
SCOPES = {"cta": 0, "cluster": 1, "gpu": 2, "sys": 2}
"""Fence scopes by breadth; `.gpu` and `.sys` both include every thread of the grid."""
_NONE = -1
_MAP_SIZE = 128


def edits_tensor_maps(program) -> bool:
    """Whether the program has a `tensormap.*` instruction or a `fence.proxy.tensormap`."""
    return any(
        ins.opcode == "tensormap" or (ins.opcode == "fence" and "tensormap::generic" in ins.modifiers)
        for ins in program.instructions
    )


class TensormapProxy:
    """The generic writes of one launch and the tensormap proxy fences after them (module docstring)."""

    def __init__(self, eng, active: bool) -> None:
        self.eng = eng
        self.active = active
        self.thread = np.zeros(0, dtype=np.int64)
        self.pc = np.zeros(0, dtype=np.int64)
        self.start = np.zeros(0, dtype=np.uint64)
        self.size = np.zeros(0, dtype=np.uint64)
        self.released = np.zeros(0, dtype=np.int64)  # the clock at the writer's release after the write, or _NONE
        self.release_scope = np.zeros(0, dtype=np.int64)
        # acquires: (thread, map's first byte, size, clock, scope), one row per fence
        self.acq_thread = np.zeros(0, dtype=np.int64)
        self.acq_start = np.zeros(0, dtype=np.uint64)
        self.acq_size = np.zeros(0, dtype=np.uint64)
        self.acq_clock = np.zeros(0, dtype=np.int64)
        self.acq_scope = np.zeros(0, dtype=np.int64)
        self.clock = 0
        self._compact_at = 4096

    def wrote(self, pc: int, threads: np.ndarray, canon: np.ndarray, size: int) -> None:
        """Generic writes of `size` bytes by `threads` at canonical addresses `canon` (global or shared)."""
        n = len(threads)
        self.thread = np.concatenate((self.thread, threads.astype(np.int64)))
        self.pc = np.concatenate((self.pc, np.full(n, pc, dtype=np.int64)))
        self.start = np.concatenate((self.start, canon.astype(np.uint64)))
        self.size = np.concatenate((self.size, np.full(n, size, dtype=np.uint64)))
        self.released = np.concatenate((self.released, np.full(n, _NONE, dtype=np.int64)))
        self.release_scope = np.concatenate((self.release_scope, np.zeros(n, dtype=np.int64)))
        if len(self.thread) > self._compact_at:
            self._compact()

    def _compact(self) -> None:
        """Keep the last write of each (thread, start, size): a loop that writes the same bytes again adds no rows."""
        rows = last_writes(self.thread, self.start, self.size)
        self.thread, self.pc, self.start = self.thread[rows], self.pc[rows], self.start[rows]
        self.size, self.released, self.release_scope = self.size[rows], self.released[rows], self.release_scope[rows]
        self._compact_at = max(4096, 2 * len(self.thread))

    def release(self, threads: np.ndarray, scope: str) -> None:
        """`fence.proxy.tensormap::generic.release.SCOPE` by `threads`: their writes so far not yet released are,
        now. A later release does not widen an earlier one's scope for the writes it released."""
        rows = (self.released == _NONE) & np.isin(self.thread, threads)
        self.released[rows] = self.clock
        self.release_scope[rows] = SCOPES[scope]
        self.clock += 1

    def acquire(self, threads: np.ndarray, canon: np.ndarray, size: int, scope: str) -> None:
        """`fence.proxy.tensormap::generic.acquire.SCOPE [addr], size` by `threads`, at canonical addresses `canon`."""
        n = len(threads)
        self.acq_thread = np.concatenate((self.acq_thread, threads.astype(np.int64)))
        self.acq_start = np.concatenate((self.acq_start, canon.astype(np.uint64)))
        self.acq_size = np.concatenate((self.acq_size, np.full(n, size, dtype=np.uint64)))
        self.acq_clock = np.concatenate((self.acq_clock, np.full(n, self.clock, dtype=np.int64)))
        self.acq_scope = np.concatenate((self.acq_scope, np.full(n, SCOPES[scope], dtype=np.int64)))
        self.clock += 1

    def _reaches(self, scope: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether fences of `scope` include threads `b` as seen from threads `a`."""
        geo = self.eng.geo
        block_a, block_b = geo.block_of[a], geo.block_of[b]
        same_cluster = geo.block_cluster[block_a] == geo.block_cluster[block_b]
        return (scope >= SCOPES["gpu"]) | ((scope == SCOPES["cluster"]) & same_cluster) | (block_a == block_b)

    def check_use(self, pc: int, threads: np.ndarray, canon: np.ndarray, shared: np.ndarray) -> None:
        """A TMA copy by `threads` through the maps at canonical addresses `canon` (in shared memory where `shared`,
        global memory elsewhere): one finding per unfenced writing line (the count is the number of (write, copy)
        pairs)."""
        if not len(self.thread) or not len(threads):
            return
        first = canon.astype(np.uint64)
        # (copying lane, write row) pairs whose bytes overlap; maps are few, so all pairs are compared
        overlap = (self.start[None, :] < first[:, None] + np.uint64(_MAP_SIZE)) & (
            self.start[None, :] + self.size[None, :] > first[:, None]
        )
        lane, row = np.nonzero(overlap)
        if not len(lane):
            return
        reader, writer = threads[lane], self.thread[row]
        released = (self.released[row] != _NONE) & self._reaches(self.release_scope[row], writer, reader)
        # an acquire by the reader, after the release, covering the map's bytes, whose scope includes the writer
        acquired = np.zeros(len(lane), dtype=np.bool_)
        if len(self.acq_thread):
            covers = (
                (self.acq_thread[None, :] == reader[:, None])
                & (self.acq_start[None, :] <= first[lane][:, None])
                & (self.acq_start[None, :] + self.acq_size[None, :] >= first[lane][:, None] + np.uint64(_MAP_SIZE))
                & (self.acq_clock[None, :] > self.released[row][:, None])
            )
            pair, acq = np.nonzero(covers)
            ok = self._reaches(self.acq_scope[acq], reader[pair], writer[pair])
            acquired[pair[ok]] = True
        bad = ~(released & acquired)
        if not bad.any():
            return
        lane, row = lane[bad], row[bad]
        eng = self.eng
        write_pcs, firsts, counts = np.unique(self.pc[row], return_index=True, return_counts=True)
        for wpc, f, count in zip(write_pcs.tolist(), firsts.tolist(), counts.tolist()):
            r, u = int(row[f]), int(lane[f])
            sites = (
                make_site(eng.program, eng.geo, wpc, int(self.thread[r]), "write"),
                make_site(eng.program, eng.geo, pc, int(threads[u]), "tensormap-proxy read"),
            )
            byte = max(int(self.start[r]), int(first[u]))
            space = "shared" if shared[u] else "global"
            eng.findings.add(Finding("data-race", ERROR, UNFENCED, sites, space=space, address=describe_address(eng.mem, byte)), count)
