"""Locks inferred from the event stream (ScoRD's lock table) and the locksets built from them.

CUDA has no lock instruction: a lock is a compare-and-swap on a lock word
followed by a fence, and an unlock a write of the old value back (usually a
fence, then `atomicExch`). ScoRD infers them per warp with a four-entry lock
table; here the table is per thread (independent thread scheduling lets the
lanes of one warp hold different locks):

- a successful `atom.cas` (it read its compare value and wrote another value:
  the lock was observed free) opens an entry on its address, *valid* but not
  yet held, remembering the value it found (the free value) and whether the
  atomic was device-wide (`gpu`/`sys`) or block-wide (`cta`/`cluster`);
- the thread's next fence makes its valid entries *active* (held); the hold is
  device-wide only when both the atomic and the fence are, else block-wide; a
  compare-and-swap with acquire semantics is active at once;
- a write of the free value to the lock address by the thread holding the
  entry (a store, an `atom.exch`, or a compare-and-swap storing it) releases it.

Like ScoRD's, each table holds at most `SLOTS` (4) locks per thread; a fifth
compare-and-swap evicts the oldest entry, whose lock the thread then no longer
counts as held. A compare-and-swap that claims a word for good (never written
back) leaves an entry that a fence makes active for the rest of the thread:
its holds never match another thread's, so it is harmless, as in ScoRD.

A *lockset* is the set of locks a thread holds, each as (lock address, device
scope?). `Locksets` interns them to small integer ids (0 is the empty set), so
shadow memory stores one int per entry, and caches whether two of them share a
*common lock*: the same address held with overlapping scopes, i.e. both
device-wide, or both by threads of one block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EMPTY, VALID, ACTIVE = 0, 1, 2


@dataclass(frozen=True)
class Hold:
    """One held lock: its address and whether the hold is device-wide (else it covers the holder's block)."""

    addr: int
    wide: bool


class LockTable:
    """Per-thread lock tables as (threads, SLOTS) arrays: address, state, scope and free value of each entry.

    Operations take the lanes of one event and return the threads whose set of
    held locks changed; they loop only over lanes that take part in a lock
    operation (successful compare-and-swaps, writes to an entry's address).
    """

    SLOTS = 4

    def __init__(self, nthreads: int):
        shape = (nthreads, self.SLOTS)
        self.addr = np.zeros(shape, dtype=np.uint64)
        self.state = np.zeros(shape, dtype=np.int8)
        self.wide = np.zeros(shape, dtype=np.bool_)
        self.free = np.zeros(shape, dtype=np.int64)
        self.age = np.zeros(shape, dtype=np.int64)  # when the entry was opened, for eviction
        self._opened = 0

    def open(self, threads: np.ndarray, addrs: np.ndarray, free: np.ndarray, wide: bool, active: bool) -> np.ndarray:
        """Successful compare-and-swaps: an entry per lane (replacing the thread's entry on that address, else
        the first empty one, else the oldest). Returns the threads whose held locks changed."""
        changed = []
        for g, a, f in zip(threads.tolist(), addrs.tolist(), free.tolist()):
            row = self.state[g]
            same = np.flatnonzero((row != EMPTY) & (self.addr[g] == np.uint64(a)))
            empty = np.flatnonzero(row == EMPTY)
            slot = int(same[0]) if len(same) else int(empty[0]) if len(empty) else int(np.argmin(self.age[g]))
            if row[slot] == ACTIVE or active:
                changed.append(g)
            self.addr[g, slot] = a
            self.state[g, slot] = ACTIVE if active else VALID
            self.wide[g, slot] = wide
            self.free[g, slot] = f
            self.age[g, slot] = self._opened
            self._opened += 1
        return np.array(changed, dtype=np.int64)

    def activate(self, threads: np.ndarray, fence_wide: bool) -> np.ndarray:
        """A fence: the threads' valid entries become held, device-wide only if the fence is too. Returns the threads concerned."""
        valid = self.state[threads] == VALID
        rows = np.flatnonzero(valid.any(axis=1))
        if len(rows) == 0:
            return rows
        ts = threads[rows]
        v = valid[rows]
        self.state[ts] = np.where(v, ACTIVE, self.state[ts])
        if not fence_wide:
            self.wide[ts] = self.wide[ts] & ~v
        return ts

    def release(self, threads: np.ndarray, addrs: np.ndarray, stored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Writes of `stored` to `addrs`: entries on that address whose free value is written are released.

        Returns (lanes that released an entry, whether that entry was held)."""
        match = (self.state[threads] != EMPTY) & (self.addr[threads] == addrs[:, None]) & (self.free[threads] == stored[:, None])
        lanes = np.flatnonzero(match.any(axis=1))
        held = np.zeros(len(lanes), dtype=np.bool_)
        for k, i in enumerate(lanes.tolist()):
            g = int(threads[i])
            slot = int(np.flatnonzero(match[i])[0])
            held[k] = self.state[g, slot] == ACTIVE
            self.state[g, slot] = EMPTY
        return lanes, held

    def holds(self, g: int) -> frozenset[Hold]:
        """The locks thread g holds now."""
        slots = np.flatnonzero(self.state[g] == ACTIVE)
        return frozenset(Hold(int(self.addr[g, s]), bool(self.wide[g, s])) for s in slots)


class Locksets:
    """Interned locksets (id 0: no lock) and the cached answer to "do two holds share a common lock?"."""

    def __init__(self) -> None:
        self.sets: list[frozenset[Hold]] = [frozenset()]
        self._ids: dict[frozenset[Hold], int] = {frozenset(): 0}
        self._common: dict[tuple[int, int, bool], bool] = {}

    def intern(self, holds: frozenset[Hold]) -> int:
        i = self._ids.get(holds)
        if i is None:
            i = self._ids[holds] = len(self.sets)
            self.sets.append(holds)
        return i

    def common(self, a: np.ndarray, b: np.ndarray, same_block: np.ndarray) -> np.ndarray:
        """Per pair of lockset ids (held by threads of one block or not): whether they share a common lock."""
        out = np.zeros(len(a), dtype=np.bool_)
        both = np.flatnonzero((a != 0) & (b != 0))
        if len(both) == 0:
            return out
        keys = np.stack([a[both], b[both], same_block[both].astype(np.int64)], axis=1).astype(np.int64)
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        answers = np.array([self._common_pair(int(x), int(y), bool(s)) for x, y, s in uniq], dtype=np.bool_)
        out[both] = answers[inv.reshape(-1)]
        return out

    def _common_pair(self, a: int, b: int, same_block: bool) -> bool:
        key = (a, b, same_block)
        hit = self._common.get(key)
        if hit is None:
            sa, sb = self.sets[a], self.sets[b]
            if same_block:
                hit = bool({h.addr for h in sa} & {h.addr for h in sb})
            else:
                hit = bool({h.addr for h in sa if h.wide} & {h.addr for h in sb if h.wide})
            self._common[key] = hit
        return hit
