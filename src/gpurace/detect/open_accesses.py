"""The accesses of the barrier-interval detector's open intervals, kept compactly until their interval closes.

A large launch keeps every resident block's interval open at once (all blocks
run side by side, and a loop between two barriers can make hundreds of
accesses per thread), so this buffer is most of what the detector's memory is
made of: 143 million accesses between two barriers of a 3072x3072 image
convolution. Each batch (one instruction executed by many threads) appends its
lanes: per access the thread, the address, the batch's number and the bytes it
stored; per batch what all its lanes share (pc, size, first event, whether the
stored bytes are known). That is 24 bytes per access, where seven full columns
and a tuple of arrays per batch cost about 76.

Accesses live in segments of SEGMENT accesses, so that the buffer grows and
shrinks without a second copy of all of it alive, and a close gathers one
address range at a time (`close`) with 4 bytes of bookkeeping per access.
Segments a close empties are kept for the next interval to fill: memory the
system hands out afresh costs a page fault per page on its first write, which
for a buffer refilled interval after interval was as much time as the filling.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpurace.detect.pc_ranges import PcRanges, bounds
from gpurace.detect.written_values import stored_words
from gpurace.sim.events import AccessBatch

SEGMENT = 1 << 20
"""Accesses per segment: large enough that per-segment NumPy calls cost nothing, small beside the buffer."""
CUT_SAMPLE = 1 << 16
"""Accesses sampled to place the address cuts of a close in chunks."""
_OPEN, _UNCHECKED = np.int32(-1), np.int32(-2)
"""`OpenAccesses.close`'s marks for accesses that stay buffered and for closing accesses left unchecked."""


class _Segment:
    """SEGMENT slots of the per-access columns, the first `n` of them used."""

    def __init__(self, thread_type) -> None:
        self.n = 0
        self.thread = np.empty(SEGMENT, dtype=thread_type)
        self.addr = np.empty(SEGMENT, dtype=np.uint64)
        self.batch = np.empty(SEGMENT, dtype=np.int32)
        self.val = np.empty(SEGMENT, dtype=np.uint64)

    COLUMNS = ("thread", "addr", "batch", "val")

    def used(self, name: str) -> np.ndarray:
        return getattr(self, name)[: self.n]


class OpenAccesses:
    """Buffered accesses in event order (module docstring)."""

    def __init__(self, nthreads: int) -> None:
        self._thread_type = np.int32 if nthreads <= np.iinfo(np.int32).max else np.int64
        self._segments: list[_Segment] = []
        self._spare: list[_Segment] = []  # emptied segments, to be filled again
        self.n = 0
        self.batches = 0
        self.pc = np.empty(0, dtype=np.int32)
        self.size = np.empty(0, dtype=np.uint64)
        self.seq = np.empty(0, dtype=np.int64)
        self.known = np.empty(0, dtype=np.bool_)
        # each batch's `pc_ranges.bounds`
        self.lo = np.empty(0, dtype=np.uint64)
        self.hi = np.empty(0, dtype=np.uint64)
        self.apart = np.empty(0, dtype=np.bool_)

    def _tables(self) -> tuple[np.ndarray, ...]:
        return self.pc, self.size, self.seq, self.known, self.lo, self.hi, self.apart

    def append(self, batch: AccessBatch) -> None:
        words = stored_words(batch)
        if self.batches == len(self.pc):
            grown = max(1024, 2 * self.batches)
            self.pc, self.size, self.seq, self.known, self.lo, self.hi, self.apart = (_resized(t, grown) for t in self._tables())
        b = self.batches
        self.pc[b], self.size[b], self.seq[b], self.known[b] = batch.pc, batch.size, batch.seq, words is not None
        self.lo[b], self.hi[b], self.apart[b] = bounds(np.asarray(batch.addrs), batch.size)
        self.batches += 1
        columns = {
            "thread": np.asarray(batch.threads),
            "addr": np.asarray(batch.addrs),
            "batch": None,
            "val": None if words is None else words,
        }
        self._extend(columns, len(batch.threads), b)

    def _extend(self, columns: dict, count: int, batch: int | None = None) -> None:
        """Append `count` accesses; a None column is the batch number `batch`, or 0 for `val` (the accesses of
        loads and atomics)."""
        done = 0
        while done < count:
            if not self._segments or self._segments[-1].n == SEGMENT:
                self._segments.append(self._spare.pop() if self._spare else _Segment(self._thread_type))
            seg = self._segments[-1]
            take = min(count - done, SEGMENT - seg.n)
            for name in _Segment.COLUMNS:
                col = columns[name]
                into = getattr(seg, name)[seg.n : seg.n + take]
                if col is not None:
                    into[:] = col[done : done + take]
                else:
                    into[:] = batch if name == "batch" else 0
            seg.n += take
            done += take
        self.n += count

    def ranges(self, npcs: int) -> PcRanges:
        """The address range of each instruction's buffered accesses (closing or not: a superset of a close's)."""
        b = self.batches
        return PcRanges(npcs, self.pc[:b], self.lo[:b], self.hi[:b], self.apart[:b])

    def close(
        self, closing: np.ndarray, block_of: np.ndarray, most: int, check: Callable[[list[np.ndarray]], None],
        wanted: np.ndarray | None = None,
    ) -> None:
        """Hand the accesses of the blocks where `closing` is true to `check(records)` and forget them.

        `records` are the columns (thread, addr, size, pc, seq, val, known) the detector checks, in event order,
        for one address range at a time: when more than `most` accesses close, the address line is cut into
        ranges of about `most` of them each (`_address_cuts`; one address never spans two, so a chunk holds
        every closing access that may overlap one of its own). With `wanted` (per instruction), the accesses of
        the other instructions are forgotten without a check. The rest of the buffer keeps its order.
        """
        # per access: its chunk, or _OPEN (stays buffered) or _UNCHECKED (forgotten without a check)
        wanted_batch = None if wanted is None else wanted[self.pc[: self.batches]]
        everything = bool(closing.all())  # the usual last close: no thread's block to look up
        chunk_of = []
        for seg in self._segments:
            c = np.zeros(seg.n, dtype=np.int32) if everything else np.where(closing[block_of[seg.used("thread")]], np.int32(0), _OPEN)
            if wanted_batch is not None:
                c[(c == 0) & ~wanted_batch[seg.used("batch")]] = _UNCHECKED
            chunk_of.append(c)
        total = sum(int(np.count_nonzero(c >= 0)) for c in chunk_of)
        chunks = 1 if total else 0
        if total > most:
            cuts = self._address_cuts(chunk_of, total, -(-total // most))
            for seg, c in zip(self._segments, chunk_of):
                at = np.flatnonzero(c >= 0)
                c[at] = np.searchsorted(cuts, seg.used("addr")[at], side="right")
            chunks = len(cuts) + 1
        positions = [_positions_by_chunk(c, chunks) for c in chunk_of] if chunks else []
        for chunk in range(chunks):
            parts = [(seg, at[chunk]) for seg, at in zip(self._segments, positions) if len(at[chunk])]
            if parts:
                check(self._records(parts))
        del positions
        self._drop(chunk_of)

    def _address_cuts(self, chunk_of: list[np.ndarray], total: int, pieces: int) -> np.ndarray:
        """Ascending addresses that cut the closing accesses into about `pieces` ranges of equal counts, from an
        evenly spaced sample of them. Each cut is 256-byte aligned, so that no access (naturally aligned, at most
        32 bytes) straddles one."""
        stride = max(1, total // CUT_SAMPLE)
        sample = np.sort(np.concatenate([seg.used("addr")[c >= 0][::stride] for seg, c in zip(self._segments, chunk_of)]))
        at = (np.arange(1, pieces) * len(sample)) // pieces
        return np.unique(sample[at] & ~np.uint64(255))

    def _records(self, parts: list[tuple[_Segment, np.ndarray]]) -> list[np.ndarray]:
        def gather(name: str) -> np.ndarray:
            # a whole segment (a close of every block) is copied as it lies, not gathered
            return np.concatenate([seg.used(name) if len(at) == seg.n else getattr(seg, name)[at] for seg, at in parts])

        batch = gather("batch")
        return [
            gather("thread").astype(np.int64),
            gather("addr"),
            self.size[batch],
            self.pc[batch].astype(np.int64),
            self.seq[batch],
            gather("val"),
            self.known[batch],
        ]

    def _drop(self, chunk_of: list[np.ndarray]) -> None:
        """Forget the closed accesses (all but _OPEN in `chunk_of`, segment by segment); batches left with no
        access go too."""
        old, self._segments, self.n = self._segments, [], 0
        for seg, chunk in zip(old, chunk_of):
            keep = chunk == _OPEN
            kept = int(keep.sum())
            if kept == seg.n:  # nothing of it closed: it stays as it is
                self._segments.append(seg)
                self.n += kept
                continue
            if kept:
                self._extend({name: seg.used(name)[keep] for name in _Segment.COLUMNS}, kept)
            seg.n = 0
            self._spare.append(seg)  # after its kept accesses are copied: the next segment may be this one
        self._renumber_batches()

    def _renumber_batches(self) -> None:
        """Number the batches that still have accesses 0, 1, ... (accesses are in batch order: one pass)."""
        changes, last = [], -1
        for seg in self._segments:
            numbers = seg.used("batch")
            change = np.empty(len(numbers), dtype=np.bool_)
            change[0] = numbers[0] != last
            change[1:] = numbers[1:] != numbers[:-1]
            changes.append(change)
            last = numbers[-1]
        used = np.concatenate([seg.used("batch")[c] for seg, c in zip(self._segments, changes)]) if changes else np.zeros(0, dtype=np.int32)
        if len(used) == self.batches:
            return
        for table in self._tables():
            table[: len(used)] = table[used]
        first = 0
        for seg, change in zip(self._segments, changes):
            renumbered = np.cumsum(change, dtype=np.int32) + np.int32(first - 1)
            seg.batch[: seg.n] = renumbered
            first = int(renumbered[-1]) + 1
        self.batches = len(used)


def _positions_by_chunk(chunk_of: np.ndarray, chunks: int) -> list[np.ndarray]:
    """The positions of each chunk 0 .. chunks-1 in one segment's `chunk_of`, ascending: one stable sort of the
    chunk numbers (a radix sort, for 16-bit keys) rather than one pass over the segment per chunk."""
    if chunks == 1:
        return [np.flatnonzero(chunk_of == 0)]
    keys = chunk_of.astype(np.int16) if chunks < (1 << 15) else chunk_of
    order = np.argsort(keys, kind="stable")
    ends = np.cumsum(np.bincount(chunk_of - _UNCHECKED, minlength=chunks + 2))
    return [order[ends[k + 1] : ends[k + 2]] for k in range(chunks)]


def _resized(table: np.ndarray, size: int) -> np.ndarray:
    new = np.empty(size, dtype=table.dtype)
    new[: len(table)] = table
    return new
