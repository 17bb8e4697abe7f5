"""Knowledge objects: what a thread knows beyond its block and warp, sparse while small, dense once large.

The happens-before family of detectors (`hb`, `gwcp`, `lockset`, `tsan`)
keeps, per thread, the clocks of other threads it has synchronised with
through release/acquire and barriers. Most threads know few others, so a
dict per object is compact; but a lock handed from thread to thread makes
every holder know every earlier holder, and then a join walks hundreds of
dict entries in Python. An object that names more than `DENSE_AT` threads
within a dense enough range of thread ids keeps their clocks in one NumPy
array over that range instead, where a join is one `np.maximum`.

Objects are immutable: joins build new ones (or return one of the two
unchanged when it already holds the other), so threads share them by
reference. Nothing assigns to their fields after construction; the class is
not a frozen dataclass only because that makes construction three times as
slow, and a lock kernel builds several objects per critical section. Clocks are int32: a clock grows by at most one per scheduler step.

Along a lock handed from thread to thread nearly every join finds one side
already holding the other, and proving that walks the smaller side. A joined
object therefore remembers, weakly, the two objects it was made of
(`made_of`): joining it again with one of them (the snapshot a lock holder
publishes, with the previous holder's release it was built from) returns it
at once.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

DENSE_AT = 48
"""Threads an object may name before it goes dense (when their ids span at most SPREAD times as many)."""

SPREAD = 8

FEW = 8
"""A sparse object of at most this many threads joins a dense one entry by entry (a thread's own clock, its warp)."""


@dataclass(eq=False, slots=True, weakref_slot=True)
class Knowledge:
    """Per-thread clocks and per-block barrier phases.

    `clock_of(u) >= c`: accesses of u with clock <= c happen before. `phases[b] = p`: accesses
    made in block b before its barrier p (by threads that passed it) happen before. Thread
    clocks live in `threads` (sparse) or in `dense[u - lo]` (-1: unknown), never in both.
    """

    threads: dict[int, int] = field(default_factory=dict)
    phases: dict[int, int] = field(default_factory=dict)
    dense: np.ndarray | None = None
    lo: int = 0
    known: int = 0  # threads a dense object names
    made_of: tuple[weakref.ref, ...] = field(default=(), repr=False)  # the two objects a join made this one of

    # ------------------------------------------------------------------ reading

    def clock_of(self, u: int) -> int:
        d = self.dense
        if d is None:
            return self.threads.get(u, -1)
        i = u - self.lo
        return int(d[i]) if 0 <= i < len(d) else -1

    def knows(self, u: int, clock: int, block: int, phase: int, u_phase_now: int) -> bool:
        if self.clock_of(u) >= clock:
            return True
        return self.phases.get(block, -1) > phase and u_phase_now > phase

    def _count(self) -> int:
        return len(self.threads) if self.dense is None else self.known

    def clocks_of(self, ids: np.ndarray) -> np.ndarray:
        """`clock_of` for many thread ids at once (int64)."""
        out = np.full(len(ids), -1, dtype=np.int64)
        d = self.dense
        if d is not None:
            i = ids - self.lo
            inside = (i >= 0) & (i < len(d))
            out[inside] = d[i[inside]]
        elif self.threads:
            get = self.threads.get
            out[:] = [get(u, -1) for u in ids.tolist()] if len(ids) < 4 * len(self.threads) else self._sparse_lookup(ids)
        return out

    def clock_list(self, ids: list[int]) -> list[int]:
        """`clock_of` for a few thread ids given as a list, as a list: what `clocks_of` gives, without its arrays."""
        d = self.dense
        if d is None:
            get = self.threads.get
            return [get(u, -1) for u in ids]
        lo, n = self.lo, len(d)
        return [int(d[u - lo]) if 0 <= u - lo < n else -1 for u in ids]

    def _sparse_lookup(self, ids: np.ndarray) -> np.ndarray:
        keys = np.fromiter(self.threads.keys(), dtype=np.int64, count=len(self.threads))
        vals = np.fromiter(self.threads.values(), dtype=np.int64, count=len(self.threads))
        order = np.argsort(keys)
        keys, vals = keys[order], vals[order]
        pos = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
        return np.where(keys[pos] == ids, vals[pos], -1)

    def _bounds(self) -> tuple[int, int]:
        if self.dense is not None:
            return self.lo, self.lo + len(self.dense)
        if not self.threads:
            return 0, 0
        return min(self.threads), max(self.threads) + 1

    def _window(self, lo: int, hi: int) -> np.ndarray:
        """The thread clocks over ids [lo, hi) as an array (the object's own when it is exactly that window)."""
        d = self.dense
        if d is not None and self.lo == lo and len(d) == hi - lo:
            return d
        out = np.full(hi - lo, -1, dtype=np.int32)
        if d is not None:
            out[self.lo - lo : self.lo - lo + len(d)] = d
        elif self.threads:
            ids = np.fromiter(self.threads.keys(), dtype=np.int64, count=len(self.threads))
            out[ids - lo] = np.fromiter(self.threads.values(), dtype=np.int32, count=len(self.threads))
        return out

    def _as_dict(self) -> dict[int, int]:
        if self.dense is None:
            return self.threads
        idx = np.flatnonzero(self.dense >= 0)
        return dict(zip((idx + self.lo).tolist(), self.dense[idx].tolist()))

    # ------------------------------------------------------------------ joining

    def with_own(self, g: int, clock: int | None, block: int, phase: int) -> Knowledge:
        """The join with a thread's own knowledge (its clock `clock`, None for none, and its block's barrier phase
        `phase`, 0 for none), without building that object: what a release snapshot adds to what the thread
        acquired, once per release of every lock section."""
        ups_clock = clock is not None and self.clock_of(g) < clock
        ups_phase = phase > 0 and self.phases.get(block, -1) < phase
        if not ups_clock and not ups_phase:
            return self
        if self.dense is not None:
            return self.join(Knowledge({g: clock} if ups_clock else {}, {block: phase} if ups_phase else {}))
        threads = {**self.threads, g: clock} if ups_clock else self.threads
        phases = {**self.phases, block: phase} if ups_phase else self.phases
        made = Knowledge(threads, phases, made_of=(weakref.ref(self),) * 2)
        return made._densified() if len(threads) > DENSE_AT else made

    def join(self, other: Knowledge | None) -> Knowledge:
        """The least upper bound; one of the two itself when it already holds the other."""
        if other is None or other is self or self._made_from(other):
            return self
        if other._made_from(self):
            return other
        phases, pside = _join_dicts(self.phases, other.phases)
        if self.dense is None and other.dense is None:
            threads, tside = _join_dicts(self.threads, other.threads)
            dense, lo = None, 0
        else:
            threads, dense, lo, tside = self._join_threads(other)
        if tside is not None and tside == pside:
            return (self, other)[tside]
        if dense is not None:
            known = (self, other)[tside]._count() if tside is not None else int(np.count_nonzero(dense >= 0))
            return Knowledge({}, phases, dense, lo, known, self._parts(other))
        made = Knowledge(threads, phases, made_of=self._parts(other))
        return made._densified() if len(threads) > DENSE_AT else made

    def _parts(self, other: Knowledge) -> tuple[weakref.ref, ...]:
        return weakref.ref(self), weakref.ref(other)

    def _made_from(self, other: Knowledge) -> bool:
        """Whether a join made this object of `other` (so it holds it)."""
        made_of = self.made_of
        return bool(made_of) and (made_of[0]() is other or made_of[1]() is other)

    def _join_threads(self, other: Knowledge) -> tuple[dict[int, int], np.ndarray | None, int, int | None]:
        """(threads, dense, lo, 0 or 1 when self or other already holds the result) where one side is dense."""
        for dense_side, sparse_side, side in ((self, other, 0), (other, self, 1)):
            if dense_side.dense is not None and sparse_side.dense is None and len(sparse_side.threads) <= FEW:
                ups = {u: c for u, c in sparse_side.threads.items() if dense_side.clock_of(u) < c}
                if not ups:
                    return {}, dense_side.dense, dense_side.lo, side
                lo = min(dense_side.lo, min(ups))
                hi = max(dense_side.lo + len(dense_side.dense), max(ups) + 1)
                if hi - lo <= SPREAD * (dense_side.known + len(ups)):
                    out = dense_side._window(lo, hi)
                    out = out.copy() if out is dense_side.dense else out
                    out[np.fromiter(ups.keys(), dtype=np.int64, count=len(ups)) - lo] = list(ups.values())
                    return {}, out, lo, None
        (alo, ahi), (blo, bhi) = self._bounds(), other._bounds()
        lo, hi = min(alo, blo), max(ahi, bhi)
        if hi - lo > SPREAD * max(self._count(), other._count(), 1):
            threads, side = _join_dicts(self._as_dict(), other._as_dict())
            return threads, None, 0, side
        a, b = self._window(lo, hi), other._window(lo, hi)
        if (b <= a).all():
            return {}, a, lo, 0
        if (a <= b).all():
            return {}, b, lo, 1
        return {}, np.maximum(a, b), lo, None

    def _densified(self) -> Knowledge:
        lo, hi = self._bounds()
        if hi - lo > SPREAD * len(self.threads):
            return self
        return Knowledge({}, self.phases, self._window(lo, hi), lo, len(self.threads), self.made_of)


def _join_dicts(a: dict[int, int], b: dict[int, int]) -> tuple[dict[int, int], int | None]:
    """(the pointwise maximum, 0 or 1 when `a` or `b` already is it): walks the smaller dict only."""
    which = 0 if len(a) >= len(b) else 1
    big, small = (a, b) if which == 0 else (b, a)
    if small.items() <= big.items():
        return big, which
    ups = {k: v for k, v in small.items() if big.get(k, -1) < v}
    if not ups:
        return big, which
    if len(big) == len(small) and all(small.get(k, -1) >= v for k, v in big.items()):
        return small, 1 - which
    return {**big, **ups}, None


def join_all(items) -> Knowledge | None:
    out: Knowledge | None = None
    for k in items:
        if k is None:
            continue
        out = k if out is None else out.join(k)
    return out
