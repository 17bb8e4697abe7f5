"""Launches that repeat an earlier launch exactly are not simulated again: their outcome is replayed.

Programs time their kernels by launching them again and again on the same
inputs (a warm-up launch, then a loop of a hundred), and each launch of a
deterministic kernel on the same input computes the same thing. A launch is
a function of its kernel, configuration and parameter bytes, the bytes of
global and constant memory it reads, and nothing else that the runtime lets
change between launches unnoticed: the simulator's schedules are fixed, its
clock starts at zero, shared and local memory start zeroed. So when a launch
has the same kernel, grid, block, cluster dimensions, dynamic shared memory
and parameters (tensor maps passed by value included) as an earlier one, no allocation was freed since, the texture and surface objects
are the same, every byte of global memory the earlier launch read and every
byte of constant memory (whose reads the simulator does not record: no two
threads race on memory no kernel writes) holds what it held then, its run
would be the earlier run again, step for step: gpurace writes the bytes it
wrote with the values it wrote, and reports its findings again (they merge
into the first launch's, whose count grows, as they would have).

What a launch read is compared as it was when the launch began. When the
bytes it read and the bytes it wrote are disjoint, that is what they hold
when it ends. When they overlap (an atomic reads and writes, and so does a
kernel that updates its data in place, as a scan's uniform update does on
every pass), the values before the launch are needed: they are kept from the
start of each launch of a configuration whose previous run read and wrote
the same bytes, and the launch qualifies when it read exactly those bytes
again. So an in-place launch repeated on the same data replays from its
fourth launch on (the second records what it reads, the third what those
bytes held before it). The earlier launch also qualifies only if its
footprint was recorded whole, it printed nothing and it ended without a
fault or an uninitialised read (their outcome depends on more than the bytes
read). A checked launch replays only a checked one; an unchecked launch
replays either (its memory is the same: schedule 0 of a check is the plain
simulation).

What is kept per kernel configuration: the latest qualifying launch's read
bytes and written bytes (page flags and values), and for a configuration
whose last run read bytes it wrote, which bytes it read, within `budget`
bytes in all; the oldest are forgotten first. A configuration's first launch
is not recorded (its second is), so programs that never repeat a launch pay
nothing.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field, replace

import numpy as np

from gpurace.detect.bytesets import PAGE_SHIFT, PageBits
from gpurace.detect.findings import Finding
from gpurace.detect.footprint import LaunchFootprint
from gpurace.detect.initcheck import UNINITIALIZED_READ
from gpurace.sim.memory.layout import PAGE_SIZE

MAX_CONFIGURATIONS = 1 << 16
"""Launch configurations remembered as seen; past it, they are forgotten and seen anew."""


class PrintWatch:
    """An event sink that notes whether a launch printed (`sim.printf` calls every `on_print` sink)."""

    name = "print-watch"
    first_run_only = True  # forked schedules need not report to it (`sim.shared_prefix`)

    def __init__(self) -> None:
        self.printed = False

    def on_event(self, ev) -> None:
        pass

    def on_print(self, text: str) -> None:
        self.printed = True


@dataclass(frozen=True)
class Watch:
    """The sinks that see what a launch reads, writes and prints; `sinks` are those to add to the launch's own."""

    footprint: LaunchFootprint
    printing: PrintWatch
    own_footprint: bool
    before: _Bytes | None = None
    """The bytes the previous run of the configuration read, as they were when this launch began, when that run
    wrote some of them (`RepeatedLaunches.remember`)."""

    @property
    def sinks(self) -> list:
        return [self.footprint, self.printing] if self.own_footprint else [self.printing]


@dataclass
class _Bytes:
    """Some bytes of the device's memory: flagged bytes of whole pages (`pages`, sorted; `mask` a row per page)
    and their values, in page order."""

    pages: np.ndarray
    mask: np.ndarray
    values: np.ndarray
    _runs: list[_Run] | None = field(default=None, repr=False)

    @property
    def nbytes(self) -> int:
        return self.pages.nbytes + self.mask.nbytes + self.values.nbytes

    def runs(self) -> list[_Run]:
        """The runs of consecutive pages, worked out once: a launch's bytes are read or written at every launch
        that repeats it."""
        if self._runs is None:
            self._runs = _runs_of(self.pages, self.mask)
        return self._runs


@dataclass(frozen=True)
class _Run:
    """A run of consecutive flagged pages: its first address and byte count, its rows of the mask, and its flagged
    bytes as [start, end) offsets from `first` when they make few spans (an array read or written whole), which
    are copied as slices; None when they are scattered, and picked out by the mask."""

    first: int
    size: int
    rows: slice
    spans: list[tuple[int, int]] | None


MIN_SPAN_BYTES = 1024
"""Average flagged bytes per span from which a run's bytes are copied span by span rather than through its mask (a
slice costs about a microsecond whatever its length, a masked copy about a nanosecond per byte of the run)."""


def _runs_of(pages: np.ndarray, mask: np.ndarray) -> list[_Run]:
    runs = []
    breaks = np.flatnonzero(np.diff(pages) != 1) + 1
    for begin, end in zip(np.concatenate(([0], breaks)), np.concatenate((breaks, [len(pages)]))):
        first, size = int(pages[begin]) << PAGE_SHIFT, int(end - begin) * PAGE_SIZE
        flags = np.concatenate(([False], mask[begin:end].reshape(-1), [False])).view(np.int8)
        edges = np.flatnonzero(np.diff(flags))
        spans = None
        if len(edges) // 2 * MIN_SPAN_BYTES <= size:
            spans = list(zip(edges[0::2].tolist(), edges[1::2].tolist()))
        runs.append(_Run(first, size, slice(int(begin), int(end)), spans))
    return runs


@dataclass
class _Launch:
    """What a qualifying launch read and wrote, and its outcome; a checked launch's `footprint` for the stream
    checks (an unchecked one has none there)."""

    checked: bool
    read: _Bytes
    written: _Bytes
    constants: np.ndarray
    footprint: LaunchFootprint | None
    findings: list[Finding]
    steps: int

    @property
    def nbytes(self) -> int:
        return self.read.nbytes + self.written.nbytes + self.constants.nbytes


class RepeatedLaunches:
    """The qualifying launches of one run, by kernel configuration (see the module docstring)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.replayed = 0
        self._launches: dict[tuple, _Launch] = {}
        self._in_place: dict[tuple, _Bytes] = {}  # what the last run read, where it wrote some
        self._recent: OrderedDict[tuple, None] = OrderedDict()  # configurations with something kept, least recent first
        self._bytes = 0
        self._seen: set[tuple] = set()  # the configurations launched so far

    @staticmethod
    def key(device, module: int, mangled: str, grid, block, cluster, shared_bytes: int, params: bytes) -> tuple:
        """What must be equal for a launch to repeat another, besides the memory it reads; `cluster`: the launch's
        cluster dimensions, None for the kernel's own (which its module fixes)."""
        textures = tuple(device.textures.items())
        clusters = None if cluster is None else tuple(cluster)
        return (module, mangled, tuple(grid), tuple(block), clusters, shared_bytes, bytes(params), device.heap.frees, textures)

    def watch(self, key: tuple, device, footprint: LaunchFootprint | None, checked: bool) -> Watch | None:
        """What a launch needs so that it can be remembered: the command's own footprint of a checked launch (it
        records the first schedule's run), else one that records the plain run; a `PrintWatch`; and the bytes the
        previous run read, as they are now, when that run wrote some of them. None for the first launch of its
        configuration: most programs never repeat a launch (its parameters change), and those that do, repeat
        it many times, so remembering from the second launch on costs one more run."""
        if key not in self._seen:
            if len(self._seen) >= MAX_CONFIGURATIONS:
                self._seen.clear()
            self._seen.add(key)
            return None
        before = None
        reads = self._in_place.get(key)
        if reads is not None:
            values = _view_values(device, reads)
            before = None if values is None else replace(reads, values=values)
        if footprint is not None and checked:
            return Watch(footprint, PrintWatch(), own_footprint=False, before=before)
        footprint = LaunchFootprint(budget=self.budget)
        footprint.recording = True  # never bound by a plain simulation: record from the start
        return Watch(footprint, PrintWatch(), own_footprint=True, before=before)

    def replay(self, key: tuple, device, checked: bool, footprint: LaunchFootprint | None) -> tuple[list[Finding], int] | None:
        """The findings and steps of the launch `key` repeats, with its writes made again; None when none does."""
        earlier = self._launches.get(key)
        if earlier is None or (checked and not earlier.checked):
            return None
        if not np.array_equal(_constant_memory(device), earlier.constants):
            return None
        now = _view_values(device, earlier.read)
        if now is None or not np.array_equal(now, earlier.read.values):
            return None
        _write_values(device, earlier.written)
        if checked and footprint is not None:
            footprint.repeat(earlier.footprint)
        self._recent.move_to_end(key)
        self.replayed += 1
        return [copy.copy(f) for f in earlier.findings], earlier.steps

    def remember(
        self, key: tuple, device, checked: bool, watch: Watch, findings: list[Finding], steps: int, faults: Collection[str],
    ) -> None:
        """Keep a launch that just ran, if it qualifies (module docstring), for the launches that repeat it; `faults`
        are the kinds of finding that end a kernel with an error."""
        footprint = watch.footprint
        self._forget(key)
        if watch.printing.printed or any(f.kind in faults or f.kind == UNINITIALIZED_READ for f in findings):
            return
        touched = footprint.footprint()
        if not footprint.complete:
            return
        read, written = _flagged(device, touched.reads), _flagged(device, touched.writes)
        if read is None or written is None:
            return
        if touched.reads.first_common(touched.writes) is not None:
            # what it read is what those bytes held when it began: known when the previous run read the same ones
            before = watch.before
            self._remember_reads(key, read)
            if before is None or not (np.array_equal(before.pages, read.pages) and np.array_equal(before.mask, read.mask)):
                return
            read = before
        launch = _Launch(
            checked, read, written, _constant_memory(device).copy(), footprint if checked else None,
            [copy.copy(f) for f in findings], steps,
        )
        if launch.nbytes > self.budget:
            return
        self._launches[key] = launch
        self._bytes += launch.nbytes
        self._recent[key] = None
        self._fit()

    def clear(self) -> None:
        self._launches.clear()
        self._in_place.clear()
        self._recent.clear()
        self._seen.clear()
        self._bytes = 0

    def _remember_reads(self, key: tuple, read: _Bytes) -> None:
        """Keep which bytes a run of `key` read (not their values), for the next launch of `key` to note what they
        hold when it begins."""
        reads = replace(read, values=np.zeros(0, dtype=np.uint8))
        if reads.nbytes > self.budget:
            return
        self._in_place[key] = reads
        self._bytes += reads.nbytes
        self._recent[key] = None
        self._recent.move_to_end(key)
        self._fit()

    def _fit(self) -> None:
        """Forget what is kept of the configurations launched least recently until the rest fits the budget."""
        while self._bytes > self.budget:
            self._forget(next(iter(self._recent)))

    def _forget(self, key: tuple) -> None:
        """Forget what is kept of configuration `key`."""
        self._recent.pop(key, None)
        for table in (self._launches, self._in_place):
            kept = table.pop(key, None)
            if kept is not None:
                self._bytes -= kept.nbytes


def _constant_memory(device) -> np.ndarray:
    """Every allocated byte of the device's constant memory (a view)."""
    arena = device.const_arena
    return arena.view(arena.base, arena.table.top - arena.base)


def _run_views(device, where: _Bytes) -> list[tuple[_Run, np.ndarray]] | None:
    """Each run of `where` with its bytes in the device's arenas (a writable view); None when a run lies outside
    them."""
    views = []
    for run in where.runs():
        arena = device.arena_of(run.first)
        if arena is None or not arena.contains(run.first + run.size - 1):
            return None
        views.append((run, arena.view(run.first, run.size)))
    return views


def _flagged(device, bits: PageBits) -> _Bytes | None:
    """The bytes `bits` flags, with the values they hold now; None when some lie outside the device's arenas."""
    found = _Bytes(bits.pages, bits.bits[bits.rows] != 0, np.zeros(0, dtype=np.uint8))
    values = _view_values(device, found)
    if values is None:
        return None
    found.values = values
    return found


def _view_values(device, where: _Bytes) -> np.ndarray | None:
    """The values the bytes of `where` hold now, in page order (a copy)."""
    if len(where.pages) == 0:
        return np.zeros(0, dtype=np.uint8)
    views = _run_views(device, where)
    if views is None:
        return None
    parts = []
    for run, flat in views:
        if run.spans is None:
            parts.append(flat.reshape(-1, PAGE_SIZE)[where.mask[run.rows]])
        else:
            parts.extend(flat[start:end] for start, end in run.spans)
    return np.concatenate(parts)


def _write_values(device, where: _Bytes) -> None:
    """Write the values of `where` back to its bytes."""
    if len(where.pages) == 0:
        return
    at = 0
    for run, flat in _run_views(device, where):
        if run.spans is None:
            mask = where.mask[run.rows]
            count = int(mask.sum())
            flat.reshape(-1, PAGE_SIZE)[mask] = where.values[at : at + count]
            at += count
        else:
            for start, end in run.spans:
                flat[start:end] = where.values[at : at + end - start]
                at += end - start
