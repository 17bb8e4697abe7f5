"""The async proxy (sm_90): generic-proxy writes to shared memory that an async-proxy read must not see unfenced.

The PTX memory model gives each kind of access a *proxy*: ordinary loads and stores go through the generic
proxy, bulk copies (`cp.async.bulk`, `cp.async.bulk.tensor`) through the async proxy. Accesses of one memory
location through two proxies are ordered only by a proxy fence: a thread's generic writes become visible to
later async-proxy operations once that thread has executed `fence.proxy.async` (`fence.proxy.async.shared::cta`,
`.shared::cluster` for shared memory; `.global` covers global memory only). A barrier then orders other threads'
fenced writes before the bulk copy, as it orders any write before a read. The completion of a bulk copy through
its mbarrier or `cp.async.bulk.wait_group` makes the copy's writes visible to the generic proxy (no fence needed
on that side).

Writes of `cp.async` (not bulk) are generic-proxy writes of the issuing thread, made when the copy completes
(`sim.async_copies`): CUTLASS and Triton fence them (after the `cp.async.wait_group`) before a `wgmma` reads them.

A fence covers more than the fencing thread's own writes: the PTX memory model asks for a proxy fence *on
the causality path* from the generic write to the async-proxy read, so a consumer that fences after a barrier
covers the writes the barrier ordered before it (Triton's pattern: `cp.async.wait_group`, `bar.sync`, then
`fence.proxy.async` and `wgmma` in every thread). The simulator approximates that path by CTA barriers: each
write is stamped with a clock, a barrier release records the clock in its threads, and a thread's fence
covers, for its own later async-proxy reads, the writes stamped before its last barrier release (plus,
for every reader, its own writes).

What the simulator checks: an async-proxy read of shared memory (a bulk store to global memory, a copy from
shared to distributed shared memory, a `wgmma.mma_async` operand) that reads a byte whose last generic write has no `fence.proxy.async`
covering shared memory after it in the writing thread is a `data-race` with the cause below, between the
write's line and the copy's line. That the write is ordered before the copy at all (a barrier between them) is
the detectors' business: the copy's read is an ordinary read event of the issuing thread. Not checked: generic
writes to global memory that a later bulk load in the same launch reads (`fence.proxy.async.global`), and
async-proxy writes over bytes a generic access used before (a write-after-read across proxies).

The log holds, for kernels that have such a copy only (one boolean test per store otherwise), one row per
shared-memory write not fenced yet; a `fence.proxy.async` drops its threads' rows.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.findings import ERROR, Finding, describe_address, make_site

UNFENCED = (
    "generic-proxy write not fenced before async-proxy read: no fence.proxy.async lies between this write and the "
    "async-proxy read (a bulk copy, a wgmma operand) that reads it (by the writing thread after the write, or by "
    "the reading thread after a barrier that follows the write), so the read may see the bytes as they were before"
)


def reads_shared_async(program) -> bool:
    """Whether the program has a bulk copy whose source is shared memory (its second state space), or a
    `wgmma.mma_async` (whose descriptors name shared memory the async proxy reads)."""
    for ins in program.instructions:
        if ins.opcode == "wgmma" and "mma_async" in ins.modifiers:
            return True
        if ins.opcode == "cp" and "bulk" in ins.modifiers and "prefetch" not in ins.modifiers:
            spaces = [m for m in ins.modifiers if m in ("global", "shared", "shared::cta", "shared::cluster")]
            if spaces[1:2] and spaces[1] != "global":
                return True
    return False


def last_writes(thread: np.ndarray, start: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The rows of a write log that are the last write of their (thread, start, size), in log order."""
    key = np.stack([thread.astype(np.uint64), start, size], axis=1)[::-1]
    _, last = np.unique(key, axis=0, return_index=True)
    return np.sort(len(thread) - 1 - last)


class ProxyFences:
    """The unfenced generic writes to shared memory of one launch (module docstring)."""

    def __init__(self, eng, active: bool) -> None:
        self.eng = eng
        self.active = active  # the kernel has a bulk copy that reads shared memory
        self.thread = np.zeros(0, dtype=np.int64)
        self.pc = np.zeros(0, dtype=np.int64)
        self.start = np.zeros(0, dtype=np.uint64)
        self.size = np.zeros(0, dtype=np.uint64)
        self.stamp = np.zeros(0, dtype=np.int64)  # the clock at the write
        self.clock = 0
        n = eng.geo.nthreads if active else 0
        self.synced = np.zeros(n, dtype=np.int64)  # per thread: the clock at its last barrier release
        self.covered = np.zeros(n, dtype=np.int64)  # per thread: its last fence covers writes stamped before this
        self._compact_at = 4096

    def wrote(self, pc: int, threads: np.ndarray, canon: np.ndarray, size: int) -> None:
        """Generic writes of `size` bytes by `threads` at shared canonical addresses `canon`."""
        self.thread = np.concatenate((self.thread, threads.astype(np.int64)))
        self.pc = np.concatenate((self.pc, np.full(len(threads), pc, dtype=np.int64)))
        self.start = np.concatenate((self.start, canon.astype(np.uint64)))
        self.size = np.concatenate((self.size, np.full(len(threads), size, dtype=np.uint64)))
        self.stamp = np.concatenate((self.stamp, np.full(len(threads), self.clock, dtype=np.int64)))
        self.clock += 1
        if len(self.thread) > self._compact_at:
            self._compact()

    def _compact(self) -> None:
        """Keep the last write of each (thread, start, size): a loop that writes the same bytes again adds no rows."""
        self._keep(last_writes(self.thread, self.start, self.size))
        self._compact_at = max(4096, 2 * len(self.thread))

    def _keep(self, rows: np.ndarray) -> None:
        self.thread, self.pc, self.start = self.thread[rows], self.pc[rows], self.start[rows]
        self.size, self.stamp = self.size[rows], self.stamp[rows]

    def fence(self, threads: np.ndarray) -> None:
        """`fence.proxy.async` (for shared memory) by `threads`: their writes so far are fenced, and so are, for
        their own later reads, the writes their last barrier ordered before them."""
        self.covered[threads] = self.synced[threads]
        if len(self.thread):
            self._keep(~np.isin(self.thread, threads))

    def barrier(self, threads: np.ndarray) -> None:
        """A CTA barrier released `threads`: the writes logged so far are ordered before their next instructions."""
        self.synced[threads] = self.clock

    def check_read(self, pc: int, threads: np.ndarray, canon: np.ndarray, size: int) -> None:
        """An async-proxy read of `size` bytes by `threads` at shared canonical addresses `canon`: one finding per
        unfenced writing line it overlaps (the count is the number of (write, read) pairs)."""
        if not len(self.thread) or not len(threads):
            return
        order = np.argsort(self.start, kind="stable")
        starts, ends = self.start[order], self.start[order] + self.size[order]
        first = canon.astype(np.uint64)
        # writes overlapping [first, first + size): start < first + size and end > first; writes are at most
        # 16 bytes, so candidates begin within 16 bytes before `first`
        lo = np.searchsorted(starts, first - np.minimum(first, np.uint64(16)), side="left")
        hi = np.searchsorted(starts, first + np.uint64(size), side="left")
        counts = hi - lo
        if not counts.any():
            return
        read_lane = np.repeat(np.arange(len(first)), counts)
        cand = np.repeat(lo, counts) + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        hit = ends[cand] > first[read_lane]
        read_lane, write_row = read_lane[hit], order[cand[hit]]
        unfenced = self.stamp[write_row] >= self.covered[threads[read_lane]]
        read_lane, write_row = read_lane[unfenced], write_row[unfenced]
        if not len(read_lane):
            return
        eng = self.eng
        write_pcs, firsts, counts = np.unique(self.pc[write_row], return_index=True, return_counts=True)
        for wpc, f, count in zip(write_pcs.tolist(), firsts.tolist(), counts.tolist()):
            row, lane = int(write_row[f]), int(read_lane[f])
            sites = (
                make_site(eng.program, eng.geo, wpc, int(self.thread[row]), "write"),
                make_site(eng.program, eng.geo, pc, int(threads[lane]), "async-proxy read"),
            )
            byte = max(int(self.start[row]), int(first[lane]))
            eng.findings.add(Finding("data-race", ERROR, UNFENCED, sites, space="shared", address=describe_address(eng.mem, byte)), count)
