"""The event stream: what the simulator tells the detectors.

Each executed memory instruction yields one `AccessBatch` holding every thread
that executed it in that step (the way binary-instrumentation tools coalesce
per-warp events), in ascending thread order, which is also the order in which
the accesses took effect. Synchronisation (barriers, warp syncs, fences) and
thread exits are events of their own. Events are delivered in execution order
to an `EventSink`; a detector is a sink. Thread-private local memory produces
no access events (no other thread can touch it).

Events carry the static instruction index `pc` (into `Program.instructions`)
instead of source text: detectors never look at PTX, and reports resolve the
pc to source lines at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

import numpy as np


class AccessKind(IntEnum):
    READ = 0
    WRITE = 1
    ATOMIC = 2  # read-modify-write (atom/red)


SCOPE_RANK = {"cta": 0, "cluster": 1, "gpu": 2, "sys": 3}


@dataclass(frozen=True, slots=True)
class AccessBatch:
    """One executed memory instruction: all its threads at once.

    `threads` are global thread ids; `addrs` canonical addresses (unique across
    the launch: shared addresses of different blocks never coincide); `space`
    the resolved space of each lane. `strong` marks atomics, `.volatile` and
    `.relaxed/.acquire/.release` accesses; `scope` is the instruction's scope
    (PTX default `gpu` for atomics without one, `sys` for volatile), `sem` its
    semantics (`relaxed`, `acquire`, `release`, `acq_rel`, `volatile`, or None
    for weak). `atomic_op` names the read-modify-write operation (`add`,
    `cas`, `exch`, ...) and `values` the value read (loads/atomics: old value)
    when the detector needs it to infer locks; `stored` the value written
    (stores, the new value of a `cas`) and `compare` the compare value of a
    `cas` (it succeeded where `values == compare`). A store's batch (`st`) is
    delivered before the store takes effect, so memory still holds what the
    last earlier write left there (`Memory.bytes_at`).
    """

    seq: int
    pc: int
    kind: AccessKind
    threads: np.ndarray
    addrs: np.ndarray
    size: int
    space: np.ndarray
    strong: bool
    scope: str | None
    sem: str | None
    atomic_op: str | None = None
    values: np.ndarray | None = None
    stored: np.ndarray | None = None
    compare: np.ndarray | None = None


@dataclass(frozen=True, slots=True)
class SyncEvent:
    """A synchronisation completed: threads with the same `groups` value synchronised with each other.

    `kind` is "barrier" (`bar.sync`/`barrier.sync`/`bar.red`; groups are block
    ids), "warp" (`bar.warp.sync`; groups are global warp id * 2**32 + mask,
    so lanes synchronise only with the lanes their mask names) or
    "collective" (`shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`: they
    exchange registers in lockstep but, under the PTX memory model, do not
    order memory accesses; detectors must not treat them as synchronisation),
    "cluster-arrive" (releasing `barrier.cluster.arrive`s) or "cluster-wait"
    (completed `barrier.cluster.wait`s, which acquire every release of their
    phase; groups of both are phases, `sim.clusters.phase_key`).
    One event covers every block or warp released in the same step. `pcs` is
    the pc at which each thread arrived.
    """

    seq: int
    kind: str
    threads: np.ndarray
    groups: np.ndarray
    pcs: np.ndarray


@dataclass(frozen=True, slots=True)
class FenceEvent:
    """`membar`/`fence` executed by `threads`, with its scope (`cta`, `gpu`, `sys`) and semantics (`sc`, `acq_rel`)."""

    seq: int
    pc: int
    threads: np.ndarray
    scope: str
    sem: str


@dataclass(frozen=True, slots=True)
class ExitEvent:
    """`threads` finished (exit or return from the kernel)."""

    seq: int
    pc: int
    threads: np.ndarray


Event = AccessBatch | SyncEvent | FenceEvent | ExitEvent


class EventSink(Protocol):
    """Anything that consumes the event stream (detectors, recorders)."""

    def on_event(self, event: Event) -> None: ...
