"""Simulee's fitness of one candidate launch: how much its threads collide in memory.

The search wants inputs under which threads touch the same memory, because
only accesses to the same bytes can race. Simulee (Wu et al., section 3.1.1)
scores a launch by

    F = distinct addresses accessed / distinct (thread, address) pairs

which is 1 when no two threads share an address and falls towards 0 as more
threads pile onto the same addresses (lower is fitter). A thread touching its
own address many times counts once, so a loop over a private element is not
mistaken for a collision. When F ties (typically at 1, where it gives no
direction), the secondary score breaks the tie: the accessed address range,
end - start, since a narrower footprint is closer to making threads meet.

The range is taken per memory object, as in Simulee's model where each array
is its own memory: per global allocation (buffers, `__device__` variables,
automatic buffers) and per block's shared memory, summed. One range over the
whole address space would be dominated by the fixed gaps between buffers and
hide what an input does inside each of them.

Addresses are the canonical start addresses of the shared and global accesses
the simulator reports (the spaces races happen in). The sink only gathers
arrays per event; the sort-based deduplication runs when enough has been
gathered and once at the end, so the cost stays proportional to the distinct
pairs, not to the accesses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.segments import run_bounds
from gpurace.sim.events import AccessBatch, Event
from gpurace.sim.memory.layout import CANON_SHARED_TAG, CANON_TAG_MASK

COMPACT_AT = 1 << 20
"""Gathered (thread, address) entries that trigger an intermediate deduplication."""


@dataclass(frozen=True)
class Fitness:
    """A candidate's score: `primary` is Simulee's F, `secondary` the summed byte range, `pairs` the denominator of
    F, `assertion` the least branch distance of an `__assert` that held (`sim.assert_distance`; inf: none)."""

    primary: float
    secondary: int
    pairs: int
    assertion: float = math.inf

    def rank(self) -> tuple:
        """Sort key, smaller is fitter: F first, then the range, then how near an assertion came to failing.

        A launch that touched no shared or global memory scores F = 1 and a
        range of 0, which would beat every launch that does something; it
        cannot expose a race, so it ranks after all of them. Among such
        launches (a kernel that asserts on its parameters before touching
        memory), the assertion distance is what tells candidates apart.
        """
        return (self.pairs == 0, self.primary, self.secondary, self.assertion)

    def as_dict(self) -> dict:
        scores = {"primary": round(self.primary, 6), "secondary": self.secondary}
        if math.isfinite(self.assertion):
            scores["assertion_distance"] = self.assertion
        return scores


class FitnessSink:
    """An event sink that computes the `Fitness` of the launch it watches.

    `bind` (called by `check` once memory is laid out) gives it the global
    allocations, so that ranges are measured per allocation.
    """

    def __init__(self) -> None:
        self._threads: list[np.ndarray] = []
        self._addrs: list[np.ndarray] = []
        self._gathered = 0
        self._bases = np.zeros(0, dtype=np.uint64)
        self._assertion = math.inf

    def bind(self, context: DetectorContext) -> None:
        allocations = context.memory.global_allocations()
        self._bases = np.array([a.canonical_base for a in allocations], dtype=np.uint64)

    def on_event(self, event: Event) -> None:
        if not isinstance(event, AccessBatch):
            return
        self._threads.append(event.threads.astype(np.int64, copy=False))
        self._addrs.append(event.addrs.astype(np.uint64, copy=False))
        self._gathered += len(event.addrs)
        if self._gathered >= COMPACT_AT:
            self._compact()

    def assertion_distance(self, distance: float) -> None:
        """An `__assert` held, `distance` away from failing (`sim.assert_distance`)."""
        self._assertion = min(self._assertion, distance)

    def _compact(self) -> tuple[np.ndarray, np.ndarray]:
        """Replace what was gathered by its distinct (thread, address) pairs, sorted by address then thread."""
        if not self._addrs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
        threads = np.concatenate(self._threads)
        addrs = np.concatenate(self._addrs)
        order = np.lexsort((threads, addrs))
        threads, addrs = threads[order], addrs[order]
        keep = np.ones(len(addrs), dtype=np.bool_)
        keep[1:] = (addrs[1:] != addrs[:-1]) | (threads[1:] != threads[:-1])
        threads, addrs = threads[keep], addrs[keep]
        self._threads, self._addrs, self._gathered = [threads], [addrs], len(addrs)
        return threads, addrs

    def fitness(self) -> Fitness:
        """The launch's fitness, from everything seen so far."""
        _, addrs = self._compact()
        pairs = len(addrs)
        if pairs == 0:
            return Fitness(1.0, 0, 0, self._assertion)
        distinct = addrs[np.concatenate(([True], addrs[1:] != addrs[:-1]))]
        return Fitness(len(distinct) / pairs, self._range(distinct), pairs, self._assertion)

    def _range(self, distinct: np.ndarray) -> int:
        """Sum over memory objects of (last - first) accessed address; `distinct` is sorted."""
        shared = (distinct & np.uint64(CANON_TAG_MASK)) == np.uint64(CANON_SHARED_TAG)
        # Shared: the tag and block bits above the 32-bit offset name the block's memory. Global:
        # the allocation holding the address (tags keep the two kinds of keys from meeting).
        allocation = np.maximum(np.searchsorted(self._bases, distinct, side="right") - 1, 0).astype(np.uint64)
        region = np.where(shared, distinct >> np.uint64(32), allocation)
        begin, end = run_bounds(region)
        return int((distinct[end - 1] - distinct[begin]).sum())

