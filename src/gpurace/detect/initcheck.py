"""Uninitialised reads, as compute-sanitizer's initcheck: a kernel reads memory that nothing wrote.

Two event sinks, one per memory space, find them; each reports one
`uninitialized-read` finding per reading source line, at the read, with the
allocation and offset of its first instance and the number of instances:

* `SharedInitCheck`, in every `check`: shared memory holds garbage when a
  block starts, so a load (or the read half of an atomic) of a shared byte
  that no thread of the block has written earlier in the launch reads
  garbage. A flag byte per byte of every block's shared memory (`nblocks` x
  the shared stride: as much as the simulated shared memory itself) records
  which bytes the block's stores and atomics wrote.
* `GlobalInitCheck`, under `gpurace exec`: `cudaMalloc` memory holds garbage
  until the program writes it, with a copy, a memset or a kernel. What was
  written persists across the program's launches in a `DeviceWrites`, kept
  by the runtime's heap; the sink checks each read of the launch against it
  and collects the launch's writes, which `commit` adds to it once the
  launch is over.

Reads are checked byte by byte (a 4-byte load of a word of which one byte
was written reads three garbage bytes), but the flags are read and written
as machine words, one per access of up to 8 bytes, as the simulator's own
stores do: every performed access is naturally aligned, so its flag bytes
are one aligned word of the flag array. Within one atomic instruction, lanes
at the same address take effect one after the other, so only the first of
them can read an unwritten value. Local memory is out of scope.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.findings import ERROR, Finding, describe_address, make_site
from gpurace.limits import Limits, format_size
from gpurace.sim.events import AccessBatch, AccessKind, Event
from gpurace.sim.memory.layout import CANON_OFFSET_MASK, CANON_OWNER_MASK, CANON_OWNER_SHIFT, PAGE_SIZE, Space
from gpurace.words import plural

UNINITIALIZED_READ = "uninitialized-read"

_PAGE_SHIFT = np.uint64(PAGE_SIZE.bit_length() - 1)
_PAGE_MASK = np.uint64(PAGE_SIZE - 1)
_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

MAX_RUNS_PER_PAGE = 8
"""A page kernels wrote in at most this many runs of bytes is kept as ranges (16 bytes a run), not as a bitmap."""


# --------------------------------------------------------------------------
# Flags: one uint8 per byte (1 = written), read and written a word per access
# --------------------------------------------------------------------------


def _word_layout(size: int) -> tuple[type, int]:
    """(word type, words per access) of the flag words covering one access of `size` bytes."""
    width = min(8, size & -size)
    return _WORDS[width], size // width


def _full_word(word: type) -> np.integer:
    """The flag word of an access whose bytes are all written."""
    return word(int.from_bytes(b"\x01" * np.dtype(word).itemsize, "little"))


def _word_indices(index: np.ndarray, size: int) -> np.ndarray:
    """Indices, into the flags viewed as words, of the accesses starting at flag `index`: (lanes,) when one word
    covers an access, else (lanes, words)."""
    word, count = _word_layout(size)
    first = index // np.dtype(word).itemsize
    return first if count == 1 else first[:, None] + np.arange(count, dtype=first.dtype)


def _read_flags(flags: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
    """(lanes, words) flag words of the accesses of `size` bytes starting at flag `index` (int64)."""
    word, count = _word_layout(size)
    return flags.view(word)[_word_indices(index, size)].reshape(len(index), count)


def _set_flags(flags: np.ndarray, index: np.ndarray, size: int) -> None:
    word, _ = _word_layout(size)
    flags.view(word)[_word_indices(index, size)] = _full_word(word)


def _flag_bytes(words: np.ndarray, size: int) -> np.ndarray:
    """(lanes, size) bools: the flag of each byte of the accesses whose flag `words` are given (little-endian)."""
    return words.view(np.uint8).reshape(len(words), size).astype(np.bool_)


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


def _reading(ev: AccessBatch, lanes: np.ndarray | slice) -> np.ndarray | slice:
    """Those of `lanes` whose read can see a value nothing wrote: every lane of a load; of an atomic, only the
    first lane at each address, since the lanes after it read what it wrote."""
    if ev.kind == AccessKind.READ:
        return lanes
    _, first = np.unique(ev.addrs[lanes], return_index=True)
    return _at(lanes, np.sort(first))


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
        self.stride = ctx.memory.shared.stride
        nbytes = ctx.geometry.nblocks * self.stride
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
            self._check_reads(ev, _reading(ev, lanes))
        if ev.kind != AccessKind.READ:
            _set_flags(self.written, self._index(ev, lanes), ev.size)

    def _index(self, ev: AccessBatch, lanes: np.ndarray | slice) -> np.ndarray:
        """Index into `written` of the first byte each of `lanes` of `ev` accesses."""
        canonical = ev.addrs[lanes].astype(np.int64)
        block = (canonical >> CANON_OWNER_SHIFT) & CANON_OWNER_MASK
        return block * self.stride + (canonical & CANON_OFFSET_MASK)

    def _check_reads(self, ev: AccessBatch, lanes: np.ndarray | slice) -> None:
        words = _read_flags(self.written, self._index(ev, lanes), ev.size)
        partly = (words != _full_word(words.dtype.type)).any(axis=1)
        if not partly.any():
            return
        unwritten = ev.size - _flag_bytes(words[partly], ev.size).sum(axis=1)
        self.reads.add(ev, _at(lanes, np.flatnonzero(partly)), unwritten)

    def finish(self) -> list[Finding]:
        return self.reads.findings(
            "no thread of its block had written in this launch: shared memory holds garbage until written"
        )


# --------------------------------------------------------------------------
# Global memory of a program (`gpurace exec`)
# --------------------------------------------------------------------------


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted; linear time when they already are (a batch's addresses usually are)."""
    if len(values) > 1 and not (values[1:] >= values[:-1]).all():
        return np.unique(values)
    return values[np.concatenate([[True], values[1:] != values[:-1]])]


class PageBits:
    """Written bytes of a 64-bit address space: a flag byte per byte, kept only for the pages that hold one.

    Pages are PAGE_SIZE bytes, rows of one array (`bits`), found through the
    sorted page numbers (`pages`, with their rows in `rows`), so setting and
    reading the flags of a batch of accesses is a few NumPy operations
    whichever pages they fall in. A naturally aligned access never straddles
    a page. It costs PAGE_SIZE bytes per page that holds a written byte.
    """

    def __init__(self) -> None:
        self.pages = np.zeros(0, dtype=np.uint64)
        self.rows = np.zeros(0, dtype=np.int64)
        self.bits = np.zeros((0, PAGE_SIZE), dtype=np.uint8)

    @property
    def nbytes(self) -> int:
        return self.bits.nbytes

    def add(self, starts: np.ndarray, size: int) -> None:
        """Set the flags of every byte of the accesses of `size` bytes at `starts` (uint64)."""
        if not len(starts):
            return
        run = self._run_of_rows(starts)
        if run is None:
            self._make(_distinct(starts >> _PAGE_SHIFT))
            run = self._run_of_rows(starts)
        _set_flags(self.bits.reshape(-1), self._index(starts, run), size)

    def read(self, starts: np.ndarray, size: int) -> np.ndarray:
        """(lanes, words) flag words of the accesses of `size` bytes at `starts` (uint64); 0 on pages not held."""
        word, count = _word_layout(size)
        if not len(self.pages) or not len(starts):
            return np.zeros((len(starts), count), dtype=word)
        run = self._run_of_rows(starts)
        if run is not None:
            return _read_flags(self.bits.reshape(-1), self._index(starts, run), size)
        pages = starts >> _PAGE_SHIFT
        at = np.minimum(np.searchsorted(self.pages, pages), len(self.pages) - 1)
        held = self.pages[at] == pages
        out = np.zeros((len(starts), count), dtype=word)
        out[held] = _read_flags(self.bits.reshape(-1), self._index(starts[held], None), size)
        return out

    def update(self, other: PageBits) -> None:
        """Add every written byte of `other`."""
        if len(other.pages):
            rows = self._rows(other.pages)  # before `self.bits` is read: it may grow
            self.bits[rows] |= other.bits[other.rows]

    def take_runs(self, pages: np.ndarray, max_runs: int) -> tuple[np.ndarray, np.ndarray]:
        """The written bytes of those of `pages` (held, distinct) that hold at most `max_runs` runs of them, as
        [starts, ends) ranges; those pages are dropped."""
        at = np.searchsorted(self.pages, pages)
        row_of, first, last = _runs(self.bits[self.rows[at]])
        few = np.bincount(row_of, minlength=len(at)) <= max_runs
        taken = few[row_of]
        base = pages[row_of[taken]] << _PAGE_SHIFT
        keep = np.ones(len(self.pages), dtype=np.bool_)
        keep[at[few]] = False
        self._keep(keep)
        return base + first[taken], base + last[taken] + np.uint64(1)

    def discard_pages(self, lo: int, hi: int) -> None:
        """Forget the pages that lie wholly inside [lo, hi) (freed memory)."""
        first, last = np.uint64(-(-lo // PAGE_SIZE)), np.uint64(hi // PAGE_SIZE)
        self._keep((self.pages < first) | (self.pages >= last))

    def _keep(self, keep: np.ndarray) -> None:
        """Drop the pages where `keep` is False, giving their rows back."""
        if keep.all():
            return
        self.bits = self.bits[self.rows[keep]]
        self.pages = self.pages[keep]
        self.rows = np.arange(len(self.pages), dtype=np.int64)

    def _run_of_rows(self, starts: np.ndarray) -> tuple[int, np.uint64] | None:
        """When every page from the lowest to the highest of `starts` is held, in consecutive rows (the usual
        case: a batch's accesses are close together, and pages made together get consecutive rows): the row
        and the address of the lowest. None otherwise."""
        lo, hi = starts.min() >> _PAGE_SHIFT, starts.max() >> _PAGE_SHIFT
        i = int(np.searchsorted(self.pages, lo))
        j = i + int(hi - lo)
        if j >= len(self.pages) or self.pages[i] != lo or self.pages[j] != hi:
            return None
        rows = self.rows[i : j + 1]
        if rows[-1] - rows[0] != j - i or not (np.diff(rows) == 1).all():
            return None
        return int(rows[0]), lo << _PAGE_SHIFT

    def _index(self, starts: np.ndarray, run: tuple[int, np.uint64] | None) -> np.ndarray:
        """Index into the flattened `bits` of the byte at each of `starts`, all on held pages (in the `run` of
        rows `_run_of_rows` found, if it found one)."""
        if run is not None:
            row, address = run
            return (starts - address).astype(np.int64) + row * PAGE_SIZE
        rows = self.rows[np.searchsorted(self.pages, starts >> _PAGE_SHIFT)]
        return rows * PAGE_SIZE + (starts & _PAGE_MASK).astype(np.int64)

    def _rows(self, pages: np.ndarray) -> np.ndarray:
        """The row of each of `pages` (distinct, sorted), making rows for pages not held yet."""
        self._make(pages)
        return self.rows[np.searchsorted(self.pages, pages)]

    def _make(self, pages: np.ndarray) -> None:
        """Make rows for those of `pages` (distinct, sorted) not held yet, in consecutive rows."""
        new = np.setdiff1d(pages, self.pages, assume_unique=True)
        if len(new):
            count = len(self.pages)
            self.bits = np.concatenate([self.bits, np.zeros((len(new), PAGE_SIZE), dtype=np.uint8)])
            held = np.concatenate([self.pages, new])
            order = np.argsort(held, kind="stable")
            self.pages = held[order]
            self.rows = np.concatenate([self.rows, np.arange(count, count + len(new), dtype=np.int64)])[order]


def _runs(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, first byte, last byte) of each run of set bytes in the rows of `flags` (uint8, rows of PAGE_SIZE)."""
    whole = (flags.view(np.uint64) == _full_word(np.uint64)).all(axis=1)  # the usual case: one run
    part = np.flatnonzero(~whole)
    written = flags[part].astype(np.bool_)
    begins = written & ~np.pad(written[:, :-1], ((0, 0), (1, 0)))
    ends = written & ~np.pad(written[:, 1:], ((0, 0), (0, 1)))
    rows, first = np.nonzero(begins)
    _, last = np.nonzero(ends)
    whole_rows = np.flatnonzero(whole)
    return (
        np.concatenate([whole_rows, part[rows]]),
        np.concatenate([np.zeros(len(whole_rows), dtype=np.uint64), first.astype(np.uint64)]),
        np.concatenate([np.full(len(whole_rows), PAGE_SIZE - 1, dtype=np.uint64), last.astype(np.uint64)]),
    )


class Ranges:
    """A set of bytes as sorted, disjoint [start, end) ranges (few: one per allocation, split by partial writes)."""

    def __init__(self) -> None:
        self.starts = np.zeros(0, dtype=np.uint64)
        self.ends = np.zeros(0, dtype=np.uint64)

    def add(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self._combine(starts, ends, lambda mine, theirs: mine | theirs)

    def remove(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self._combine(starts, ends, lambda mine, theirs: mine & ~theirs)

    def contains(self, addrs: np.ndarray) -> np.ndarray:
        """Whether each address of `addrs` (any shape, uint64) is in the set."""
        return _inside(self.starts, self.ends, addrs)

    def touched(self, starts: np.ndarray, size: int) -> np.ndarray | None:
        """Per access of `size` bytes at `starts` (uint64): whether any of its bytes is in the set; None when none
        is. The range starting last at or before an access's last byte is the one to test: an earlier range
        that reaches into the access would reach into that one too."""
        if not len(self.starts) or not len(starts):
            return None
        lo, hi = starts.min(), starts.max() + np.uint64(size - 1)
        at = np.searchsorted(self.starts, hi, side="right") - 1
        if at < 0 or self.ends[at] <= lo:  # the usual case: no range reaches into the batch's span
            return None
        if self.starts[at] <= lo and hi < self.ends[at]:  # the batch lies in one range
            return np.ones(len(starts), dtype=np.bool_)
        at = np.searchsorted(self.starts, starts + np.uint64(size - 1), side="right") - 1
        some = (at >= 0) & (starts < self.ends[np.maximum(at, 0)])
        return some if some.any() else None

    def _combine(self, starts: np.ndarray, ends: np.ndarray, keep) -> None:
        """The set becomes `keep(in self, in the given ranges)`, computed on the segments between all boundaries."""
        starts, ends = np.asarray(starts, dtype=np.uint64), np.asarray(ends, dtype=np.uint64)
        nonempty = starts < ends
        starts, ends = starts[nonempty], ends[nonempty]
        if not len(starts):
            return
        order = np.argsort(starts, kind="stable")
        given = Ranges()
        given.starts, given.ends = _merged(starts[order], ends[order])
        points = np.unique(np.concatenate([self.starts, self.ends, given.starts, given.ends]))
        lo, hi = points[:-1], points[1:]
        kept = keep(self.contains(lo), given.contains(lo))
        self.starts, self.ends = _merged(lo[kept], hi[kept])


def _inside(starts: np.ndarray, ends: np.ndarray, addrs: np.ndarray) -> np.ndarray:
    """Whether each of `addrs` lies in one of the sorted, disjoint ranges [starts, ends)."""
    if not len(starts):
        return np.zeros(addrs.shape, dtype=np.bool_)
    at = np.searchsorted(starts, addrs, side="right") - 1
    return (at >= 0) & (addrs < ends[np.maximum(at, 0)])


def _merged(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranges sorted by start, overlapping or touching ones joined."""
    if not len(starts):
        return starts, ends
    reach = np.maximum.accumulate(ends)
    begins = np.concatenate([[True], starts[1:] > reach[:-1]])
    group_ends = np.concatenate([np.flatnonzero(begins)[1:] - 1, [len(starts) - 1]])
    return starts[begins], reach[group_ends]


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
            self._check_reads(ev, _reading(ev, lanes))
        if ev.kind != AccessKind.READ:
            self.this_run.add(ev.addrs[lanes], ev.size)

    def _check_reads(self, ev: AccessBatch, lanes: np.ndarray | slice) -> None:
        """Report those of `lanes` that read a byte of `writes.unwritten` that no kernel has flagged written."""
        starts = ev.addrs[lanes]
        words = self.writes.kernel_written.read(starts, ev.size) | self.this_run.read(starts, ev.size)
        partly = (words != _full_word(words.dtype.type)).any(axis=1)
        if not partly.any():
            return
        addrs = starts[partly, None] + np.arange(ev.size, dtype=np.uint64)
        unwritten = (self.writes.unwritten.contains(addrs) & ~_flag_bytes(words[partly], ev.size)).sum(axis=1)
        bad = unwritten > 0
        self.reads.add(ev, _at(lanes, np.flatnonzero(partly)[bad]), unwritten[bad])

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
