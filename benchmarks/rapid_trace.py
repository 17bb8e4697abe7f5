"""Converting a gpurace trace to RAPID's STD format, so that RAPID's race detection engines can run on the same execution.

RAPID (github.com/umangm/rapid) analyses traces of lock-based programs: one
event per line, `THREAD|OP(ARG)|LOCATION`, with OP `r`/`w` (a variable),
`acq`/`rel` (a lock), `fork`/`join` (a thread); LOCATION must be an integer.
A gpurace trace has one event per instruction and many threads, with scoped
atomics, fences and barriers. The mapping, lane by lane in trace order:

- thread: `T<global thread id>`; location: the event's pc (instruction index),
  so RAPID's "racy lines" count racy instructions;
- plain and strong (volatile, relaxed, acquire, release) loads and stores:
  `r(V<a>)` / `w(V<a>)` for every 4-byte word `a` (hex byte address of the
  word; shared addresses are canonical, so unique per block) the access
  touches: one line for 1- to 4-byte accesses, two for 8, four for 16;
- lock acquire: a successful `atom.cas` (it read the compare value and wrote
  another) -> `acq(L<lock address>)`; on an address already used as a lock, an
  `atom.exch` that read the lock's free value and wrote another also acquires;
- lock release: the holder's `atom.exch` or strong store of the free value ->
  `rel(L<lock address>)`;
- a failed `atom.cas` (a spin-lock attempt): `r(V<a>)` of the lock word;
- any other atomic read-modify-write: `r` then `w` of its words
  (*approximated*: RAPID has no atomics, so two unordered atomics on one word
  are a race there and not in gpurace);
- fences, barriers (`__syncthreads`), warp syncs and thread exits: *dropped*.
  A fence has no counterpart in RAPID (the acquire and release above stand for
  the whole CAS+fence / fence+exch patterns, and their scopes are ignored); a
  barrier cannot be expressed with locks under both HB and WCP, so RAPID
  misses the order it gives (and may report races it prevents). Collective
  operations (shuffles, votes) order no memory and are dropped as well.

`Conversion` counts what was written, dropped and approximated, so that a
comparison can say how faithful the converted trace is: a trace with no
approximated or dropped synchronisation is the same execution for both tools.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from gpurace.sim.events import AccessBatch, AccessKind, ExitEvent, FenceEvent, SyncEvent
from gpurace.trace.model import Trace

DROPPED_SYNC = {"barrier": "barrier", "warp": "warp sync", "collective": "collective"}


@dataclass
class Conversion:
    """What converting one trace produced: `lines` written, gpurace's per-thread `events`, and what was dropped or approximated (per-thread counts by kind)."""

    events: int = 0
    lines: int = 0
    acquires: int = 0
    releases: int = 0
    failed_cas: int = 0
    dropped: Counter = field(default_factory=Counter)
    approximated: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        """One line: lines written, locks, and what RAPID does not see as gpurace does."""
        parts = [f"{self.events} gpurace events -> {self.lines} RAPID lines", f"{self.acquires} acq / {self.releases} rel"]
        parts.append(f"{self.failed_cas} failed CAS as reads")
        if self.dropped:
            parts.append("dropped " + ", ".join(f"{n} {k}" for k, n in sorted(self.dropped.items())))
        if self.approximated:
            parts.append("approximated " + ", ".join(f"{n} {k}" for k, n in sorted(self.approximated.items())))
        return "; ".join(parts)


def lane_events(trace: Trace) -> int:
    """gpurace's per-thread event count: every lane of an access batch, and every thread of a sync, fence or exit."""
    return sum(len(ev.threads) for ev in trace.events)


class _Converter:
    """The state of one conversion: which thread holds which lock, and the free value of every lock seen."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.stats = Conversion()
        self.held: dict[tuple[int, int], int] = {}
        self.free: dict[int, int] = {}

    def event(self, ev) -> None:
        self.stats.events += len(ev.threads)
        if isinstance(ev, AccessBatch):
            self.access(ev)
        elif isinstance(ev, FenceEvent):
            self.stats.dropped["fence"] += len(ev.threads)
        elif isinstance(ev, SyncEvent):
            self.stats.dropped[DROPPED_SYNC.get(ev.kind, ev.kind)] += len(ev.threads)
        elif isinstance(ev, ExitEvent):
            self.stats.dropped["exit"] += len(ev.threads)

    def access(self, ev: AccessBatch) -> None:
        every = np.arange(len(ev.threads))
        if ev.kind == AccessKind.READ:
            self.words(ev, "r", None, every)
        elif ev.atomic_op in ("cas", "exch") or (ev.kind == AccessKind.WRITE and ev.strong and self.held):
            self.lock_lanes(ev)
        elif ev.kind == AccessKind.ATOMIC:
            self.words(ev, "r", "w", every)
            self.stats.approximated["atomic"] += len(every)
        else:
            self.words(ev, "w", None, every)

    def lock_lanes(self, ev: AccessBatch) -> None:
        """A strong write or atomic that may take or release a lock: decided lane by lane (these batches are few and short)."""
        for i in range(len(ev.threads)):
            g, addr = int(ev.threads[i]), int(ev.addrs[i])
            read = None if ev.values is None else int(ev.values[i])
            stored = None if ev.stored is None else int(ev.stored[i])
            free = self.held.get((g, addr))
            if free is not None and stored == free and ev.atomic_op in (None, "exch"):
                del self.held[(g, addr)]
                self.line(g, f"rel(L{addr:x})", ev.pc)
                self.stats.releases += 1
            elif free is None and stored is not None and read is not None and read != stored and self.acquires(ev, i, addr, read):
                self.held[(g, addr)] = read
                self.free.setdefault(addr, read)
                self.line(g, f"acq(L{addr:x})", ev.pc)
                self.stats.acquires += 1
            elif ev.atomic_op == "cas" and ev.compare is not None and read != int(ev.compare[i]):
                self.words(ev, "r", None, np.array([i]))
                self.stats.failed_cas += 1
            elif ev.kind == AccessKind.ATOMIC:
                self.words(ev, "r", "w", np.array([i]))
                self.stats.approximated["atomic"] += 1
            else:
                self.words(ev, "w", None, np.array([i]))

    def acquires(self, ev: AccessBatch, i: int, addr: int, read: int) -> bool:
        if ev.atomic_op == "cas":
            return ev.compare is not None and read == int(ev.compare[i])
        return ev.atomic_op == "exch" and self.free.get(addr) == read

    def words(self, ev: AccessBatch, op: str, then: str | None, lanes: np.ndarray) -> None:
        """`op` (and `then`, for read-modify-writes) of every 4-byte word the given lanes touch, lane by lane in order."""
        nwords = max(1, ev.size // 4)
        base = (ev.addrs[lanes].astype(np.uint64) & ~np.uint64(3))[:, None] + 4 * np.arange(nwords, dtype=np.uint64)
        threads = np.repeat(ev.threads[lanes], nwords)
        pc = ev.pc
        ops = (op,) if then is None else (op, then)
        text = "".join(f"T{t}|{o}(V{a:x})|{pc}\n" for t, a in zip(threads.tolist(), base.ravel().tolist()) for o in ops)
        self.out.write(text)
        self.stats.lines += len(threads) * len(ops)

    def line(self, g: int, op: str, pc: int) -> None:
        self.out.write(f"T{g}|{op}|{pc}\n")
        self.stats.lines += 1


def convert(trace: Trace, out: TextIO) -> Conversion:
    """Write `trace` to `out` in RAPID's STD format (see the module docstring); what was written, dropped and approximated."""
    converter = _Converter(out)
    for ev in trace.events:
        converter.event(ev)
    return converter.stats


def write_std(trace: Trace, path: str | os.PathLike) -> Conversion:
    """`convert` into the file `path`."""
    with open(path, "w") as f:
        return convert(trace, f)
