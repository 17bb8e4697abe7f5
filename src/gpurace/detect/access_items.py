"""Access summaries kept sorted by address, so that intervals can be compared and merged without re-sorting.

The redundant-barrier detector compares each barrier interval of a block with
a summary of the earlier intervals of the same run, and folds it into that
summary, at every barrier. Re-sorting the whole summary each time would cost
a sort of the block's footprint per barrier; keeping it sorted by address
turns both steps into binary searches of the new interval's items plus
linear passes over the rows they touch (`near`, `merged`, `union`), and lets
a cheap filter over the merged order drop every address that cannot hold a
conflict (`may_conflict`) before the exact, sort-based test runs on what is
left.

An item is one (block, address, instruction) with the lowest and highest
thread that made that access; the access size is the instruction's (the
caller keeps it per pc). Items are unique per (address, block, instruction)
and sorted by address (ties in any order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.detect.segments import expand, run_bounds


@dataclass(frozen=True)
class AccessItems:
    block: np.ndarray
    addr: np.ndarray
    pc: np.ndarray
    tmin: np.ndarray
    tmax: np.ndarray

    @staticmethod
    def empty() -> AccessItems:
        i64 = np.zeros(0, dtype=np.int64)
        return AccessItems(i64, np.zeros(0, dtype=np.uint64), i64, i64, i64)

    @staticmethod
    def summarise(block: np.ndarray, addr: np.ndarray, pc: np.ndarray, thread: np.ndarray) -> AccessItems:
        """Items of raw accesses (one per thread and access), sorted by address."""
        if len(block) == 0:
            return AccessItems.empty()
        # the identity of an item besides its address: (block, pc), as one sortable integer
        ident = block * np.int64(pc.max() + 1) + pc
        order = np.lexsort((ident, addr))
        addr, ident = addr[order], ident[order]
        change = np.ones(len(addr), dtype=np.bool_)
        change[1:] = (addr[1:] != addr[:-1]) | (ident[1:] != ident[:-1])
        begin = np.flatnonzero(change)
        thread = thread[order]
        return AccessItems(
            block[order][begin], addr[begin], pc[order][begin],
            np.minimum.reduceat(thread, begin), np.maximum.reduceat(thread, begin),
        )  # fmt: skip

    def columns(self) -> tuple[np.ndarray, ...]:
        return (self.block, self.addr, self.pc, self.tmin, self.tmax)

    def __len__(self) -> int:
        return len(self.block)

    def where(self, mask: np.ndarray) -> AccessItems:
        """A subset (still sorted)."""
        return AccessItems(*(c[mask] for c in self.columns()))


def merge_order(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the rows of two address-sorted arrays in their merged, sorted order (b before equal a)."""
    pos_b = np.arange(len(b), dtype=np.int64) + np.searchsorted(a, b, "left")
    free = np.ones(len(a) + len(b), dtype=np.bool_)
    free[pos_b] = False
    return np.flatnonzero(free), pos_b


def merged(a: AccessItems, b: AccessItems) -> tuple[AccessItems, np.ndarray]:
    """a and b as one address-sorted AccessItems (not deduplicated), with each row's side (0: a, 1: b)."""
    pos_a, pos_b = merge_order(a.addr, b.addr)
    cols = []
    for ca, cb in zip(a.columns(), b.columns()):
        out = np.empty(len(ca) + len(cb), dtype=ca.dtype)
        out[pos_a], out[pos_b] = ca, cb
        cols.append(out)
    side = np.empty(len(a) + len(b), dtype=np.int8)
    side[pos_a], side[pos_b] = 0, 1
    return AccessItems(*cols), side


def near(a: AccessItems, start: np.ndarray, end: np.ndarray, widest: int) -> np.ndarray:
    """Indices (ascending) of the rows of `a` whose accesses, at most `widest` bytes, may overlap a range [start, end).

    `start` must be sorted. Binary searches per range, then the ranges of
    rows are made non-decreasing at both ends (which only widens them) so
    each row is listed once without a sort: the cost follows the ranges, not
    the size of `a`.
    """
    if len(a) == 0 or len(start) == 0:
        return np.zeros(0, dtype=np.int64)
    reach = np.where(start >= np.uint64(widest - 1), start - np.uint64(widest - 1), np.uint64(0))
    lo = np.searchsorted(a.addr, reach, "left")
    hi = np.maximum.accumulate(np.searchsorted(a.addr, end, "left"))
    lo = np.maximum(lo, np.concatenate(([0], hi[:-1])))
    owner, offset = expand(np.maximum(hi - lo, 0))
    return lo[owner] + offset


def union(a: AccessItems, b: AccessItems) -> AccessItems:
    """The items of both: rows of b that a already has widen its thread range (in place), the others are inserted.

    When every row of b is already in a, a itself comes back, updated: no
    copy of a, so folding an interval that repeats earlier accesses costs
    binary searches only.
    """
    if len(b) == 0:
        return a
    left = np.searchsorted(a.addr, b.addr, "left")
    right = np.searchsorted(a.addr, b.addr, "right")
    owner, offset = expand(right - left)
    cand = left[owner] + offset
    hit = (a.block[cand] == b.block[owner]) & (a.pc[cand] == b.pc[owner])
    same_a, same_b = cand[hit], owner[hit]
    a.tmin[same_a] = np.minimum(a.tmin[same_a], b.tmin[same_b])
    a.tmax[same_a] = np.maximum(a.tmax[same_a], b.tmax[same_b])
    new = np.ones(len(b), dtype=np.bool_)
    new[same_b] = False
    if not new.any():
        return a
    return merged(a, b.where(new))[0]


def may_conflict(items: AccessItems, side: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Rows of address-sorted items that may overlap a row of the other side made by another thread.

    A filter that never drops such a row, with no sort: naturally aligned
    ranges of at most 16 bytes overlap only inside one aligned block of the
    larger size, so rows are grouped per 16-byte chunk at the chunk's largest
    access size (the group keys stay sorted), and a group is kept only when it
    holds rows of both sides and more than one thread.
    """
    n = len(items)
    if n == 0:
        return np.zeros(0, dtype=np.bool_)
    if size.min() == size.max():
        shift = np.uint64(np.log2(size[0]))
    else:
        begin, end = run_bounds(items.addr >> np.uint64(4))
        largest = np.maximum.reduceat(size, begin)
        shift = np.repeat(np.log2(largest).astype(np.uint64), end - begin)
    begin, end = run_bounds(items.addr >> shift)
    both_sides = np.minimum.reduceat(side, begin) != np.maximum.reduceat(side, begin)
    several = np.minimum.reduceat(items.tmin, begin) != np.maximum.reduceat(items.tmax, begin)
    return np.repeat(both_sides & several, end - begin)
