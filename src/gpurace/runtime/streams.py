"""Streams and events: the happens-before between the host and the device's work, and the races it leaves.

A program's kernel launches, copies and memsets are operations queued on
streams; the host thread issues them and, by synchronising, waits for them.
gpurace runs each operation at once, in issue order, which is one order a
GPU could have run them in; whether that order was *guaranteed* is what
this module works out, with a vector clock per agent (the host, and every
stream) as in the GPU race checkers we build on. The rules are CUDA's
(Programming Guide, "Asynchronous Concurrent Execution"; runtime API,
"API synchronization behavior"):

* an operation comes after everything the host did before issuing it, and
  after every earlier operation of its stream;
* the legacy default stream (stream 0, `cudaStreamLegacy`) waits for all
  earlier work of every blocking stream, and work issued later to a blocking
  stream waits for it; streams created with `cudaStreamNonBlocking` take no
  part in this. The per-thread default stream (`cudaStreamPerThread`, and
  stream 0 in the calls of a program built with `--default-stream
  per-thread`) is a blocking stream;
* `cudaEventRecord` marks a point of a stream; `cudaStreamWaitEvent` makes a
  stream's later work wait for it; `cudaEventSynchronize`, a successful
  `cudaEventQuery`, `cudaStreamSynchronize`, `cudaStreamQuery` and
  `cudaDeviceSynchronize` make the host wait (every call returns success
  here, as everything already ran);
* a call that is synchronous with respect to the host (`issue(...,
  blocking=True)`, as the device server decides: `cudaMemcpy` except device
  to device, `cudaMemset` of managed or page-locked memory, an asynchronous
  copy into pageable memory) makes the host wait for the operation itself,
  and `cudaFree` for all the device's work.

Two operations race when neither comes before the other and their
footprints (`detect.footprint`) conflict: the same bytes, one at least a
write. Each new operation is compared with the operations the host has not
yet waited for (`pending`): one the host has waited for comes before
everything issued afterwards. The host's own accesses to managed and
page-locked memory race in the same way with the pending operations that
touch the same bytes (`host_access`; `protection.py` says how they are seen).

Atomics are the exception, as in the PTX memory model: two atomic accesses
whose scopes include both threads never race. Kernels of different launches
run on one device, so the atomics of two kernels at `.gpu` or `.sys` scope do
not race with each other; the host is outside the device, so only `.sys`
atomics (`atomicAdd_system`, ...) are safe against it, and the host's side is
taken to be atomic then: on x86-64 a relaxed atomic load or store is the same
`mov` instruction as a plain one, so gpurace cannot tell them apart. A
footprint keeps the last instruction that touched each byte, so an atomic
there hides an earlier plain access of the same byte (a race missed, never
a false one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gpurace.detect.findings import ERROR, WARNING, Address, Finding, Site
from gpurace.detect.footprint import Footprint, Overlap

HOST = 0
"""The host thread's agent number (the program's host threads are one agent)."""

LEGACY_HANDLES = (0, 1)  # stream 0 and cudaStreamLegacy
PER_THREAD_HANDLE = 2  # cudaStreamPerThread

MAX_PENDING = 4096
"""Operations kept for comparison while the host never waits; the oldest are dropped beyond it, or beyond the
memory budget the timeline is given for their footprints (then fewer races are seen, never false ones)."""

DEVICE_WIDE = frozenset({"gpu", "sys"})
"""Scopes of atomics that include every thread of every kernel of the device (a footprint site's `scope` is set
for atomic accesses only)."""

Clock = dict[int, int]


def _join(a: Clock, b: Clock) -> Clock:
    out = dict(a)
    for agent, tick in b.items():
        if tick > out.get(agent, 0):
            out[agent] = tick
    return out


def _before(a: Clock, b: Clock) -> bool:
    """Whether everything `a` has seen, `b` has seen too."""
    return all(b.get(agent, 0) >= tick for agent, tick in a.items())


@dataclass
class Stream:
    """One stream: its agent, how it orders with the legacy stream, and the clock of its latest operation."""

    agent: int
    name: str
    legacy: bool = False
    blocking: bool = True
    clock: Clock = field(default_factory=dict)


@dataclass
class Operation:
    """One queued operation: what it is, its footprint, and, once `Timeline.issue` queued it, its stream and clock.

    `site(address, write)` gives the `Site` of the access to `address`: the
    host call for a copy or memset, the kernel instruction for a launch.
    """

    what: str
    footprint: Footprint
    site: Callable[[int, bool], Site | None]
    launch: dict | None = None
    stream: Stream | None = None
    clock: Clock = field(default_factory=dict)
    host_use: tuple | None = None  # (pages written, pages only read) of host-visible memory, for `protection`
    nbytes: int = 0  # its footprint's memory, counted once when it is queued (the footprint no longer changes)


class Timeline:
    """The streams, events and pending operations of one program (see the module docstring); `describe` names
    an address's allocation and memory space, and `budget` bounds the memory pending footprints keep."""

    def __init__(self, describe: Callable[[int], tuple[Address, str]], budget: int) -> None:
        self.describe = describe
        self.budget = budget
        self.host: Clock = {HOST: 1}
        self._every_stream: list[Stream] = []  # destroyed ones too: the device still runs their work
        self.legacy = self._new_stream("the default stream", legacy=True)
        self.streams: dict[int, Stream] = {h: self.legacy for h in LEGACY_HANDLES}
        self.streams[PER_THREAD_HANDLE] = self._new_stream("the per-thread default stream")
        self.events: dict[int, Clock] = {}
        self.pending: list[Operation] = []
        self.version = 0  # changes whenever `pending` does
        self._pending_bytes = 0  # the footprints' memory of `pending`
        self._pending_per_stream: dict[int, int] = {}  # stream agent -> its operations in `pending`
        self._created = 0

    def _new_stream(self, name: str, *, legacy: bool = False, blocking: bool = True) -> Stream:
        stream = Stream(len(self._every_stream) + 1, name, legacy=legacy, blocking=blocking)
        self._every_stream.append(stream)
        return stream

    # ------------------------------------------------------------------ streams and events

    def create_stream(self, handle: int, non_blocking: bool, graph_node: bool = False) -> None:
        """`cudaStreamCreate*` returned `handle` (a new stream, whatever an earlier one with that handle was);
        `graph_node`: a stream of the runtime's own, on which a node of a CUDA graph is replayed."""
        if graph_node:
            self.streams[handle] = self._new_stream("the stream of a graph node", blocking=not non_blocking)
            return
        self._created += 1
        self.streams[handle] = self._new_stream(f"stream {self._created}", blocking=not non_blocking)

    def destroy_stream(self, handle: int) -> None:
        """`cudaStreamDestroy` of a created stream: its queued work still runs, and its handle may be reused."""
        self.streams.pop(handle, None)

    def known_stream(self, handle: int) -> bool:
        return handle in self.streams

    @staticmethod
    def built_in(handle: int) -> bool:
        """Whether `handle` names a default stream, which no call creates or destroys."""
        return handle in LEGACY_HANDLES or handle == PER_THREAD_HANDLE

    def record_event(self, event: int, stream: int) -> None:
        """`cudaEventRecord(event, stream)`: the event completes when the stream's work so far has."""
        self.events[event] = self._issue(self.streams[stream])

    def wait_event(self, stream: int, event: int) -> None:
        """`cudaStreamWaitEvent(stream, event)`: the stream's later work waits for the event (a no-op if unrecorded)."""
        s = self.streams[stream]
        s.clock = _join(s.clock, self.events.get(event, {}))

    # ------------------------------------------------------------------ the host waits

    def host_waits_for_stream(self, stream: int) -> None:
        self._host_learns(self.streams[stream].clock)

    def host_waits_for_event(self, event: int) -> None:
        self._host_learns(self.events.get(event, {}))

    def host_waits_for_device(self) -> None:
        clock: Clock = {}
        for stream in self._every_stream:
            clock = _join(clock, stream.clock)
        self._host_learns(clock)

    def _host_learns(self, clock: Clock) -> None:
        self.host = _join(self.host, clock)
        still = [op for op in self.pending if not _before(op.clock, self.host)]
        if len(still) != len(self.pending):
            self._set_pending(still)

    def _set_pending(self, pending: list[Operation]) -> None:
        """`pending` becomes the pending operations (fewer of them: the host waited, or the budget ran out)."""
        self.pending = pending
        self.version += 1
        self._pending_bytes = sum(op.nbytes for op in pending)
        self._pending_per_stream = {}
        for op in pending:
            self._pending_per_stream[op.stream.agent] = self._pending_per_stream.get(op.stream.agent, 0) + 1

    # ------------------------------------------------------------------ operations

    def issue(self, stream: int, op: Operation, blocking: bool) -> list[Finding]:
        """Queue `op` on `stream` (the host waits for it when `blocking`); the races it has with earlier work."""
        op.stream = self.streams[stream]
        op.clock = self._issue(op.stream)
        # An earlier operation of the same stream always comes before (a stream's clock only grows), so only
        # the other streams' pending work is compared: a program that never waits keeps many launches pending.
        findings = []
        if len(self.pending) > self._pending_per_stream.get(op.stream.agent, 0):
            others = [earlier for earlier in self.pending if earlier.stream is not op.stream]
            findings = [race for earlier in others if (race := self._race(earlier, op)) is not None]
        if blocking:
            self._host_learns(op.clock)
        else:
            op.nbytes = op.footprint.nbytes
            self.pending.append(op)
            self.version += 1
            self._pending_bytes += op.nbytes
            self._pending_per_stream[op.stream.agent] = self._pending_per_stream.get(op.stream.agent, 0) + 1
            if len(self.pending) > MAX_PENDING or self._pending_bytes > self.budget:
                self._set_pending(self._within_limits(self.pending[-MAX_PENDING:]))
        return findings

    def _within_limits(self, pending: list[Operation]) -> list[Operation]:
        """The latest of `pending` whose footprints fit the budget (the oldest are forgotten first)."""
        kept = 0
        for index in range(len(pending) - 1, -1, -1):
            kept += pending[index].nbytes
            if kept > self.budget:
                return pending[index + 1 :]
        return pending

    def host_access(self, address: int, write: bool, host: Site) -> Finding | None:
        """The host read (or wrote) the byte at `address` at `host`: the race with the latest pending operation
        that writes it (or touches it), if any."""
        for op in reversed(self.pending):
            reads, writes = op.footprint.touches(address)
            if writes or (write and reads):
                other = op.site(address, writes)
                if other is None:
                    return None
                if other.scope == "sys":  # a system-scope atomic: the host may be using atomics too
                    continue
                where, space = self.describe(address)
                cause = (
                    f"{op.what} on {op.stream.name} {_verb(writes)} these bytes and the host {_verb(write)} them "
                    f"before waiting for it: no cudaStreamSynchronize, cudaEventSynchronize or cudaDeviceSynchronize "
                    "orders the two"
                )
                severity = ERROR
                if other.scope is not None:
                    cause += f" (the kernel's atomic has scope {other.scope}, which does not include the host)"
                elif other.op.startswith("volatile"):
                    # Whatever the host did (a plain, volatile or atomic access: the same instruction), a volatile
                    # access is not atomic: the race of a shared flag, a warning as volatile races are in kernels.
                    severity = WARNING
                    cause += " (the kernel's access is volatile, and volatile is not atomic: use atomics for a flag the host shares)"
                finding = Finding("data-race", severity, cause, (other, host), space=space, address=where)
                finding.details = {"streams": [op.stream.name, "the host"]}
                finding.launch = op.launch
                return finding
        return None

    def comes_before(self, clock: Clock, stream: int) -> bool:
        """Whether what happened at `clock` comes before work issued to `stream` now."""
        return _before(clock, self._seen_by(self.streams[stream]))

    def stream_clock(self, stream: int) -> Clock:
        """The clock of `stream`'s latest operation."""
        return dict(self.streams[stream].clock)

    def _seen_by(self, stream: Stream) -> Clock:
        """What a new operation on `stream` comes after: the stream's work, the host's, and the legacy stream's
        ordering with the blocking streams."""
        clock = _join(stream.clock, self.host)
        if stream.legacy:
            for other in self._every_stream:
                if other.blocking and not other.legacy:
                    clock = _join(clock, other.clock)
        elif stream.blocking:
            clock = _join(clock, self.legacy.clock)
        return clock

    def _issue(self, stream: Stream) -> Clock:
        """The clock of a new operation on `stream`, which becomes the stream's; the host moves on past it."""
        clock = self._seen_by(stream)
        clock[stream.agent] = clock.get(stream.agent, 0) + 1
        stream.clock = clock
        self.host = {**self.host, HOST: self.host[HOST] + 1}
        return clock

    def _race(self, earlier: Operation, later: Operation) -> Finding | None:
        if _before(earlier.clock, later.clock):
            return None
        overlap = earlier.footprint.overlap(later.footprint)
        if overlap is None:
            return None
        return race_finding(earlier, later, overlap, self.describe(overlap.address))


def race_finding(earlier: Operation, later: Operation, overlap: Overlap, where: tuple[Address, str]) -> Finding | None:
    """The data race between two unordered operations that touch the byte `overlap` names (`where`: that byte's
    allocation and offset, and its memory space)."""
    address, space = where
    first = earlier.site(overlap.address, overlap.first_writes)
    second = later.site(overlap.address, overlap.second_writes)
    if first is None or second is None or (first.scope in DEVICE_WIDE and second.scope in DEVICE_WIDE):
        return None
    cause = (
        f"{earlier.what} on {earlier.stream.name} {_verb(overlap.first_writes)} these bytes and {later.what} on "
        f"{later.stream.name} {_verb(overlap.second_writes)} them, and nothing orders the two: no event, stream "
        "wait or synchronisation makes one wait for the other"
    )
    finding = Finding("data-race", ERROR, cause, (first, second), space=space, address=address)
    finding.details = {"streams": [earlier.stream.name, later.stream.name]}
    finding.launch = later.launch or earlier.launch
    return finding


def _verb(writes: bool) -> str:
    return "writes" if writes else "reads"
