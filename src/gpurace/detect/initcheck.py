"""Uninitialised reads, as compute-sanitizer's initcheck: a kernel reads memory that nothing wrote.

Two event sinks, one per memory space, find them; each reports one
`uninitialized-read` finding per reading source line, at the read, with the
allocation and offset of its first instance and the number of instances:

* `SharedInitCheck`, in every `check`: shared memory holds garbage when a
  block starts, so a load (or the read half of an atomic) of a shared byte
  that no thread of the block has written earlier in the launch reads
  garbage. A flag byte per byte of the shared memory of every block alive at
  once (`detect.shared_slots`: as much as the simulated shared memory itself)
  records which bytes the block's stores and atomics wrote.
* `GlobalInitCheck`, under `gpurace exec`: `cudaMalloc` memory holds garbage
  until the program writes it, with a copy, a memset or a kernel. What was
  written persists across the program's launches in a `DeviceWrites`, kept
  by the runtime's heap; the sink checks each read of the launch against it
  and collects the launch's writes, which `commit` adds to it once the
  launch is over.

Reads are checked byte by byte (a 4-byte load of a word of which one byte
was written reads three garbage bytes), through flag words
(`detect.bytesets`). Within one atomic instruction, lanes
at the same address take effect one after the other, so only the first of
them can read an unwritten value. Local memory is out of scope.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.bytesets import PageBits, Ranges, flag_bytes, full_word, read_flags, set_flags
from gpurace.detect.findings import ERROR, Finding, describe_address, make_site
from gpurace.detect.shared_slots import SharedSlots
from gpurace.limits import Limits, format_size
from gpurace.sim.events import AccessBatch, AccessKind, Event
from gpurace.sim.memory.layout import Space
from gpurace.words import plural

UNINITIALIZED_READ = "uninitialized-read"

MAX_RUNS_PER_PAGE = 8
"""A page kernels wrote in at most this many runs of bytes is kept as ranges (16 bytes a run), not as a bitmap."""


# --------------------------------------------------------------------------
# Reads and their findings
# --------------------------------------------------------------------------


ALL = slice(None)
"""A selection of every lane of a batch: lane selections are ALL or index arrays, so that the usual batch, all
of whose lanes are to be looked at, is never copied."""


def _at(lanes: np.ndarray | slice, positions: np.ndarray | slice) -> np.ndarray | slice:
    """The lanes at `positions` of the selection `lanes`."""
    if positions is ALL:
        return lanes
    return positions if lanes is ALL else lanes[positions]


def _first_at_each_address(ev: AccessBatch, lanes: np.ndarray) -> np.ndarray | slice:
    """Which of `lanes` (an index array) can read a value nothing wrote: all of them (ALL) for a load; for an
    atomic, the first lane at each address, since the lanes after it read what it wrote. Every lane at one address
    reads the same bytes, so callers pass only the lanes found reading unwritten ones, and an atomic on written
    memory (the usual case) sorts nothing."""
    if ev.kind == AccessKind.READ:
        return ALL
    _, first = np.unique(ev.addrs[lanes], return_index=True)
    return np.sort(first)


def _op_name(ev: AccessBatch) -> str:
    """How a site names the reading instruction: `read`, `volatile read`, `atomic add`."""
    if ev.kind == AccessKind.ATOMIC:
        return f"atomic {ev.atomic_op}" if ev.atomic_op else "atomic"
    return f"{ev.sem} read" if ev.sem is not None else "read"


class _UnwrittenReads:
    """The reads of unwritten bytes seen so far, per instruction: how many, and the first one as the example.

    Findings are made once, at the end: building a site per batch would cost
    more than the check itself.
    """

    def __init__(self, ctx: DetectorContext, space: str) -> None:
        self.ctx = ctx
        self.space = space
        self.counts: dict[int, int] = {}
        self.first: dict[int, tuple[int, int, int, int, str, str | None]] = {}

    def add(self, ev: AccessBatch, lanes: np.ndarray, unwritten: np.ndarray) -> None:
        """`lanes` of `ev` (maybe none) read `unwritten` (per lane, > 0) bytes that nothing wrote."""
        if not len(lanes):
            return
        pc = ev.pc
        self.counts[pc] = self.counts.get(pc, 0) + len(lanes)
        if pc not in self.first:
            lane = int(lanes[0])
            scope = ev.scope if ev.strong else None
            example = (int(ev.threads[lane]), int(ev.addrs[lane]), int(unwritten[0]))
            self.first[pc] = (*example, ev.size, _op_name(ev), scope)

    def findings(self, why: str) -> list[Finding]:
        """One finding per reading instruction; `why` ends each cause (who never wrote the bytes, and so what)."""
        out = []
        for pc, (thread, address, unwritten, size, op, scope) in self.first.items():
            site = make_site(self.ctx.program, self.ctx.geometry, pc, thread, op, scope)
            some = " that" if unwritten == size else f", {unwritten} of which"
            cause = f"reads {plural(size, 'byte')}{some} {why}"
            where = describe_address(self.ctx.memory, address)
            count = self.counts[pc]
            out.append(Finding(UNINITIALIZED_READ, ERROR, cause, (site,), space=self.space, address=where, count=count))
        return out


def _lanes_in(ev: AccessBatch, space: Space) -> np.ndarray | slice | None:
    """The lanes of `ev` in `space` (None when there are none)."""
    mask = ev.space == space
    if mask.all():
        return ALL
    return np.flatnonzero(mask) if mask.any() else None


# --------------------------------------------------------------------------
# Shared memory
# --------------------------------------------------------------------------


class SharedInitCheck:
    """Reads of shared memory that no thread of the reading block wrote earlier in the launch (module docstring).

    `limits` bound the written-bytes flags (one byte per byte of every block's shared memory).
    """

    name = "initcheck"

    def __init__(self, ctx: DetectorContext, limits: Limits) -> None:
        self.slots = SharedSlots(ctx.memory)
        nbytes = self.slots.count * self.slots.stride
        limits.check_memory(nbytes, f"the uninitialised-read check's map of shared memory ({format_size(nbytes)})")
        self.written = np.zeros(nbytes, dtype=np.uint8)
        self.reads = _UnwrittenReads(ctx, "shared")

    def on_event(self, ev: Event) -> None:
        if not isinstance(ev, AccessBatch):
            return
        lanes = _lanes_in(ev, Space.SHARED)
        if lanes is None:
            return
        if ev.kind != AccessKind.WRITE:
            self._check_reads(ev, lanes)
        if ev.kind != AccessKind.READ:
            set_flags(self.written, self._index(ev, lanes), ev.size)

    def _index(self, ev: AccessBatch, lanes: np.ndarray | slice) -> np.ndarray:
        """Index into `written` of the first byte each of `lanes` of `ev` accesses; a block that takes over
        another's slot starts with nothing written."""
        index, fresh = self.slots.index(ev.addrs[lanes])
        if len(fresh):
            self.written[self.slots.bytes_of(fresh)] = 0
        return index

    def _check_reads(self, ev: AccessBatch, lanes: np.ndarray | slice) -> None:
        words = read_flags(self.written, self._index(ev, lanes), ev.size)
        partly = (words != full_word(words.dtype.type)).any(axis=1)
        if not partly.any():
            return
        at = np.flatnonzero(partly)
        at = at[_first_at_each_address(ev, _at(lanes, at))]
        unwritten = ev.size - flag_bytes(words[at], ev.size).sum(axis=1)
        self.reads.add(ev, _at(lanes, at), unwritten)

    def finish(self) -> list[Finding]:
        return self.reads.findings(
            "no thread of its block had written in this launch: shared memory holds garbage until written"
        )


# --------------------------------------------------------------------------
# Global memory of a program (`gpurace exec`)
# --------------------------------------------------------------------------


class DeviceWrites:
    """Which bytes of a program's `cudaMalloc` memory hold a value, across its launches and calls.

    `unwritten` holds the allocations' ranges less what was written: by host
    calls (copies and memsets) and by kernels in runs of bytes. Bytes kernels
    wrote scattered (more than MAX_RUNS_PER_PAGE runs in a page) stay in
    `unwritten` and are flagged in `kernel_written` instead, a page-sized
    flag map per such page: so contiguous output costs a range, fragmented
    output at most as much as the memory written, and no map ever spans the
    arena. A byte is unwritten when it is in the first and not flagged in the
    second.
    """

    def __init__(self) -> None:
        self.unwritten = Ranges()
        self.kernel_written = PageBits()

    def allocated(self, base: int, size: int) -> None:
        """A `cudaMalloc` of [base, base + size): garbage until written."""
        self.unwritten.add(np.array([base]), np.array([base + size]))

    def host_wrote(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """A copy or memset wrote the ranges [starts, ends) (any memory: only device memory is tracked)."""
        self.unwritten.remove(starts, ends)

    def kernel_wrote(self, written: PageBits) -> None:
        """A launch wrote the bytes `written` flags (taken over: the caller keeps no use of it)."""
        self.kernel_written.update(written)
        self.unwritten.remove(*self.kernel_written.take_runs(written.pages, MAX_RUNS_PER_PAGE))

    def freed(self, base: int, size: int) -> None:
        """[base, base + size) was freed: its addresses are never reused, so nothing about them is needed."""
        self.unwritten.remove(np.array([base]), np.array([base + size]))
        self.kernel_written.discard_pages(base, base + size)


class GlobalInitCheck:
    """Reads of a program's `cudaMalloc` memory that nothing wrote, in one launch under `gpurace exec`.

    Every launch gets one: checked launches pass it to `check` as an extra
    sink, which binds it to each schedule's run; launches left unchecked
    pass it to `simulate`, which never binds it, and then it only records
    writes. Each schedule's writes are recorded apart from `writes` (a
    later schedule must not see an earlier one's), and `commit` adds those
    of the first schedule, the one whose memory the program keeps.
    """

    def __init__(self, writes: DeviceWrites) -> None:
        self.writes = writes
        self.reads: _UnwrittenReads | None = None
        self.first_run: PageBits | None = None
        self.this_run = PageBits()

    def bind(self, ctx: DetectorContext) -> None:
        """A schedule's run starts: reads are checked from now on, against this run's writes only."""
        if self.reads is None:
            self.reads = _UnwrittenReads(ctx, "global")
            return
        self.reads.ctx = ctx
        self.first_run = self.first_run or self.this_run
        self.this_run = PageBits()

    def on_event(self, ev: Event) -> None:
        if not isinstance(ev, AccessBatch):
            return
        lanes = _lanes_in(ev, Space.GLOBAL)
        if lanes is None:
            return
        touched = self.writes.unwritten.touched(ev.addrs[lanes], ev.size)
        if touched is None:  # the usual case: memory a host call or an earlier launch wrote
            return
        if not touched.all():
            lanes = _at(lanes, np.flatnonzero(touched))
        if ev.kind != AccessKind.WRITE and self.reads is not None:
            self._check_reads(ev, lanes)
        if ev.kind != AccessKind.READ:
            self.this_run.add(ev.addrs[lanes], ev.size)

    def _check_reads(self, ev: AccessBatch, lanes: np.ndarray | slice) -> None:
        """Report those of `lanes` that read a byte of `writes.unwritten` that no kernel has flagged written."""
        starts = ev.addrs[lanes]
        words = self.writes.kernel_written.read(starts, ev.size) | self.this_run.read(starts, ev.size)
        partly = (words != full_word(words.dtype.type)).any(axis=1)
        if not partly.any():
            return
        addrs = starts[partly, None] + np.arange(ev.size, dtype=np.uint64)
        unwritten = (self.writes.unwritten.contains(addrs) & ~flag_bytes(words[partly], ev.size)).sum(axis=1)
        bad = unwritten > 0
        reading = _at(lanes, np.flatnonzero(partly)[bad])
        first = _first_at_each_address(ev, reading)
        self.reads.add(ev, reading[first], unwritten[bad][first])

    def forked(self) -> None:
        """A schedule forks from schedule 0's run here (`sim.shared_prefix`): from now on this worker's reads are
        recorded apart, so that the parent counts the shared run's reads once."""
        if self.reads is not None:
            self.reads = _UnwrittenReads(self.reads.ctx, "global")

    def fork_result(self):
        """What a forked schedule read unwritten, for `absorb` in the parent."""
        return None if self.reads is None else (self.reads.counts, self.reads.first)

    def absorb(self, result) -> None:
        """Take in a forked schedule's unwritten reads (`fork_result`), as if its run had followed this one's."""
        if result is None or self.reads is None:
            return
        counts, first = result
        for pc, n in counts.items():
            self.reads.counts[pc] = self.reads.counts.get(pc, 0) + n
            self.reads.first.setdefault(pc, first[pc])

    def commit(self) -> None:
        """The launch is over: what its first schedule wrote counts as written for every later launch."""
        self.writes.kernel_wrote(self.first_run or self.this_run)

    def finish(self) -> list[Finding]:
        if self.reads is None:
            return []
        return self.reads.findings(
            "the program never wrote (no copy, memset or earlier kernel did): memory from cudaMalloc holds garbage "
            "until written"
        )
