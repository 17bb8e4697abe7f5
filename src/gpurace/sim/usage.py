"""How much of each automatic buffer a launch used: an event sink over global accesses.

An automatic buffer (`auto` for a pointer parameter) has no size anyone
chose, so the report says how much of it the kernel touched: the extent (one
past the highest byte accessed) and the number of distinct PAGE_SIZE pages,
counting reads, writes and atomics alike. Every performed global access is an
event (only thread-private local memory produces none), so watching the event
stream sees them all; accesses that were not performed (out of bounds) touch
nothing and are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.sim.events import AccessBatch, Event
from gpurace.sim.memory import PAGE_SIZE, Allocation, Space

PAGE_SHIFT = PAGE_SIZE.bit_length() - 1


@dataclass(frozen=True)
class BufferUsage:
    """One automatic buffer after the run: `bytes_used` is one past the highest byte touched (0: untouched)."""

    name: str
    bytes_used: int
    pages: int

    def as_dict(self) -> dict:
        return {"name": self.name, "bytes_used": self.bytes_used, "pages": self.pages}


class UsageTracker:
    """Per automatic buffer: the highest byte touched and a bitmap of touched pages, updated per AccessBatch."""

    def __init__(self, buffers: list[Allocation]):
        self.names = [a.name for a in buffers]
        # Global addresses are below 2**47, so int64 holds them and their differences.
        self.bases = np.array([a.canonical_base for a in buffers], dtype=np.int64)  # events carry canonical addresses
        self.sizes = np.array([a.size for a in buffers], dtype=np.int64)
        self.extent = np.zeros(len(buffers), dtype=np.int64)
        pages = -(-int(self.sizes.max(initial=0)) // PAGE_SIZE)
        self.touched = np.zeros((len(buffers), pages), dtype=np.bool_)

    def on_event(self, event: Event) -> None:
        if not isinstance(event, AccessBatch):
            return
        glob = event.space == Space.GLOBAL
        addrs = event.addrs if glob.all() else event.addrs[glob]
        if len(addrs) == 0:
            return
        a = addrs.view(np.int64)  # canonical addresses are below 2**63
        lo, hi = int(a.min()), int(a.max())
        if hi < self.bases[0]:  # explicit buffers and variables lie below every automatic buffer
            return
        first, last = np.searchsorted(self.bases, [lo, hi], side="right") - 1
        if first == last >= 0 and hi - self.bases[first] < self.sizes[first]:
            # the common, coalesced case: every lane in one buffer (so no lane outside it)
            base = self.bases[first]
            self.extent[first] = max(int(self.extent[first]), hi - base + event.size)
            self.touched[first][(a - base) >> PAGE_SHIFT] = True
            return
        buf = np.searchsorted(self.bases, a, side="right") - 1
        known = np.maximum(buf, 0)
        offset = a - self.bases[known]
        inside = (buf >= 0) & (offset < self.sizes[known])
        if not inside.all():
            buf, offset = buf[inside], offset[inside]
            if len(buf) == 0:
                return
        np.maximum.at(self.extent, buf, offset + event.size)
        # A performed access is naturally aligned, so it lies within one page.
        self.touched[buf, offset >> PAGE_SHIFT] = True

    def usage(self) -> list[BufferUsage]:
        pages = self.touched.sum(axis=1)
        return [BufferUsage(name, int(self.extent[i]), int(pages[i])) for i, name in enumerate(self.names)]
