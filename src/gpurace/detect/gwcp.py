"""Predictive race detection: GPU weak causal precedence (GWCP, after PreDataR).

Happens-before orders two critical sections of one lock in whichever order the
schedule ran them, so a race that needs the other lock order stays hidden: if
block 0 writes `x` inside its critical section and block 1 takes the same lock
afterwards and then writes `x` outside it, the lock orders the writes in this
run, but block 1 could have taken the lock first. GWCP keeps from a lock only
what every schedule of the same path must keep:

(a) a release is ordered before a later access inside another critical section
    of the same lock that conflicts with an access of the released section
    (scopes overlapping: same block, or both sections gpu/sys-scoped);
(b) a release is ordered before a later release of the same lock when the
    earlier section's acquire is already ordered before the later release;
(c) barriers and warp syncs order all participants, as in `hb`;
(d) everything else (fences with flags, release/acquire operations) is the
    scoped happens-before of `hb`, and GWCP is closed under composition with
    happens-before on both sides.

Each thread therefore carries two sparse knowledge objects on top of the
shared block and warp levels (barrier phases, lane clocks): `hknow`, exactly
what `hb` knows (lock edges included), and `know`, what GWCP orders before the
thread; races are checked against `know`. A release on a lock location
publishes both (what the releaser happens-after, and what it is GWCP-after);
a release on any other location publishes happens-before knowledge for both,
which is the left composition of (d). Barriers give every participant the join
of all participants' happens-before knowledge as GWCP knowledge.

Lock inference (from the event stream, no source patterns):

- acquire: a successful `atom.cas` (the value read equals the compare value and
  differs from the value stored: the lock was observed free), or, on a location
  already known as a lock, an `atom.exch` that read its free value and wrote
  another (an exchange alone is also how flags are raised, and a flag taken for
  a lock would lose its ordering); completed by a later fence of the same
  thread or by acquire semantics on the atomic;
- release: a strong write (`atom.exch`, `st.release`, volatile/relaxed store)
  of the free value to the same location by the thread holding it, with
  release semantics or a fence after the acquire;
- scope: gpu-wide when the atomic and the fences are gpu or sys scoped, else
  block-wide (a cta-scoped lock orders nothing across blocks, as in `hb`).

A location becomes a lock when its first critical section is released; until
then its release/acquire edges count fully (they may hide a race, never report
one). Accesses that fit no pattern are ordinary synchronisation for `hb`.

Memory: (a) keeps, per lock and 4-byte word, the join of the release knowledge
of the sections that accessed it and of those that wrote it (what a later
write and a later read conflict with), per scope class (all gpu-wide sections;
per block, its gpu-wide and its block-wide ones: `WordKnowledge`; PreDataR's
lock-location clocks); (b) keeps, per lock, the completed sections of each
thread that took it (WCP's Acq/Rel queues, only for threads that take part in
locks). WCP keeps a cursor per pair of threads into those queues; here the
cursor is the releasing thread's own knowledge: a thread that knows another's
clock at a release knows everything that release published (knowledge only
grows, and every object naming a thread's clock holds its happens-before
knowledge at that clock), so sections released at or before the clock it knows
are skipped without a join. Threads outside critical
sections cost nothing beyond `hb`. Accesses inside critical sections are
bookkept lane by lane: cheap where sections are serial and a batch has few
lanes, the main cost where every lane holds a lock of its own (a lock per
element: batches of thousands of lanes, each its own section).

What it misses: accesses made inside a critical section by threads that did
not take the lock (one thread locks, then a barrier lets the block work) are
ordered through the barrier, as in `hb`; and barrier knowledge includes the
lock holder's own accesses before the barrier.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from gpurace.detect import scalar_paths
from gpurace.detect.base import DetectorContext
from gpurace.detect.hb import HappensBeforeDetector, Release
from gpurace.detect.knowledge import Knowledge, join_all
from gpurace.detect.lock_confinement import LockConfinement
from gpurace.detect.rules import Cause
from gpurace.sim.events import SCOPE_RANK, AccessBatch, AccessKind, ExitEvent, FenceEvent

WIDE = SCOPE_RANK["gpu"]


@dataclass(slots=True)
class LockRelease(Release):
    """A release as `hb` publishes it, plus `wcp`: what an acquirer is GWCP-after (all of `knowledge` except on lock locations)."""

    wcp: Knowledge = field(default_factory=Knowledge)

    def including(self, other: Release) -> Release:
        return LockRelease(
            self.knowledge.join(other.knowledge), self.thread, self.block, self.scope, self.pc, self.wcp.join(other.wcp)
        )


@dataclass(slots=True)
class CriticalSection:
    """An open critical section of one thread: the lock, its free value, the acquire point and the words accessed."""

    lock: int
    free: int
    block: int
    wide: bool
    acq_clock: int
    acq_phase: int
    held: bool  # the acquire pattern completed (fence, or acquire semantics)
    fenced: bool = False  # a fence followed the acquire: a store of the free value now releases
    accessed: set[int] = field(default_factory=set)  # words read or written
    writes: set[int] = field(default_factory=set)


@dataclass(slots=True)
class DoneSection:
    """A released critical section, kept for rule (b): its acquire point and its release knowledge."""

    thread: int
    block: int
    wide: bool
    acq_clock: int
    acq_phase: int
    rel_clock: int
    released: Knowledge


@dataclass
class WordKnowledge:
    """Rule (a)'s lock-location knowledge for one word, by scope class: the join of the release knowledge of
    every gpu-wide section (`wide`), and per block of its gpu-wide (`wide_of`) and block-wide (`narrow`)
    sections. A later section's query joins at most two of them (`overlapping`), so its cost does not grow
    with the number of blocks that took the lock."""

    wide: Knowledge | None = None
    wide_of: dict[int, Knowledge] = field(default_factory=dict)
    narrow: dict[int, Knowledge] = field(default_factory=dict)

    def add(self, block: int, wide: bool, snap: Knowledge) -> None:
        if wide:
            self.wide = snap if self.wide is None else snap.join(self.wide)
        table = self.wide_of if wide else self.narrow
        prev = table.get(block)
        table[block] = snap if prev is None else snap.join(prev)

    def overlapping(self, block: int, wide: bool, into: Knowledge | None) -> Knowledge | None:
        """`into` joined with the knowledge of the sections whose scope overlaps a section of `block` with scope
        `wide` (`_overlap`)."""
        for k in (self.wide if wide else self.wide_of.get(block), self.narrow.get(block) if self.narrow else None):
            if k is not None:
                into = k if into is None else into.join(k)
        return into


@dataclass
class LockHistory:
    """A confirmed lock: lock-location knowledge for rule (a), released sections for rule (b).

    `done[t]`: thread t's released sections, in order (so their release clocks ascend); `latest[t]` the clock of
    t's last release, in the order the threads first released it. Once the lock has more than
    `scalar_paths.MAX_TAKERS` takers, the same as arrays too, `takers[:count]` and `latest_clocks[:count]`, so
    that a release finds the threads it may not know yet in one comparison (`GwcpDetector._unknown_takers`).

    `last`: the release knowledge of the latest section; `chained`: whether it knows every taker's latest
    release (true while each section's holder happened after the section before it, as a lock handed from
    holder to holder is), so that a release whose GWCP knowledge holds `last` knows every taker already."""

    free: int
    accessed: dict[int, WordKnowledge] = field(default_factory=dict)  # by word, the sections that read or wrote it
    writes: dict[int, WordKnowledge] = field(default_factory=dict)
    done: dict[int, list[DoneSection]] = field(default_factory=dict)
    latest: dict[int, int] = field(default_factory=dict)
    takers: np.ndarray | None = None
    latest_clocks: np.ndarray | None = None
    slot: dict[int, int] = field(default_factory=dict)
    last: Knowledge | None = None
    chained: bool = True

    def knows_every_taker(self, k: Knowledge | None) -> bool:
        """Whether `k` surely knows every taker's latest release (from the objects alone, without a walk)."""
        last = self.last
        return self.chained and k is not None and last is not None and (k is last or k._made_from(last))

    def add(self, section: DoneSection, base: Knowledge | None) -> None:
        """A released section, whose holder's happens-before knowledge before its own clock was `base`."""
        self.chained = self.last is None or (self.chained and base is not None and (base is self.last or base._made_from(self.last)))
        self.last = section.released
        t = section.thread
        done = self.done.get(t)
        if done is None:
            done = self.done[t] = []
        done.append(section)
        latest = self.latest
        latest[t] = section.rel_clock
        if self.takers is not None:
            self._set_array(t, section.rel_clock)
        elif len(latest) > scalar_paths.MAX_TAKERS:
            self.takers = np.fromiter(latest, dtype=np.int64, count=len(latest))
            self.latest_clocks = np.fromiter(latest.values(), dtype=np.int64, count=len(latest))
            self.slot = {u: i for i, u in enumerate(latest)}

    def conflicting(self, words: range, write: bool, block: int, wide: bool) -> Knowledge | None:
        """The join of the release knowledge of the earlier sections, of scope overlapping a section of `block`
        with scope `wide`, that wrote `words` (for a write, that accessed them): what rule (a) orders before
        an access to `words` inside that section."""
        out = None
        table = self.accessed if write else self.writes
        for w in words:
            entry = table.get(w)
            if entry is not None:
                out = entry.overlapping(block, wide, out)
        return out

    def _set_array(self, t: int, clock: int) -> None:
        i = self.slot.get(t)
        if i is None:
            i = self.slot[t] = len(self.slot)
            if i == len(self.takers):
                self.takers = np.resize(self.takers, 2 * i)
                self.latest_clocks = np.resize(self.latest_clocks, 2 * i)
            self.takers[i] = t
        self.latest_clocks[i] = clock


def _lane_column(values: np.ndarray | None, lanes: np.ndarray) -> list:
    """`values` (a batch's values read or stored, when it has them) at `lanes`, as Python ints; None for each
    lane when it has none."""
    return [None] * len(lanes) if values is None else values[lanes].tolist()


def _release_clock(section: DoneSection) -> int:
    return section.rel_clock


def _overlap(block_a: int, wide_a: bool, block_b: int, wide_b: bool) -> bool:
    """Whether two sections' scopes both cover both threads."""
    return block_a == block_b or (wide_a and wide_b)


class GwcpDetector(HappensBeforeDetector):
    """The `gwcp` detector (see the module docstring)."""

    name = "gwcp"
    KNOWLEDGE_LISTS = ("know", "hknow")

    def __init__(self, ctx: DetectorContext):
        super().__init__(ctx)
        n = ctx.geometry.nthreads
        self.hknow: list[Knowledge | None] = [None] * n
        self.open: dict[int, list[CriticalSection]] = {}
        self.has_open = np.zeros(n, dtype=np.bool_)
        self.in_cs = np.zeros(n, dtype=np.bool_)
        self.locks: dict[int, LockHistory] = {}
        self.lock_pc = np.full(n, -1, dtype=np.int32)
        self.last_lock_pc = -1
        self._lock_ordered: set[tuple[int, int]] = set()
        # The snapshot of each section the current access released, by thread (base, clock, snapshot): the
        # release it publishes is the same one (`_make_release`).
        self._closing: dict[int, tuple[Knowledge | None, int, Knowledge]] = {}
        self.confinement = LockConfinement()  # whether other lock orders can race (`detect.lock_confinement`)

    # ------------------------------------------------------------------ events

    def on_event(self, ev) -> None:
        if isinstance(ev, ExitEvent):
            for g in ev.threads[self.has_open[ev.threads]]:
                self.confinement.broken = True  # a section never released
                del self.open[int(g)]
            self.has_open[ev.threads] = False
            self.in_cs[ev.threads] = False
        super().on_event(ev)

    def _access(self, ev: AccessBatch) -> None:
        self._closing.clear()
        if not self.confinement.broken:
            self.confinement.access(ev, self.in_cs[ev.threads])
        if ev.strong and ev.kind != AccessKind.READ:
            self._lock_ops(ev)
        if self.in_cs[ev.threads].any():
            self._critical_accesses(ev)
        super()._access(ev)

    def _fence(self, ev: FenceEvent) -> None:
        super()._fence(ev)
        rank = SCOPE_RANK.get(ev.scope, WIDE)
        holders = ev.threads[self.has_open[ev.threads]]
        wide = rank >= WIDE
        for g in holders.tolist():
            for cs in self.open[g]:
                if cs.held:
                    cs.fenced = True
                else:
                    cs.held = True
                    cs.wide = cs.wide and wide
        self.in_cs[holders] = True

    # ------------------------------------------------------------------ lock inference

    def _lock_ops(self, ev: AccessBatch) -> None:
        """Open critical sections at lock acquires, close them at releases (before `hb` publishes the write)."""
        n = len(ev.threads)
        if ev.atomic_op == "cas" and ev.compare is not None:
            acquires = (ev.values == ev.compare) & (ev.values != ev.stored)
        elif ev.atomic_op == "exch" and ev.values is not None and self.locks:
            # only on known locks: an exchange that changes a value is also how flags are raised
            acquires = (ev.values != ev.stored) & self._on_locks(ev.addrs)
        else:
            acquires = np.zeros(n, dtype=np.bool_)
        lanes = np.flatnonzero(acquires | self.has_open[ev.threads])
        if not len(lanes):
            return
        # Each lane's fields as Python ints, one conversion per column rather than a NumPy scalar per lane and
        # field: lock kernels bring batches of hundreds of lanes, each taking or releasing its own lock.
        threads = ev.threads[lanes]
        columns = [threads, ev.addrs[lanes], acquires[lanes], self.geo.block_of[threads], self.clock[threads], self.phase[threads]]
        columns += [self.fence_clock[threads], self.fence_scope[threads]]
        columns = [col.tolist() for col in columns] + [_lane_column(ev.values, lanes), _lane_column(ev.stored, lanes)]
        opened, emptied = [], []
        open_sections = self.open
        for g, addr, acquire, block, clock, phase, fence_clock, fence_rank, value, stored in zip(*columns):
            cs = next((c for c in open_sections.get(g, ()) if c.lock == addr), None)
            if cs is None:
                if acquire and self._open(ev, g, addr, value, block, clock, phase):
                    opened.append(g)
            elif self._release_or_abandon(ev, cs, g, acquire, stored, clock, phase, fence_clock, fence_rank):
                emptied.append(g)
        if emptied:
            self.has_open[emptied] = False
            self.in_cs[emptied] = False
        if opened:
            self.has_open[opened] = True
            self.in_cs[opened] |= ev.sem in ("acquire", "acq_rel")
            self.lock_pc[opened] = ev.pc

    def _on_locks(self, addrs: np.ndarray) -> np.ndarray:
        """Which of `addrs` are known locks: a few looked up in the dict (`scalar_paths`), many at once."""
        if len(addrs) <= scalar_paths.MAX_LANES:
            return np.array([a in self.locks for a in addrs.tolist()], dtype=np.bool_)
        return np.isin(addrs, np.fromiter(self.locks, dtype=np.uint64, count=len(self.locks)))

    def _open(self, ev: AccessBatch, g: int, addr: int, free: int, block: int, clock: int, phase: int) -> bool:
        """An acquire by thread g of the lock word `addr` (one lane of `_lock_ops`): whether it opens a section
        (the caller marks the threads that did, all at once)."""
        known = self.locks.get(addr)
        if (known is None and ev.atomic_op != "cas") or (known is not None and known.free != free):
            return False
        held = ev.sem in ("acquire", "acq_rel")
        wide = SCOPE_RANK.get(ev.scope or "gpu", WIDE) >= WIDE
        if g in self.open:
            self.confinement.broken = True  # two locks held at once
        self.open.setdefault(g, []).append(CriticalSection(addr, free, block, wide, clock, phase, held))
        return True

    def _release_or_abandon(
        self, ev: AccessBatch, cs: CriticalSection, g: int, changed: bool, stored: int | None, clock: int, phase: int,
        fence_clock: int, fence_rank: int,
    ) -> bool:
        """A write by thread g to the word of its open section `cs` (one lane of `_lock_ops`): its release when it
        writes the free value back under the release pattern; the section is abandoned either way. Returns
        whether g has no section open any more (the caller clears the threads' flags, all at once)."""
        if ev.atomic_op == "cas" and not changed:
            return False  # a failed compare-and-swap writes nothing
        release_op = ev.sem in ("release", "acq_rel")
        if (
            cs.held
            and stored == cs.free
            and ev.atomic_op in (None, "exch")
            and (release_op or cs.fenced)
        ):
            rank = SCOPE_RANK.get(ev.scope or "gpu", WIDE)
            if not release_op:
                rank = min(rank, fence_rank)
            cs.wide = cs.wide and rank >= WIDE
            self._close(g, cs, clock if release_op else fence_clock, phase)
        else:
            self.confinement.broken = True  # abandoned: in another order, what follows it is not ordered after it
        sections = self.open[g]
        sections.remove(cs)
        if sections:
            self.in_cs[g] = any(c.held for c in sections)
            return False
        del self.open[g]
        return True

    def _close(self, g: int, cs: CriticalSection, clock: int, phase: int) -> None:
        """A released section (g's barrier phase now `phase`): rule (b) first (it adds to what this release
        publishes), then rule (a)'s lock-location knowledge."""
        hist = self.locks.get(cs.lock)
        if hist is None:
            hist = self.locks[cs.lock] = LockHistory(cs.free)
        self.last_lock_pc = int(self.lock_pc[g])
        self.confinement.released(cs.lock, cs.block, cs.wide)
        self._order_releases(g, cs, hist)
        base = self.hknow[g]
        # the snapshot `_snapshot` takes, from the block and phase the caller has as ints already
        snap = base.with_own(g, clock, cs.block, phase) if base is not None and self.wknown is None else self._snapshot(base, g, clock)
        self._closing[g] = (base, clock, snap)
        block, wide = cs.block, cs.wide
        for words, table in ((cs.accessed, hist.accessed), (cs.writes, hist.writes)):
            for w in words:
                entry = table.get(w)
                if entry is None:
                    entry = table[w] = WordKnowledge()
                entry.add(block, wide, snap)
        hist.add(DoneSection(g, block, wide, cs.acq_clock, cs.acq_phase, clock, snap), base)

    def _order_releases(self, g: int, cs: CriticalSection, hist: LockHistory) -> None:
        """Rule (b): earlier sections whose acquire g is GWCP-after are released before g's release.

        Only sections released after the clock g already knows of their thread are candidates
        (the module docstring says why), and of each thread only the latest ordered one is joined."""
        cands: list[DoneSection] = []
        for t1, clock in self._unknown_takers(g, hist):
            done = hist.done[t1]
            for d in done[bisect.bisect_right(done, clock, key=_release_clock) :]:
                if _overlap(d.block, d.wide, cs.block, cs.wide):
                    cands.append(d)
        if not cands:
            return
        ordered = self._ordered(
            np.full(len(cands), g, dtype=np.int64),
            np.array([d.thread for d in cands], dtype=np.int64),
            np.array([d.acq_clock for d in cands], dtype=np.int64),
            np.array([d.acq_phase for d in cands], dtype=np.int64),
            know=self.know,
        )
        latest: dict[int, DoneSection] = {}
        for d, ok in zip(cands, ordered):
            if ok:
                latest[d.thread] = d
        for d in latest.values():
            self.know[g] = d.released.join(self.know[g])

    def _unknown_takers(self, g: int, hist: LockHistory) -> list[tuple[int, int]]:
        """(thread, the clock g knows of it) for each other thread that took the lock and whose last release g
        does not know: thread by thread for a lock of few takers (`scalar_paths`), over the arrays for many."""
        know = self.know[g]
        if hist.knows_every_taker(know):
            return []
        if hist.takers is None:
            if know is None:
                return [(t1, -1) for t1 in hist.latest if t1 != g]
            if know.dense is None:
                get = know.threads.get
                return [(t1, k) for t1, last in hist.latest.items() if last > (k := get(t1, -1)) and t1 != g]
            takers = list(hist.latest)
            return [(t1, k) for t1, last, k in zip(takers, hist.latest.values(), know.clock_list(takers)) if t1 != g and last > k]
        count = len(hist.latest)
        takers = hist.takers[:count]
        known = np.full(count, -1, dtype=np.int64) if know is None else know.clocks_of(takers)
        behind = np.flatnonzero((hist.latest_clocks[:count] > known) & (takers != g))
        return list(zip(takers[behind].tolist(), known[behind].tolist()))

    def _critical_accesses(self, ev: AccessBatch) -> None:
        """Rule (a) for the lanes inside critical sections: become GWCP-after the earlier sections that conflict."""
        write = ev.kind != AccessKind.READ
        lanes = np.flatnonzero(self.in_cs[ev.threads])
        size, open_sections, locks, know, confinement = ev.size + 3, self.open, self.locks, self.know, self.confinement
        for g, addr in zip(ev.threads[lanes].tolist(), ev.addrs[lanes].tolist()):
            words = range(addr >> 2, (addr + size) >> 2)  # the 4-byte words the access touches
            for cs in open_sections[g]:
                if not cs.held or (cs.lock >> 2) in words:
                    continue
                hist = locks.get(cs.lock)
                if hist is not None:
                    found = hist.conflicting(words, write, cs.block, cs.wide)
                    if found is not None:
                        know[g] = found.join(know[g])
                cs.accessed.update(words)
                if write:
                    cs.writes.update(words)
                if not confinement.broken:
                    confinement.section_words(words, cs.lock)

    # ------------------------------------------------------------------ the two kinds of knowledge

    def confined(self) -> bool:
        """Whether every access of the run sat inside a critical section of one lock (`detect.lock_confinement`)."""
        return self.confinement.confined(self.locks)

    def _has_knowledge(self, members: np.ndarray) -> bool:
        return any(self.hknow[int(t)] is not None or self.know[int(t)] is not None for t in members)

    def _join_knowledge(self, ms: np.ndarray) -> None:
        """Barrier participants: each is GWCP-after everything any participant happens-after."""
        hs = join_all({id(k): k for t in ms if (k := self.hknow[int(t)]) is not None}.values())
        ps = join_all({id(k): k for t in ms if (k := self.know[int(t)]) is not None}.values())
        p = ps if hs is None else hs.join(ps)
        for t in ms:
            self.hknow[int(t)] = hs
            self.know[int(t)] = p

    def _absorb(self, g: int, rel: Release) -> None:
        h = self.hknow[g]
        if h is not rel.knowledge:
            self.hknow[g] = rel.knowledge.join(h)
        p = self.know[g]
        if p is not rel.wcp:
            self.know[g] = rel.wcp.join(p)

    def _make_release(self, g: int, clock: int, block: int, rank: int, pc: int, addr: int) -> Release:
        base = self.hknow[g]
        closed = self._closing.get(g)
        h = closed[2] if closed is not None and closed[0] is base and closed[1] == clock else self._snapshot(base, g, clock)
        p = self._snapshot(self.know[g], g, None) if addr in self.locks else h
        return LockRelease(h, g, block, rank, pc, p)

    # ------------------------------------------------------------------ race check

    def _check_pairs(self, *args, **kwargs) -> None:
        self._lock_ordered.clear()
        super()._check_pairs(*args, **kwargs)

    def _ordered(self, t, u, c, ph, know=None) -> np.ndarray:
        ordered = super()._ordered(t, u, c, ph, know)
        if know is None and not ordered.all():
            rest = np.flatnonzero(~ordered)
            by_lock = super()._ordered(t[rest], u[rest], c[rest], ph[rest], self.hknow)
            self._lock_ordered.update(zip(t[rest[by_lock]].tolist(), u[rest[by_lock]].tolist()))
        return ordered

    def _happens_before_knowledge(self) -> list:
        return self.hknow

    def _cause_text(self, cause, t: int, u: int, pc_u: int, ev, earlier=None, unacquired: bool = False) -> str:
        if (t, u) in self._lock_ordered and cause != Cause.NOT_STRONG:
            pc = next((int(p) for p in (self.lock_pc[t], self.lock_pc[u], self.last_lock_pc) if p >= 0), -1)
            lock = f" at {self.ctx.program.instructions[pc].where()}" if pc >= 0 else ""
            return (
                "predictable race: another schedule of the same path runs the two accesses concurrently "
                f"(the lock{lock} orders them only in this schedule)"
            )
        return super()._cause_text(cause, t, u, pc_u, ev, earlier, unacquired)
