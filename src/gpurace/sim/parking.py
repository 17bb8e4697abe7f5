"""Parked spinners: a thread whose loop only re-reads memory sleeps until what it read changes, as a futex would.

Without parking, a spin loop (waiting for a lock, a flag, a ticket) runs one
iteration every round, so a lock taken in turn by every block leader costs
one iteration per waiter per holder: O(blocks^2). With it, a waiter runs a
few iterations per wait, and the lock costs O(blocks).

**When a thread parks.** The evidence is the livelock check's, per thread:
at two consecutive round ends the thread stands at the same pc with the same
register values (the engine's look), and in the round between (a *watched*
round) it wrote no memory and ran nothing whose outcome depends on other
threads except through memory it read (no barrier, warp collective, texture
or surface access, asynchronous copy or call: `UNSAFE_OPCODES`). Such an
iteration is a function of the bytes it read: as long as they hold the values
it read, running it again reads the same values, emits the same events and
comes back to the same state. So the thread parks with those bytes (shared
and global memory, by canonical address, with the values read; local memory
is its own and parameters and constants never change) and leaves the rounds.
(When a byte changed after it was read, a lock taken and released later in
the round, the thread is ready at once: it parks all the same and wakes in
its turn, below.) A parked thread is what a slow thread would be: the
schedule in which it did not run is a schedule the hardware may take. A
loop that also sleeps (`nanosleep` yields too) alternates between two states
from one round end to the next, so it is not found, and spins as before.

**When a thread wakes.** By value, as `futex_wait` compares: at a round end
after something changed memory, a parked thread whose bytes no longer all
hold the values it read may run again (a write of the same value wakes
nobody). Threads parked on the same bytes and values (the waiters of one
lock) wake one at a time, first the one the schedule lets win a contest
(`Engine.wake_priority`: the lowest thread under `min-pc`, as atomics applied
in thread order let the lowest lane win), as long as each woken thread writes
what they wait on (it took the lock; its release changes the word again and
wakes the next); when a woken thread leaves those bytes alone (a flag every
waiter reads), the rest of its group wakes together at the next round end. A
thread that never wakes is a livelock, reported as one (`Engine`).

**What the detectors miss.** Only the skipped iterations' events: reads (and
failed compare-and-swaps) of the same bytes, with the same values, by a
thread whose clocks have not moved. They add nothing: a race with a write
shows on the read before parking or after waking (the write changes the
bytes, or it is a same-value write the woken read races with all the same),
and synchronisation through the skipped reads (a failed CAS as an acquire
pattern with a later fence) repeats an edge from the same write the earlier
identical read already drew. Woken threads run in full.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.memory import Space

UNSAFE_OPCODES = frozenset(
    {
        # wait for, or read the registers of, other threads
        "bar", "barrier", "mbarrier", "shfl", "vote", "match", "redux", "activemask", "elect",
        # read or write memory the watch does not record
        "tex", "tld4", "suld", "sust", "txq", "suq", "cp", "ldmatrix", "stmatrix", "wmma", "mma",
        # calls (frames, parameters, printf) and endings
        "call", "ret", "trap", "brkpt", "exit",
    }
)  # fmt: skip
"""Opcodes after which a watched thread does not park: skipping their repetition could change what happens."""

PARKED = 4
"""The engine's status of a parked thread (beside its RUN, BAR, WARP and DONE)."""

_WATCHED_SPACES = (int(Space.GLOBAL), int(Space.SHARED))

_EMPTY = np.zeros(0, dtype=np.int64)
_NO_BYTES = np.zeros(0, dtype=np.uint64)
_NO_VALUES = np.zeros(0, dtype=np.uint8)


def _mix(addrs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A 64-bit hash per (address, value) byte; sums of it name a read set whatever the order of its bytes."""
    h = (addrs ^ (values.astype(np.uint64) << np.uint64(56))) * np.uint64(0x9E3779B97F4A7C15)
    return (h ^ (h >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)


def _keys(groups: np.ndarray, addrs: np.ndarray) -> np.ndarray:
    """A 64-bit key per (group, address) byte, to match writes against read sets."""
    salt = groups.astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93)
    return _mix(addrs, np.zeros(len(addrs), dtype=np.uint8)) ^ salt


class Parking:
    """The parked threads of one launch in groups (one per read set), and the watched threads of the current round.

    A group's read set is stored once, as *cells* (byte address, value, group), so a round end costs the
    distinct bytes waited on and the groups that changed, not the parked threads: the waiters of one lock are
    one group of four cells however many they are. Every step of a round end is a vectorised operation over
    groups and members, so many small groups (a lock per warp) cost no Python loop either.
    """

    def __init__(self, eng):
        from gpurace.sim.engine import RUN

        self.eng = eng
        self._run = RUN
        n = eng.geo.nthreads
        self.unsafe_pc = np.array([ins.opcode in UNSAFE_OPCODES for ins in eng.program.instructions], dtype=np.bool_)
        # Watched threads: their reads and writes this round are recorded, to park them at its end (and the
        # writes of the members woken alone, `_trying`).
        self.watched = np.zeros(n, dtype=np.bool_)
        self.tainted = np.zeros(n, dtype=np.bool_)  # watched threads that wrote or ran an unsafe instruction
        self._watch = _EMPTY
        self._reads: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (thread, byte address, value) per byte
        self._writes: list[tuple[np.ndarray, np.ndarray]] = []  # (thread, byte address) per byte `_trying` wrote
        # Parked threads, ordered by group and, within one, by wake order: thread, group, wake key.
        self._m_thread = _EMPTY
        self._m_group = _EMPTY
        self._m_key = _EMPTY
        # Groups, by id: the read-set hash naming each, whether it is still in use, the member woken alone last
        # (-1: none) and whether that member wrote a byte of the read set since; the groups in use by hash.
        self._g_sig = _NO_BYTES
        self._g_alive = np.zeros(0, dtype=np.bool_)
        self._trial = _EMPTY
        self._trial_wrote = np.zeros(0, dtype=np.bool_)
        self._lookup_sig = _NO_BYTES
        self._lookup_gid = _EMPTY
        # Cells: the bytes each group waits on, with the values its members read.
        self._cell_addr = _NO_BYTES
        self._cell_value = _NO_VALUES
        self._cell_group = _EMPTY
        self._cell_keys = _NO_BYTES  # `_keys` of every cell, sorted
        self._trying = np.full(n, -1, dtype=np.int32)  # the group of each member woken alone, else -1
        self._deferred = False  # a parked thread may run again but was left for a later round

    @property
    def count(self) -> int:
        """How many threads are parked."""
        return len(self._m_thread)

    # ------------------------------------------------------------------ what watched threads do

    def read(self, idx: np.ndarray, acc, size: int, raw: np.ndarray) -> None:
        """Threads `idx` read `size` bytes each at `acc` and got `raw` (as `Memory.load` or `Memory.atomic` returns)."""
        lanes = self.watched[idx]
        if not lanes.any():
            return
        ok = acc.ok
        if not ok[lanes].all():
            self.tainted[idx[lanes & ~ok]] = True
        lanes &= ok & ((acc.space == _WATCHED_SPACES[0]) | (acc.space == _WATCHED_SPACES[1]))
        if not lanes.any():
            return
        values = np.ascontiguousarray(raw).view(np.uint8).reshape(len(idx), size)[lanes]
        addrs = acc.canonical[lanes].astype(np.uint64)[:, None] + np.arange(size, dtype=np.uint64)
        self._reads.append((np.repeat(idx[lanes], size), addrs.ravel(), values.ravel()))

    def wrote(self, idx: np.ndarray, acc, size: int, lanes: np.ndarray | None = None) -> None:
        """Threads `idx` (those of `lanes`, where given) wrote `size` bytes each at `acc`."""
        watched = self.watched[idx]
        trying = self._trying[idx] >= 0
        if lanes is not None:
            watched &= lanes
            trying &= lanes
        if watched.any():
            self.tainted[idx[watched]] = True
        if trying.any():
            trying &= acc.ok & ((acc.space == _WATCHED_SPACES[0]) | (acc.space == _WATCHED_SPACES[1]))
            addrs = acc.canonical[trying].astype(np.uint64)[:, None] + np.arange(size, dtype=np.uint64)
            self._writes.append((np.repeat(idx[trying], size), addrs.ravel()))

    def ran_unsafe(self, idx: np.ndarray) -> None:
        """Threads `idx` ran an instruction of `UNSAFE_OPCODES`."""
        self.tainted[idx] |= self.watched[idx]

    # ------------------------------------------------------------------ round ends

    def settle(self, running: np.ndarray, same: np.ndarray, progress: bool) -> tuple[np.ndarray, np.ndarray]:
        """At a round end: park the threads of `running` (ascending; `same`: each back where the look before saw
        it) that qualify, wake parked threads whose bytes changed (`progress`: memory may have changed this
        round), and watch the next round's suspects.

        Returns the next round's threads (`running` less those that parked, plus those that woke) and those that woke.
        """
        suspects = running[same]
        if self._park(suspects):
            status = self.eng.status
            running = running[status[running] != PARKED]
            suspects = suspects[status[suspects] != PARKED]
        self._note_trial_writes()
        woken = self._wake(progress)
        self._watch_next(suspects)
        return (np.union1d(running, woken) if len(woken) else running), woken

    def parked(self) -> np.ndarray:
        """Every parked thread, ascending."""
        return np.sort(self._m_thread)

    def _park(self, suspects: np.ndarray) -> bool:
        """Park the suspects that were watched this round and did nothing unsafe, with the bytes they read.

        Bytes written since they were read (a lock taken and released later in the round) make the thread
        ready at once: it is then one of the waiters that `_wake` lets go in turn."""
        cand = suspects[self.watched[suspects] & ~self.tainted[suspects]]
        if not len(cand):
            return False
        if self._reads:
            t = np.concatenate([r[0] for r in self._reads])
            a = np.concatenate([r[1] for r in self._reads])
            v = np.concatenate([r[2] for r in self._reads])
            mine = np.isin(t, cand)
            order = np.argsort(t[mine], kind="stable")
            t, a, v = t[mine][order], a[mine][order], v[mine][order]
        else:
            t, a, v = _EMPTY, _NO_BYTES, _NO_VALUES
        sig = np.zeros(len(cand), dtype=np.uint64)
        if len(t):
            np.add.at(sig, np.searchsorted(cand, t), _mix(a, v))
        self.eng.status[cand] = PARKED
        usig, first, inv = np.unique(sig, return_index=True, return_inverse=True)
        gids = self._group_ids(usig, cand[first], t, a, v)[inv]
        thread = np.concatenate((self._m_thread, cand))
        group = np.concatenate((self._m_group, gids))
        key = np.concatenate((self._m_key, self.eng.wake_priority(cand)))
        order = np.lexsort((key, group))
        self._m_thread, self._m_group, self._m_key = thread[order], group[order], key[order]
        return True

    def _group_ids(self, sigs, firsts, t, a, v) -> np.ndarray:
        """The groups of read-set hashes `sigs` (ascending), made for those not in use from the bytes (`t`, `a`,
        `v`, ordered by thread) that `firsts`, one thread of each, read."""
        n = len(self._lookup_sig)
        at = np.minimum(np.searchsorted(self._lookup_sig, sigs), max(n - 1, 0))
        known = (self._lookup_sig[at] == sigs) if n else np.zeros(len(sigs), dtype=np.bool_)
        gids = np.where(known, self._lookup_gid[at] if n else 0, -1)
        new = np.flatnonzero(~known)
        if not len(new):
            return gids
        base = len(self._g_sig)
        made = base + np.arange(len(new))
        gids[new] = made
        self._g_sig = np.concatenate((self._g_sig, sigs[new]))
        self._g_alive = np.concatenate((self._g_alive, np.ones(len(new), dtype=np.bool_)))
        self._trial = np.concatenate((self._trial, np.full(len(new), -1, dtype=np.int64)))
        self._trial_wrote = np.concatenate((self._trial_wrote, np.zeros(len(new), dtype=np.bool_)))
        lo = np.searchsorted(t, firsts[new], "left")
        lens = np.searchsorted(t, firsts[new], "right") - lo
        take = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        cell_group = np.repeat(made, lens)
        self._cell_addr = np.concatenate((self._cell_addr, a[take]))
        self._cell_value = np.concatenate((self._cell_value, v[take]))
        self._cell_group = np.concatenate((self._cell_group, cell_group))
        self._cell_keys = np.sort(np.concatenate((self._cell_keys, _keys(cell_group, a[take]))))
        self._index_groups()
        return gids

    def _index_groups(self) -> None:
        """Sort the hashes of the groups in use, for `_group_ids` to find a read set's group."""
        alive = np.flatnonzero(self._g_alive)
        order = np.argsort(self._g_sig[alive], kind="stable")
        self._lookup_sig, self._lookup_gid = self._g_sig[alive][order], alive[order]

    def _note_trial_writes(self) -> None:
        """Mark the groups whose member woken alone wrote a byte of their read set this round."""
        if not self._writes or not len(self._cell_keys):
            return
        t = np.concatenate([w[0] for w in self._writes])
        g = self._trying[t]
        mine = g >= 0
        if not mine.any():
            return
        g = g[mine]
        k = _keys(g, np.concatenate([w[1] for w in self._writes])[mine])
        at = np.minimum(np.searchsorted(self._cell_keys, k), len(self._cell_keys) - 1)
        self._trial_wrote[g[self._cell_keys[at] == k]] = True

    def _wake(self, progress: bool) -> np.ndarray:
        """Wake the parked threads whose bytes changed: the first of each group, or the whole group when the
        member woken alone before left its bytes alone (module docstring)."""
        if not self.count or not (progress or self._deferred):
            return _EMPTY
        changed = self.eng.mem.bytes_at(self._cell_addr) != self._cell_value
        if not changed.any():
            self._deferred = False
            return _EMPTY
        hit = np.zeros(len(self._g_sig), dtype=np.bool_)
        hit[self._cell_group[changed]] = True
        at = np.flatnonzero(hit[self._m_group])  # members of the changed groups, group by group
        group = self._m_group[at]
        first = np.r_[True, group[1:] != group[:-1]] if len(at) else np.zeros(0, dtype=np.bool_)
        groups = group[first]
        whole = (self._trial[groups] >= 0) & ~self._trial_wrote[groups]
        take = first | whole[np.cumsum(first) - 1]
        # the member woken alone before is done with; a group woken one at a time tries its first member now
        old = self._trial[groups]
        self._trying[old[old >= 0]] = -1
        single, leader = groups[~whole], self._m_thread[at[first]][~whole]
        self._trial[groups] = -1
        self._trial[single] = leader
        self._trial_wrote[single] = False
        self._trying[leader] = single
        self._deferred = bool((~take).any())
        hit[groups] = False
        gone = np.flatnonzero(hit)  # changed while no member was left to wake
        if len(gone):
            self._bury(gone)
        if not len(at):
            return _EMPTY
        woken = np.sort(self._m_thread[at[take]])
        stay = np.ones(len(self._m_thread), dtype=np.bool_)
        stay[at[take]] = False
        self._m_thread, self._m_group, self._m_key = self._m_thread[stay], self._m_group[stay], self._m_key[stay]
        self.eng.status[woken] = self._run
        return woken

    def _bury(self, groups: np.ndarray) -> None:
        """Forget `groups`, whose bytes changed while no member was left to wake (a thread parking on the same
        bytes again starts a new group), so that round ends do not keep comparing their cells."""
        old = self._trial[groups]
        self._trying[old[old >= 0]] = -1
        self._trial[groups] = -1
        self._g_alive[groups] = False
        live = self._g_alive[self._cell_group]
        self._cell_addr, self._cell_value = self._cell_addr[live], self._cell_value[live]
        self._cell_group = self._cell_group[live]
        self._cell_keys = np.sort(_keys(self._cell_group, self._cell_addr))
        self._index_groups()

    def _watch_next(self, suspects: np.ndarray) -> None:
        """Watch the suspects next round (and the writes of the members woken alone, which decide how their
        groups wake)."""
        old = self._watch
        self.watched[old] = False
        self.tainted[old] = False
        self._reads.clear()
        self._writes.clear()
        self._watch = suspects
        self.watched[suspects] = True
        self.eng.watching = len(suspects) > 0 or bool((self._trial >= 0).any())
