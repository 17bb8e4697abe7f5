"""Which instructions' buffered accesses can overlap at all, from the address bounds of their batches.

A close of the barrier-interval detector sorts its accesses to find the
overlapping ones (`segments.shared_by_threads`, `split_segments`, the items of
`IntervalDetector._check_other_blocks`): a few hundred nanoseconds per access,
which made most of a checked launch's time in kernels that read an input
many times and write little (Rodinia's streamcluster reads 512 floats per
thread, per launch, of an array no thread writes; srad's kernels read an
image and write other arrays). Two accesses overlap only if the address
ranges of their instructions do, and an instruction never overlaps itself
when each of its batches is ascending with no overlap and the batches lie
apart from each other. Both are decided per instruction from three numbers
per batch, kept as batches arrive (`bounds`), so a close can leave out,
before any sort, the accesses of instructions that meet no instruction they
could conflict with. The filter only ever drops accesses that take part in
no conflicting pair, so findings and their counts do not change.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.segments import run_bounds


def bounds(addrs: np.ndarray, size: int) -> tuple[int, int, bool]:
    """(lowest byte, end of the highest access, whether the accesses are pairwise apart) of one batch: apart when
    the addresses ascend by at least `size` each (a store of a thread's own element, a coalesced read)."""
    lo, hi = int(addrs.min()), int(addrs.max()) + size
    step_up = addrs[1:] > addrs[:-1]
    apart = bool(step_up.all() and (addrs[1:] - addrs[:-1] >= np.uint64(size)).all())
    return lo, hi, apart


class PcRanges:
    """The address range of each instruction's buffered accesses, and whether they are pairwise apart."""

    def __init__(self, npcs: int, pc: np.ndarray, lo: np.ndarray, hi: np.ndarray, apart: np.ndarray) -> None:
        """From the batches' instruction, `bounds` and apartness (one entry per batch)."""
        order = np.lexsort((lo, pc))
        pc, lo, hi, apart = pc[order], lo[order], hi[order], apart[order]
        begin, _ = run_bounds(pc)
        # batches of one instruction sorted by their lowest byte are apart when each ends before the next begins
        apart = apart.copy()
        apart[1:] &= (pc[1:] != pc[:-1]) | (hi[:-1] <= lo[1:])
        self.present = pc[begin].astype(np.int64)
        self.lo = np.zeros(npcs, dtype=np.uint64)
        self.hi = np.zeros(npcs, dtype=np.uint64)
        self.apart = np.ones(npcs, dtype=np.bool_)
        if len(begin):
            self.lo[self.present] = lo[begin]
            self.hi[self.present] = np.maximum.reduceat(hi, begin)
            self.apart[self.present] = np.logical_and.reduceat(apart, begin)

    def meet(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether some access of instruction a may overlap some other access of instruction b (pairwise)."""
        overlap = (self.lo[a] < self.hi[b]) & (self.lo[b] < self.hi[a])
        return overlap & ((a != b) | ~self.apart[a])

    def within(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """Per instruction: whether it has accesses and all of them lie in [start, end), and whether some of them
        may (its range meets that window)."""
        has = np.zeros(len(self.lo), dtype=np.bool_)
        has[self.present] = True
        lo, hi = np.uint64(start), np.uint64(end)
        inside = has & (self.lo >= lo) & (self.hi <= hi)
        return inside, has & (self.lo < hi) & (self.hi > lo)
