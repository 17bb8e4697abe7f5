"""Footprints: the bytes of a program's memory that one operation (a kernel launch, a copy, a memset) read and wrote.

Under `gpurace exec`, operations that the program's streams, events and
synchronising calls leave unordered race where their footprints overlap
and one of them writes (`runtime.streams`). A copy's or a memset's
footprint is a few ranges (`Spans`); a launch's is collected while it runs
by `LaunchFootprint`, an event sink, as two `PageBits` of the global and constant
memory it read and wrote. Each byte's flag in those says which instruction
last accessed it (a small number per instruction, 1 to 255), so a race
between a launch and another operation is reported at the very source line
of the kernel that touched the byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.bytesets import PageBits
from gpurace.detect.findings import Site, make_site
from gpurace.sim.events import AccessBatch, AccessKind, Event
from gpurace.sim.memory.layout import Space

MAX_INSTRUCTION_FLAGS = 255
"""Instructions told apart in one launch's footprint (a flag byte each); later ones share the last flag."""

ATOMIC_SEMANTICS = frozenset({"relaxed", "acquire", "release", "acq_rel"})
"""`ld`/`st` semantics that make an access atomic (with its scope), as `atom`/`red` are; volatile is not."""

FLUSH_ACCESSES = 1 << 20
"""Accesses buffered before their flags are set (in a few NumPy operations for all of them: per batch, the
cost would be several operations for a few dozen accesses)."""
ALONE_ACCESSES = 1 << 12
"""Batches of at least this many accesses have their flags set one at a time: a batch's accesses lie close
together, so `PageBits.add` indexes them by one run of rows, where those of many batches (an input read over
and over, a few small arrays besides) span several allocations and cost a sort and a search per access."""


@dataclass(frozen=True)
class Spans:
    """A few byte ranges, [start, end) each: what a copy or a memset touches."""

    ranges: tuple[tuple[int, int], ...] = ()

    @classmethod
    def rows(cls, start: int, pitch: int, width: int, height: int) -> Spans:
        """`height` rows of `width` bytes, `pitch` bytes apart (a 2D copy or memset)."""
        return cls(tuple((start + i * pitch, start + i * pitch + width) for i in range(height)))

    def first_in(self, start: int, end: int) -> int | None:
        """The lowest byte of [start, end) in the set, or None."""
        inside = [max(lo, start) for lo, hi in self.ranges if max(lo, start) < min(hi, end)]
        return min(inside) if inside else None


ByteSet = Spans | PageBits


def first_common(a: ByteSet, b: ByteSet) -> int | None:
    """The lowest byte in both sets, or None."""
    if isinstance(a, PageBits) and isinstance(b, PageBits):
        return a.first_common(b)
    if isinstance(a, PageBits):
        a, b = b, a
    found = [x for x in (b.first_in(lo, hi) for lo, hi in a.ranges) if x is not None]
    return min(found) if found else None


@dataclass(frozen=True)
class Overlap:
    """Where two footprints meet: the lowest such byte, and whether each side wrote it."""

    address: int
    first_writes: bool
    second_writes: bool


@dataclass
class Footprint:
    """What one operation read and wrote."""

    reads: ByteSet
    writes: ByteSet

    @property
    def nbytes(self) -> int:
        """The memory it takes (a launch's flags; a few ranges count as nothing)."""
        return sum(s.nbytes for s in (self.reads, self.writes) if isinstance(s, PageBits))

    def touches(self, address: int) -> tuple[bool, bool]:
        """Whether it (reads, writes) the byte at `address`."""
        return tuple(first_common(side, Spans(((address, address + 1),))) is not None for side in (self.reads, self.writes))

    def overlap(self, other: Footprint) -> Overlap | None:
        """The first byte where the two conflict (both touch it, one at least writes it), or None; a byte both
        write is preferred, then one this footprint writes."""
        for mine, theirs, mine_writes, theirs_writes in (
            (self.writes, other.writes, True, True),
            (self.writes, other.reads, True, False),
            (self.reads, other.writes, False, True),
        ):
            address = first_common(mine, theirs)
            if address is not None:
                return Overlap(address, mine_writes, theirs_writes)
        return None


class LaunchFootprint:
    """The global and constant memory one launch read and wrote, as an event sink (see the module docstring).

    Under several schedules it records the first, whose memory the program
    keeps: `bind` is called once per schedule's run, and only the first
    run's accesses count. A launch that is never bound (one simulated
    without a check) records nothing. `footprint` ends the recording. The
    flags stop growing past `budget` bytes: the footprint then holds the first
    accesses only (`complete` is False), so fewer races are seen, never false ones.
    """

    name = "footprint"
    first_run_only = True  # forked schedules need not report to it (`sim.shared_prefix`)

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.complete = True
        self._buffered: dict[tuple[int, bool], list[tuple[np.ndarray, int]]] = {}  # (size, writes) -> (starts, flag)
        self._buffered_count = 0
        self.reads = PageBits()
        self.writes = PageBits()
        self.ctx: DetectorContext | None = None
        self.recording = False
        self._flags: dict[int, int] = {}  # pc -> its flag
        # flag -> (pc, a thread that executed it, op, its scope when it is atomic: the host races only with others)
        self._examples: dict[int, tuple[int, int, str, str | None]] = {}
        self._sites: dict[int, Site] = {}  # flag -> its example as a Site, made once the launch is over

    def bind(self, ctx: DetectorContext) -> None:
        self.recording = self.ctx is None
        self.ctx = self.ctx or ctx

    def on_event(self, ev: Event) -> None:
        if not self.recording or not isinstance(ev, AccessBatch):
            return
        mask = (ev.space == Space.GLOBAL) | (ev.space == Space.CONST)
        if not mask.any():
            return
        lanes = np.flatnonzero(mask) if not mask.all() else slice(None)
        flag = self._flags.get(ev.pc)
        if flag is None:
            flag = self._flags[ev.pc] = min(len(self._flags) + 1, MAX_INSTRUCTION_FLAGS)
            op = {AccessKind.READ: "read", AccessKind.WRITE: "write"}.get(ev.kind, "atomic")
            if ev.sem == "volatile" and ev.kind != AccessKind.ATOMIC:
                op = f"volatile {op}"  # strong but not atomic: the stream checks say so
            atomic = ev.kind == AccessKind.ATOMIC or ev.sem in ATOMIC_SEMANTICS
            self._examples.setdefault(flag, (ev.pc, int(ev.threads[lanes][0]), op, ev.scope if atomic else None))
        starts = ev.addrs[lanes]
        for writes in (False, True) if ev.kind == AccessKind.ATOMIC else (ev.kind == AccessKind.WRITE,):
            self._buffered.setdefault((ev.size, writes), []).append((starts, flag))
        self._buffered_count += len(starts)
        if self._buffered_count >= FLUSH_ACCESSES:
            self._flush()

    def _flush(self) -> None:
        """Set the flags of the buffered accesses, a few NumPy operations for many batches."""
        for (size, writes), batches in self._buffered.items():
            for starts, flags in _pieces(batches):
                (self.writes if writes else self.reads).add(starts, size, flags)
        self._buffered.clear()
        self._buffered_count = 0
        if self.reads.nbytes + self.writes.nbytes > self.budget:
            self.recording = self.complete = False

    def footprint(self) -> Footprint:
        """The launch's footprint, once it is over. The launch's program and geometry are let go (a footprint may
        be kept for many launches), so the sites of its instructions are made now."""
        self._flush()
        self.reads.trim()
        self.writes.trim()
        if self.ctx is not None:
            program, geometry = self.ctx.program, self.ctx.geometry
            self._sites = {flag: make_site(program, geometry, *example) for flag, example in self._examples.items()}
            self.ctx = None
        return Footprint(self.reads, self.writes)

    def repeat(self, earlier: LaunchFootprint) -> None:
        """Be the footprint of `earlier`, a launch this one repeats exactly (`runtime.repeats`): the same bytes,
        touched at the same instructions."""
        self.reads, self.writes, self.complete = earlier.reads, earlier.writes, earlier.complete
        self._sites, self.recording, self.ctx = earlier._sites, False, None

    def site(self, address: int, write: bool) -> Site | None:
        """The instruction that last read (or wrote) the byte at `address`, with a thread that executed it."""
        return self._sites.get((self.writes if write else self.reads).flag_at(address))


def _pieces(batches: list[tuple[np.ndarray, int]]) -> list[tuple[np.ndarray, int | np.ndarray]]:
    """The buffered (starts, flag) batches of one size and kind, in order, as (starts, flags) to set: each batch
    of ALONE_ACCESSES or more alone, the others concatenated run by run. The order of the accesses is kept, so
    where several set one byte the last one's flag stays, as with one concatenation."""
    pieces, run = [], []
    for batch in [*batches, None]:
        if batch is not None and len(batch[0]) < ALONE_ACCESSES:
            run.append(batch)
            continue
        if len(run) == 1:
            pieces.append(run[0])
        elif run:
            flags = np.repeat(np.array([f for _, f in run], dtype=np.uint8), [len(s) for s, _ in run])
            pieces.append((np.concatenate([s for s, _ in run]), flags))
        run = []
        if batch is not None:
            pieces.append(batch)
    return pieces
