"""Which pages of device memory the program's host code may touch, for the page protection that catches it.

The program sees the global arena at the simulator's addresses (`protocol`),
so nothing would stop its host code from reading `cudaMalloc` memory, which a
GPU's host cannot reach, or from touching managed and page-locked memory
while a kernel or an asynchronous copy that uses it may still be running.
The shim makes its own copies through a second mapping of the arena, so the
program's mapping can be protected page by page (`mprotect`) and its host
code's accesses there caught (the shim's SIGSEGV handler sends HOST_ACCESS):

* `cudaMalloc` memory is never accessible, nor is any allocation once freed;
* a page of managed or page-locked memory is inaccessible while an
  operation the host has not waited for (`streams.Timeline.pending`) writes
  it, and read-only while one reads it;
* a page where an access was just caught is accessible again until the next
  change of the pending operations, so that the program goes on.

No two heap blocks share a page (`heap.py`), so a page belongs to one
allocation. Registered host memory is protected through the program's own
pages too: the shim applies each change to the arena's pages to the
program's pages that are the same memory. Changes reach the shim with the next reply, as
(start, length, protection) records.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import numpy as np

from gpurace.detect.bytesets import PAGE_SHIFT, PageBits
from gpurace.detect.footprint import ByteSet, Footprint
from gpurace.runtime.protocol import PROT_NONE, PROT_READ, PROT_READ_WRITE
from gpurace.sim.memory.layout import PAGE_SIZE, Allocation

Record = tuple[int, int, int]  # start, length, protection


def _pages(touched: ByteSet) -> np.ndarray:
    """The page numbers a byte set touches (sorted, distinct)."""
    if isinstance(touched, PageBits):
        return touched.pages.astype(np.int64)
    spans = [np.arange(lo >> PAGE_SHIFT, ((hi - 1) >> PAGE_SHIFT) + 1, dtype=np.int64) for lo, hi in touched.ranges if lo < hi]
    return np.unique(np.concatenate(spans)) if spans else np.zeros(0, dtype=np.int64)


def host_pages(footprint: Footprint, blocks: Iterable[Allocation]) -> tuple[np.ndarray, np.ndarray]:
    """(pages written, pages only read) of `footprint` that lie in `blocks` (the host-visible ones)."""
    ranges = [(b.base >> PAGE_SHIFT, ((b.end - 1) >> PAGE_SHIFT) + 1) for b in blocks]
    if not ranges:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    starts, ends = (np.array(side, dtype=np.int64) for side in zip(*sorted(ranges)))

    def visible(pages: np.ndarray) -> np.ndarray:
        at = np.searchsorted(starts, pages, side="right") - 1
        return pages[(at >= 0) & (pages < ends[np.maximum(at, 0)])]

    written = visible(_pages(footprint.writes))
    return written, np.setdiff1d(visible(_pages(footprint.reads)), written, assume_unique=True)


class Protection:
    """The protection of the program's mapping of the global arena, and the changes not yet sent to the shim."""

    def __init__(self) -> None:
        self._queue: list[Record] = []
        self._pending = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))  # pages, protection
        self._exempt: set[int] = set()  # pages opened after a caught access, until the pending work changes
        self._closed: list[tuple[int, int]] = []  # [first, last) pages of blocks closed for good

    def take(self) -> list[Record]:
        """The changes since the last call, in the order the shim applies them."""
        out, self._queue = self._queue, []
        return out

    def closed(self, alloc: Allocation) -> None:
        """The host may no longer touch `alloc` at all (device memory, or freed memory): its pages, which it
        shares with no other block."""
        first, last = alloc.base >> PAGE_SHIFT, ((alloc.end - 1) >> PAGE_SHIFT) + 1
        bisect.insort(self._closed, (first, last))
        self._queue.append((first << PAGE_SHIFT, (last - first) * PAGE_SIZE, PROT_NONE))

    def opened(self, page: int) -> None:
        """An access to `page` was caught and dealt with: let the program go on there for now."""
        self._exempt.add(page)
        self._queue.append((page << PAGE_SHIFT, PAGE_SIZE, PROT_READ_WRITE))

    def pending_work(self, uses: Iterable[tuple[np.ndarray, np.ndarray]]) -> None:
        """The pending operations changed; `uses` are their (pages written, pages only read) in host memory."""
        uses = list(uses)
        if not uses and not len(self._pending[0]):  # no host memory pending before or after: nothing changes
            self._exempt.clear()
            return
        written = np.concatenate([w for w, _ in uses] + [np.zeros(0, dtype=np.int64)])
        read = np.concatenate([r for _, r in uses] + [np.zeros(0, dtype=np.int64)])
        pages = np.union1d(written, read)
        prot = np.where(np.isin(pages, written), PROT_NONE, PROT_READ)
        old_pages, old_prot = self._pending
        everything = np.union1d(pages, old_pages)
        new = _lookup(everything, pages, prot)
        old = _lookup(everything, old_pages, old_prot)
        old[np.isin(everything, np.fromiter(self._exempt, dtype=np.int64))] = PROT_READ_WRITE
        self._exempt.clear()
        changed = (new != old) & ~self._in_closed(everything)
        self._queue.extend(_runs(everything[changed], new[changed]))
        self._pending = (pages, prot)

    def _in_closed(self, pages: np.ndarray) -> np.ndarray:
        """Whether each of `pages` is in a block closed for good (its protection never changes again)."""
        if not self._closed or not len(pages):
            return np.zeros(len(pages), dtype=np.bool_)
        first, last = (np.array(side, dtype=np.int64) for side in zip(*self._closed))
        at = np.searchsorted(first, pages, side="right") - 1
        return (at >= 0) & (pages < last[np.maximum(at, 0)])


def _lookup(keys: np.ndarray, pages: np.ndarray, prot: np.ndarray) -> np.ndarray:
    """The protection of each of `keys` given (pages, prot); read and write for pages not listed."""
    out = np.full(len(keys), PROT_READ_WRITE, dtype=np.int64)
    at = np.searchsorted(pages, keys)
    hit = at < len(pages)
    hit[hit] = pages[at[hit]] == keys[hit]
    out[hit] = prot[at[hit]]
    return out


def _runs(pages: np.ndarray, prot: np.ndarray) -> list[Record]:
    """Consecutive pages with the same protection, as records."""
    if not len(pages):
        return []
    breaks = np.flatnonzero((np.diff(pages) != 1) | (np.diff(prot) != 0)) + 1
    bounds = np.concatenate([[0], breaks, [len(pages)]])
    return [
        (int(pages[a]) << PAGE_SHIFT, int(b - a) * PAGE_SIZE, int(prot[a])) for a, b in zip(bounds[:-1], bounds[1:])
    ]

