"""Scoped happens-before race detection with thread-hierarchy-compressed vector clocks.

Causality (DESIGN.md, PTX memory model): program order; barriers order every
participant's earlier accesses before every participant's later ones;
`bar.warp.sync` does the same for the lanes of its mask; a *release pattern*
(a release operation, or a fence followed by a strong write) synchronises with
an *acquire pattern* (an acquire operation, or a strong read followed by a
fence) that reads what it wrote, when both patterns' scopes cover both
threads. Under `--model scord` (ScoRD's rules) the consumer needs no fence: a
strong read of a released flag acquires at once, except an `atomicCAS`, which
takes a lock only with the fence after it (ScoRD infers locks that way); and
pairs with a plain access are ordered only by barriers, warp syncs and
program order (`rules.fence_blind`).

A thread that read a released flag and has not fenced since keeps what it
read as *pending*. A race whose earlier access that pending release carries
is one the consumer's fence after the flag read would have ordered: the cause
names that fence, and `rules.unacquired_severity` decides how bad it is
(a warning under `cuda` between strong accesses).

Vector clocks never exist as n x n matrices. Following PreDataR's compression,
a thread's knowledge is split by the thread hierarchy:

- *block level*: `phase[t]` counts the full-block barriers t passed. An access
  made in phase p by u is known to t when both are in the same block, t is past
  phase p and u took part in barrier p+1 (`phase[u] > p`; exited threads stop
  counting). This is one integer per thread.
- *warp level*: `wknown[t, lane]` is the clock up to which t knows each lane of
  its own warp, set by `bar.warp.sync` (32 integers per thread, allocated on
  the first warp sync). Like PreDataR's forced compression at barriers, every
  participant's own clock is lifted to the group maximum plus one.
- *everything else* (knowledge received through release/acquire, possibly from
  other blocks) is a `Knowledge` object (`knowledge.py`: a dict of clocks
  while it names few threads, an array once it names many), shared by
  reference between threads and copied only when joined; a barrier or warp sync joins the
  participants' objects once.

Each access is checked FastTrack-style against a byte-granular shadow memory
holding the last write and the last two reads by different threads (so a
writer that was itself the last reader still sees the reader before it;
global memory is shadowed only for the pages the kernel touches, see
`shadow.py`). The check is vectorised over the batch; only pairs that the
block and warp levels do not order fall back to the sparse objects, one pair
at a time.

The shadow keeps two reads per byte, not every read: a write can miss a race
with an older read when the two most recent reads by other threads are both
ordered before it. The barrier-interval detector has no such limit and is used
for barrier-only kernels.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from gpurace.detect import scalar_paths
from gpurace.detect.base import DetectorContext
from gpurace.detect.findings import SAME_VALUE, WARNING, Finding, FindingSet, describe_address, make_site
from gpurace.detect.knowledge import Knowledge, join_all
from gpurace.detect.rules import (
    AccessFlags,
    Cause,
    batch_flags,
    cause_message,
    classify,
    fence_blind,
    scoped_op_name,
    severity_of,
    unacquired_severity,
)
from gpurace.detect.shadow import WORD, PageTable, Shadow, grown_size
from gpurace.detect.shared_slots import SharedSlots
from gpurace.detect.written_values import byte_at, stored_words
from gpurace.sim.events import SCOPE_RANK, AccessBatch, AccessKind, ExitEvent, FenceEvent, SyncEvent
from gpurace.sim.memory import GLOBAL_BASE, Space

# Flag bits kept per shadow entry.
F_WRITE, F_ATOMIC, F_VOLATILE = 1, 2, 4
SCOPE_SHIFT = 3  # scope rank + 1 in bits 3..5 (0 = weak)

# Plain ints for comparisons with arrays: NumPy compares an array with an IntEnum member several times slower.
NO_CAUSE, SHARED = int(Cause.NONE), int(Space.SHARED)

def _flags_word(write: bool, atomic: bool, volatile: bool, scope: int) -> int:
    return (F_WRITE if write else 0) | (F_ATOMIC if atomic else 0) | (F_VOLATILE if volatile else 0) | ((scope + 1) << SCOPE_SHIFT)


def _unpack_flags(words: np.ndarray) -> AccessFlags:
    """The flags packed in shadow flag words; a few words through a table of every packing (`scalar_paths`)."""
    if 0 < len(words) <= scalar_paths.MAX_LANES:
        write, atomic, volatile, scope = zip(*(_FLAG_ROWS[w] for w in words.tolist()))
        return AccessFlags(np.array(write), np.array(atomic), np.array(volatile), np.array(scope, dtype=np.int8))
    return _unpack_flag_arrays(words)


def _unpack_flag_arrays(words: np.ndarray) -> AccessFlags:
    return AccessFlags(
        (words & F_WRITE) != 0,
        (words & F_ATOMIC) != 0,
        (words & F_VOLATILE) != 0,
        ((words >> SCOPE_SHIFT) & 7).astype(np.int8) - 1,
    )


def _flag_rows() -> list[tuple[bool, bool, bool, int]]:
    """(write, atomic, volatile, scope) of every flag word, by the word: the array path's own answers."""
    every = _unpack_flag_arrays(np.arange(1 << (SCOPE_SHIFT + 3), dtype=np.int16))
    return list(zip(every.write.tolist(), every.atomic.tolist(), every.volatile.tolist(), every.scope.tolist()))


_FLAG_ROWS = _flag_rows()


def _is_mbarrier_arrival(ins) -> bool:
    # a bulk copy's complete_tx is a release of its issuing thread on the phase (`sim.mbarriers`)
    return ins.opcode == "mbarrier" or (ins.opcode == "cp" and (ins.has("mbarrier") or ins.has("mbarrier::complete_tx::bytes")))


@dataclass(slots=True)
class Release:
    """A published release: what the releaser knew, from where, with what scope."""

    knowledge: Knowledge
    thread: int
    block: int
    scope: int
    pc: int  # the fence or release operation

    def including(self, other: Release) -> Release:
        """This release, also carrying what `other` published (release sequences, merged pending reads)."""
        return Release(self.knowledge.join(other.knowledge), self.thread, self.block, self.scope, self.pc)


class HappensBeforeDetector:
    """The `hb` detector (see the module docstring)."""

    name = "hb"
    KNOWLEDGE_LISTS = ("know",)
    """The per-thread lists of sparse knowledge objects (subclasses keep more), for `_group_release`."""
    WORD_UNITS = True
    """Whether global pages accessed in whole words are shadowed word by word (`shadow.PageTable`)."""

    def __init__(self, ctx: DetectorContext):
        self.ctx = ctx
        geo = ctx.geometry
        n = geo.nthreads
        self.geo = geo
        self.model = ctx.model
        self.clock = np.ones(n, dtype=np.int64)
        self.phase = np.zeros(n, dtype=np.int32)
        self.exited = np.zeros(n, dtype=np.bool_)
        self.wknown: np.ndarray | None = None
        self.know: list[Knowledge | None] = [None] * n
        # Fence-based release patterns: the clock at the thread's last fence, its scope and pc.
        self.fence_clock = np.zeros(n, dtype=np.int64)
        self.fence_scope = np.full(n, -1, dtype=np.int8)
        self.fence_pc = np.zeros(n, dtype=np.int32)
        # A strong read of a released location waiting for the acquire fence that completes the pattern:
        # the release read (per thread, as an object array so releases are freed when no longer pending),
        # the location it was read from, and (pc, release) of each read whose releases it joins, so that a
        # report names the flag read that carried the racing access.
        self.pend = np.full(n, None, dtype=object)
        self.pend_has = np.zeros(n, dtype=np.bool_)
        self.pend_loc = np.zeros(n, dtype=np.uint64)
        self.pend_reads = np.full(n, None, dtype=object)  # None: one read, (pend_pc, pend) (`_pending_reads`)
        self.pend_pc = np.zeros(n, dtype=np.int32)
        # Released locations: canonical address -> the merged releases of its release sequence,
        # one per scope class (None: gpu/sys scope; a block id: cta-scoped releases from that block).
        self.released: dict[int, dict[int | None, Release]] = {}
        self._released_keys = np.zeros(0, dtype=np.uint64)
        # Why expected synchronisation did not happen, per acquiring thread: (cause text, the release it missed,
        # joined over the repeats of one text and releasing block, whether the consumer's side fell short).
        self.missed: dict[int, list[tuple[str, Release, bool]]] = {}
        self.shadows: dict[int, Shadow] = {}
        self.shared_slots = SharedSlots(ctx.memory)  # shared shadow of the blocks alive at once
        # What the releasing arrivals of each cluster barrier phase published, by phase (`sim.clusters.phase_key`).
        self.cluster_phases: dict[int, Release] = {}
        self.global_pages = PageTable(words=self.WORD_UNITS)
        self.findings = FindingSet()
        self.mem = ctx.memory
        # mbarrier arrivals are read-modify-writes of the phase's location (`sim.mbarriers`) that acquire only
        # through the wait: a fence after one completes no acquire pattern.
        self.arrival_pc = np.array([_is_mbarrier_arrival(ins) for ins in ctx.program.instructions], dtype=np.bool_)

    # ------------------------------------------------------------------ events

    def on_event(self, ev) -> None:
        if isinstance(ev, AccessBatch):
            self._access(ev)
        elif isinstance(ev, SyncEvent):
            if ev.kind == "barrier":
                self._barrier(ev)
            elif ev.kind == "warp":
                self._warp_sync(ev)
            elif ev.kind == "cluster-arrive":
                self._cluster_arrive(ev)
            elif ev.kind == "cluster-wait":
                self._cluster_wait(ev)
        elif isinstance(ev, FenceEvent):
            self._fence(ev)
        elif isinstance(ev, ExitEvent):
            self.exited[ev.threads] = True

    def finish(self) -> list[Finding]:
        return self.findings.sorted()

    # ------------------------------------------------------------------ ordering asked from outside

    def stamps(self, threads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each thread's clock and barrier phase now: what an access it just made is known by, for
        `ordered_before` (a grid's device-side launches: `sim.device_runtime`)."""
        return self.clock[threads].copy(), self.phase[threads].copy()

    def ordered_before(self, t: int, threads: np.ndarray, clocks: np.ndarray, phases: np.ndarray) -> np.ndarray:
        """Whether each access stamped (`stamps`) by another thread happens before thread t's current point."""
        return self._ordered(np.full(len(threads), t, dtype=np.int64), threads, clocks, phases)

    # ------------------------------------------------------------------ synchronisation

    def _group_join(self, members: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Forced compression: every member's clock becomes its group's maximum + 1; returns that maximum per member."""
        ug, inv = np.unique(groups, return_inverse=True)
        top = np.zeros(len(ug), dtype=np.int64)
        np.maximum.at(top, inv, self.clock[members])
        self.clock[members] = top[inv] + 1
        for g in range(len(ug)):
            self._join_knowledge(members[inv == g] if len(ug) > 1 else members)
        return top[inv]

    def _join_knowledge(self, ms: np.ndarray) -> None:
        """The members of one barrier or warp sync share the join of their sparse knowledge."""
        ks = {id(self.know[int(t)]): self.know[int(t)] for t in ms if self.know[int(t)] is not None}
        if ks:
            joined = join_all(ks.values())
            for t in ms:
                self.know[int(t)] = joined

    def _has_knowledge(self, members: np.ndarray) -> bool:
        know = self.know
        return any(know[int(t)] is not None for t in members)

    def _barrier(self, ev: SyncEvent) -> None:
        members = ev.threads
        self.phase[members] += 1
        if self.exited.any():
            # A barrier released although threads of its block exited (the simulator reports the
            # barrier divergence): count their earlier accesses as ordered, as the interval detector does,
            # so that the divergence is reported once rather than as races derived from it.
            gone = np.flatnonzero(self.exited & np.isin(self.geo.block_of, np.unique(ev.groups)))
            self.phase[gone] += 1
        if self._has_knowledge(members):
            self._group_join(members, ev.groups)
        else:
            ug, inv = np.unique(ev.groups, return_inverse=True)
            top = np.zeros(len(ug), dtype=np.int64)
            np.maximum.at(top, inv, self.clock[members])
            self.clock[members] = top[inv] + 1

    def _cluster_arrive(self, ev: SyncEvent) -> None:
        """Releasing `barrier.cluster.arrive`s: each arriving thread publishes what it knows on its phase
        (`sim.clusters`), as a release operation does on a location; the phase's waiters acquire it all."""
        ukeys, inv = np.unique(ev.groups, return_inverse=True)
        for i, key in enumerate(ukeys.tolist()):
            rel = self._group_release(ev.threads[inv == i], int(ev.pcs[0]))
            prev = self.cluster_phases.get(key)
            self.cluster_phases[key] = rel if prev is None else rel.including(prev)
            # an arrival on phase p + 2 follows every thread's wait for phase p: nobody acquires p any more
            if key & 0xFFFFFFFF >= 2:
                self.cluster_phases.pop(key - 2, None)
        self.clock[ev.threads] += 1

    def _group_release(self, members: np.ndarray, pc: int) -> Release:
        """What threads `members` publish together at a release: the join of their `_make_release`s, with
        one object for the threads' own clocks and block phases where a thread knows nothing else."""
        geo, gpu = self.geo, SCOPE_RANK["gpu"]
        block_of = geo.block_of[members]
        g0 = int(members[0])
        rel = self._make_release(g0, int(self.clock[g0]), int(block_of[0]), gpu, pc, -1)
        if self.wknown is None:
            # one thread for each distinct set of knowledge objects: threads that acquired together share them
            lists = [getattr(self, name) for name in self.KNOWLEDGE_LISTS]
            seen = {tuple(id(k[g0]) for k in lists)}
            others = []
            for g in members[1:].tolist():
                ids = tuple(id(k[g]) for k in lists)
                if ids not in seen and any(k[g] is not None for k in lists):
                    seen.add(ids)
                    others.append(g)
        else:
            others = members[1:].tolist()  # lane clocks are per thread
        for g in others:
            rel = rel.including(self._make_release(g, int(self.clock[g]), int(geo.block_of[g]), gpu, pc, -1))
        phases = np.zeros(geo.nblocks, dtype=np.int64)
        np.maximum.at(phases, block_of, self.phase[members])
        passed = np.flatnonzero(phases)
        own = Knowledge(
            dict(zip(members.tolist(), self.clock[members].tolist())), dict(zip(passed.tolist(), phases[passed].tolist()))
        )
        # the same Release type, every knowledge part of it the threads' own (`gwcp`, `lockset` carry more parts)
        parts = {f.name: own for f in fields(rel) if isinstance(getattr(rel, f.name), Knowledge)}
        return rel.including(replace(rel, **parts))

    def _cluster_wait(self, ev: SyncEvent) -> None:
        """Completed `barrier.cluster.wait`s acquire every release of their phase."""
        lists = [getattr(self, name) for name in self.KNOWLEDGE_LISTS]
        joined: dict[tuple, int] = {}  # (phase, ids of a thread's knowledge objects) -> a thread that absorbed it
        for g, key in zip(ev.threads.tolist(), ev.groups.tolist()):
            rel = self.cluster_phases.get(key)
            if rel is None:
                continue
            ids = (key, *(id(k[g]) for k in lists))
            done = joined.get(ids)
            if done is None:
                joined[ids] = g
            else:
                for k in lists:  # the same objects joined with the same release: reuse the join
                    k[g] = k[done]
            self._absorb(g, rel)
        self.clock[ev.threads] += 1

    def _warp_sync(self, ev: SyncEvent) -> None:
        members = ev.threads
        if self.wknown is None:
            self.wknown = np.zeros((self.geo.nthreads, 32), dtype=np.int64)
        masks = (ev.groups & 0xFFFFFFFF).astype(np.uint64)
        top = self._group_join(members, ev.groups) if self._has_knowledge(members) else None
        ug, inv = np.unique(ev.groups, return_inverse=True)
        if top is None:
            t = np.zeros(len(ug), dtype=np.int64)
            np.maximum.at(t, inv, self.clock[members])
            self.clock[members] = t[inv] + 1
            top = t[inv]
        # join the members' warp rows, then everyone knows every mask lane up to the group maximum
        rows = np.zeros((len(ug), 32), dtype=np.int64)
        np.maximum.at(rows, inv, self.wknown[members])
        bits = ((masks[:, None] >> np.arange(32, dtype=np.uint64)[None, :]) & np.uint64(1)).astype(np.bool_)
        self.wknown[members] = np.where(bits, np.maximum(rows[inv], top[:, None]), rows[inv])

    def _fence(self, ev: FenceEvent) -> None:
        t = ev.threads
        rank = SCOPE_RANK.get(ev.scope, SCOPE_RANK["gpu"])
        # acquire patterns: strong reads of released locations followed by this fence
        waiting = t[self.pend_has[t]]
        if len(waiting):
            self._complete_acquires(waiting, rank, ev.pc)
        # release patterns: remember the clock at the fence; a later strong write publishes it
        self.fence_clock[t] = self.clock[t]
        self.fence_scope[t] = rank
        self.fence_pc[t] = ev.pc
        self.clock[t] += 1

    def _same_cluster(self, t: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Whether threads t and u are in one cluster (`.cluster` scope covers both), pair by pair."""
        cluster_of = self.geo.block_cluster
        return cluster_of[self.geo.block_of[t]] == cluster_of[self.geo.block_of[u]]

    def _block_covers(self, rank: np.ndarray, block: np.ndarray, other: np.ndarray) -> np.ndarray:
        """Whether a release or acquire of scope `rank` made in `block` covers a thread of block `other`."""
        cluster_of = self.geo.block_cluster
        return np.where(
            rank == SCOPE_RANK["cta"],
            block == other,
            np.where(rank == SCOPE_RANK["cluster"], cluster_of[block] == cluster_of[other], True),
        )

    def _covers(self, rank: int, block: int, other: int) -> bool:
        """`_block_covers` for one release or acquire: the per-thread steps (a fence completing each waiting
        thread's acquire) would pay three array constructions for one comparison."""
        if rank == SCOPE_RANK["cta"]:
            return block == other
        if rank == SCOPE_RANK["cluster"]:
            cluster_of = self.geo.block_cluster
            return bool(cluster_of[block] == cluster_of[other])
        return True

    def _complete_acquires(self, gs: np.ndarray, fence_rank: int, fence_pc: int) -> None:
        """A fence of scope `fence_rank` completes the acquire pattern of threads `gs`, each waiting on the
        release it read, when its scope covers the releaser's block."""
        rels = self.pend[gs].tolist()
        if fence_rank >= SCOPE_RANK["gpu"]:
            done = gs
        else:
            blocks = self.geo.block_of[gs].tolist()
            covered = np.array([self._covers(fence_rank, rel.block, b) for rel, b in zip(rels, blocks)], dtype=np.bool_)
            text = self._scope_text("the acquire fence", fence_pc, "membar.cta")
            for i in np.flatnonzero(~covered).tolist():
                self._note_missed(int(gs[i]), rels[i], text, acquiring=True)
            done = gs[covered]
            rels = [rel for rel, ok in zip(rels, covered.tolist()) if ok]
        absorb = self._absorb
        for g, rel in zip(done.tolist(), rels):
            absorb(g, rel)
        self.pend[done] = None
        self.pend_has[done] = False

    def _absorb(self, g: int, rel: Release) -> None:
        """Thread g synchronises with `rel` (a completed acquire pattern)."""
        k = self.know[g]
        if k is not rel.knowledge:
            self.know[g] = rel.knowledge.join(k)

    def _make_release(self, g: int, clock: int, block: int, rank: int, pc: int, addr: int) -> Release:
        """What thread g publishes on `addr` when its release pattern completes."""
        return Release(self._snapshot(self.know[g], g, clock), g, block, rank, pc)

    def _snapshot(self, base: Knowledge | None, g: int, clock: int | None) -> Knowledge:
        """Thread g's knowledge as a Knowledge object: its sparse part `base`, its warp and block levels,
        and its own accesses up to `clock` (None: not its own accesses)."""
        if self.wknown is None and base is not None:
            return base.with_own(g, clock, int(self.geo.block_of[g]), int(self.phase[g]))
        threads = {} if clock is None else {g: clock}
        if self.wknown is not None:
            w = int(self.geo.warp_of[g])
            first = int(self.geo.first_thread_of_warp(np.array([w]))[0])
            row = self.wknown[g]
            for lane in np.flatnonzero(row > 0):
                u = first + int(lane)
                if u != g:
                    threads[u] = int(row[lane])
        phase = int(self.phase[g])
        if base is not None and not threads and not phase:
            return base  # what the join below returns, without building and walking an empty object
        # Phase 0 orders nothing (`Knowledge.knows` wants a phase above the access's): leaving it out lets a
        # thread that learns nothing new publish the very object it holds.
        own = Knowledge(threads, {int(self.geo.block_of[g]): phase} if phase else {})
        return own if base is None else base.join(own)

    def _scope_text(self, what: str, pc: int, default: str) -> str:
        ins = self.ctx.program.instructions[pc]
        where = ins.where()
        return f"insufficient scope of {what} `{ins.text.split()[0] or default}` at {where}"

    def _note_missed(self, g: int, rel: Release, text: str, acquiring: bool) -> None:
        """Thread g met release `rel` without synchronising with it, for the reason `text`; `acquiring`: the
        scope that fell short is g's own (its flag read or acquire fence), not the release's."""
        notes = self.missed.setdefault(g, [])
        for i, (seen, old, _) in enumerate(notes):
            if seen == text and old.block == rel.block:
                notes[i] = (text, rel.including(old), acquiring)
                return
        notes.append((text, rel, acquiring))

    def _carries(self, rel: Release, u: int, c: int, ph: int) -> bool:
        """Whether acquiring `rel` would make u's access, made at clock c in phase ph, happen before."""
        return rel.knowledge.knows(u, c, int(self.geo.block_of[u]), ph, int(self.phase[u]))

    def _unacquired(self, t: np.ndarray, u: np.ndarray, c: np.ndarray, ph: np.ndarray) -> np.ndarray:
        """Pairs (t's access, u's earlier one at clock c, phase ph) that nothing orders but that a fence of
        covering scope after t's last flag read would order: t read a release that carries u's access and
        never completed the acquire pattern. Such a race is the consumer's missing fence, whatever else the
        pair lacks (`rules.unacquired_severity`)."""
        out = np.zeros(len(t), dtype=np.bool_)
        for i in np.flatnonzero(self.pend_has[t]).tolist():
            out[i] = self._carries(self.pend[int(t[i])], int(u[i]), int(c[i]), int(ph[i]))
        return out

    # ------------------------------------------------------------------ release / acquire

    def _publish(self, ev: AccessBatch, lanes: np.ndarray, scope_rank: int, release_op: bool) -> None:
        """Strong writes: release patterns publish the writer's knowledge on the location."""
        threads = ev.threads[lanes]
        if release_op:
            clocks, ranks, pcs = self.clock[threads], np.full(len(lanes), scope_rank), np.full(len(lanes), ev.pc)
            self.clock[threads] += 1
        else:
            fenced = self.fence_scope[threads] >= 0
            lanes, threads = lanes[fenced], threads[fenced]
            clocks, pcs = self.fence_clock[threads], self.fence_pc[threads]
            ranks = np.minimum(self.fence_scope[threads], scope_rank)
        columns = (threads, clocks, self.geo.block_of[threads], ranks, pcs, ev.addrs[lanes])
        new_keys = []
        for g, clock, block, rank, pc, addr in zip(*(col.tolist() for col in columns)):
            rel = self._make_release(g, clock, block, rank, pc, addr)
            seq = self.released.get(addr)
            if seq is None:
                seq = self.released[addr] = {}
                new_keys.append(addr)
            if ev.kind != AccessKind.ATOMIC:
                seq.clear()  # a plain strong store starts a new release sequence
            # one sequence per scope class: a block (cta), a cluster (as -1 - its id), or the launch (None)
            key = block if rank == SCOPE_RANK["cta"] else -1 - int(self.geo.block_cluster[block]) if rank == SCOPE_RANK["cluster"] else None
            prev = seq.get(key)
            if prev is not None:  # read-modify-writes continue the sequence: an acquirer syncs with every release in it
                rel = rel.including(prev)
            seq[key] = rel
        if new_keys:
            self._released_keys = np.concatenate([self._released_keys, np.array(new_keys, dtype=np.uint64)])

    def _observe(self, ev: AccessBatch, lanes: np.ndarray, acquire_op: bool) -> None:
        """Strong reads of released locations: acquire now (acquire op, or scord except a lock's CAS) or at the next fence.

        Each lane meets the releases of its location's sequence (one per scope class) in turn; lanes are
        distinct threads, so the lanes are handled together, one release of each location at a time. A lane
        waiting for its fence waits for every release it read, of whichever scope class."""
        cluster = SCOPE_RANK["cluster"]
        read_rank = np.array(SCOPE_RANK.get(ev.scope or "sys", SCOPE_RANK["sys"]))
        addrs, threads = ev.addrs[lanes], ev.threads[lanes]
        blocks = self.geo.block_of[threads]
        if len(addrs) == 1:  # np.unique's answer for one lane, without its sort
            locations, inv = addrs, np.zeros(1, dtype=np.intp)
        else:
            locations, inv = np.unique(addrs, return_inverse=True)
        seqs = [list(self.released[a].values()) for a in locations.tolist()]
        waiting = np.full(len(lanes), None, dtype=object)  # per lane, the releases it read, for its acquire fence
        waits = np.zeros(len(lanes), dtype=np.bool_)
        for k in range(max(map(len, seqs))):
            at = [s[k] if k < len(s) else None for s in seqs]
            rel = _objects(at)[inv]
            who = np.array([(r.thread, r.block, r.scope) if r is not None else (-1, -1, 0) for r in at], dtype=np.int64)[inv]
            # A thread's own release counts too: its read-modify-write may have continued a sequence that
            # other threads' releases head, and an acquire that reads its own write synchronises with them
            # (PTX observation order runs through atomic read-modify-writes: cg grid.sync's arrival counter).
            m = who[:, 0] >= 0
            covered = self._release_covers(who, read_rank, blocks)
            narrow = m & ~covered
            for i in np.flatnonzero(narrow).tolist():
                r = rel[i]
                what, pc = ("the release", r.pc) if r.scope <= cluster else ("the flag read", ev.pc)
                self._note_missed(int(threads[i]), r, self._scope_text(what, pc, "membar.cta"), acquiring=r.scope > cluster)
            take = np.flatnonzero(m & ~narrow)
            if acquire_op or (self.model == "scord" and ev.atomic_op != "cas"):
                for g, r in zip(threads[take].tolist(), rel[take].tolist()):
                    self._absorb(g, r)
            elif not self.arrival_pc[ev.pc]:
                for i in take[waits[take]].tolist():
                    # the joined release keeps a block other than the reader's where it has one, so that an
                    # acquire fence too narrow for any part of it completes none of it
                    prev, r = waiting[i], rel[i]
                    waiting[i] = r.including(prev) if r.block != blocks[i] else prev.including(r)
                first = take[~waits[take]]
                waiting[first] = rel[first]
                waits[first] = True
        if waits.any():
            pos = np.flatnonzero(waits)
            self._set_pending(threads[pos], waiting[pos], addrs[pos], ev.pc)

    def _release_covers(self, who: np.ndarray, read_rank: np.ndarray, blocks: np.ndarray) -> np.ndarray:
        """Whether each release `who` (thread, block, scope rank) and a read of `read_rank` by a thread of
        `blocks` cover each other's thread; a few lanes one by one (`_covers`)."""
        if len(blocks) <= scalar_paths.MAX_LANES:
            rank = int(read_rank)
            pairs = zip(who.tolist(), blocks.tolist())
            return np.array([self._covers(s, b, o) and self._covers(rank, o, b) for (_, b, s), o in pairs], dtype=np.bool_)
        return self._block_covers(who[:, 2], who[:, 1], blocks) & self._block_covers(read_rank, blocks, who[:, 1])

    def _set_pending(self, gs: np.ndarray, rels: np.ndarray, addrs: np.ndarray, pc: int) -> None:
        """Remember the release each thread (`gs`, distinct) read until its acquire fence: a newer read of the
        same location replaces the older (its release sequence includes it), reads of different locations merge."""
        other = self.pend_has[gs] & (self.pend_loc[gs] != addrs)
        for g, rel in zip(gs[other].tolist(), rels[other].tolist()):
            reads = self._pending_reads(g)
            self.pend[g] = rel.including(self.pend[g])
            self.pend_reads[g] = [*reads, (pc, rel)]
        fresh = gs[~other]
        self.pend[fresh] = rels[~other]
        self.pend_reads[fresh] = None
        self.pend_pc[fresh] = pc
        self.pend_has[gs] = True
        self.pend_loc[gs] = addrs

    def _pending_reads(self, g: int) -> list[tuple[int, Release]]:
        """(pc, release) of each flag read of thread g that waits for its acquire fence, in the order read: a
        thread waiting on one read (the spinning lock takers, hundreds of thousands of reads) has no list."""
        reads = self.pend_reads[g]
        return [(int(self.pend_pc[g]), self.pend[g])] if reads is None else reads

    def _flag_read_pc(self, t: int, u: int, earlier: tuple[int, int] | None) -> int:
        """The pc of t's pending flag read whose release carries u's access made at `earlier` (clock, phase);
        the latest pending read when none is known to."""
        reads = self._pending_reads(t)
        if earlier is not None:
            for pc, rel in reads:
                if self._carries(rel, u, *earlier):
                    return pc
        return reads[-1][0]

    def _is_cas(self, pc: int) -> bool:
        """Whether the read at `pc` is an `atomicCAS`: one that takes a lock wants its fence under ScoRD's rules
        too, so a race its missing fence leaves is never only the consumer's fence after a flag read."""
        ins = self.ctx.program.instructions[pc]
        return ins.opcode == "atom" and "cas" in ins.modifiers

    def _missing_fence_text(self, pc: int) -> str:
        ins = self.ctx.program.instructions[pc]
        where = ins.where()
        if self.model == "scord" and self._is_cas(pc):
            return f"missing fence after the atomicCAS at {where}: under ScoRD's rules a lock is held only once a fence follows its atomicCAS"
        return f"missing fence after the flag read at {where}: a strong read acquires only when a fence follows it"

    # ------------------------------------------------------------------ accesses

    def _shadow_index(self, ev: AccessBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(space code, dense unit index of the first byte, whether the units are 4-byte words) of every lane's
        access.

        Shared memory is indexed by byte, by the slot of its block (`detect.shared_slots`); global memory through
        the page table, by word on pages accessed in whole words only.
        """
        a = ev.addrs
        space = ev.space
        idx = np.empty(len(a), dtype=np.int64)
        wide = np.zeros(len(a), dtype=np.bool_)
        shared = space == SHARED
        if shared.any():
            idx[shared], fresh = self.shared_slots.index(a[shared])
            if len(fresh):
                self._forget_shared(self.shared_slots.bytes_of(fresh))  # a new block's shared memory has no history
        glob = ~shared
        if glob.any():
            units, shift, (old, new) = self.global_pages.index((a[glob] - np.uint64(GLOBAL_BASE)).astype(np.int64), ev.size)
            idx[glob], wide[glob] = units, shift != 0
            if len(new):
                self._widen(old, new)
        return space, idx, wide

    def _widen(self, old: np.ndarray, new: np.ndarray) -> None:
        """Pages of global memory widened from word to byte units (`shadow.PageTable.index`): copy their history
        in every shadow the page table indexes."""
        units = self.global_pages.units
        for space, sh in self.shadows.items():
            if space != Space.SHARED:
                sh.grow(grown_size(sh.size, units))
                sh.widen(old, new)

    def _forget_shared(self, index: np.ndarray) -> None:
        """Forget the accesses to the shared bytes at dense `index` (a slot another block now holds)."""
        sh = self.shadows.get(Space.SHARED)
        if sh is not None:
            sh.clear(index)

    def _shadow(self, space: int, need: int) -> Shadow:
        sh = self.shadows.get(space)
        if sh is None:
            sh = self.shadows[space] = Shadow(max(need, 1024))
        elif need > sh.size:
            sh.grow(grown_size(sh.size, need))
        return sh

    def _access(self, ev: AccessBatch) -> None:
        write, atomic, volatile, scope = batch_flags(ev)
        flags_word = _flags_word(write, atomic, volatile, scope)
        if ev.strong:
            self._sync_effects(ev, write, scope)
        elif write and len(self._released_keys):
            hit = self._released_at(ev.addrs)
            for i in np.flatnonzero(hit):
                self.released.pop(int(ev.addrs[i]), None)
            if hit.any():
                self._released_keys = np.fromiter(self.released.keys(), dtype=np.uint64, count=len(self.released))
        space, first, wide = self._shadow_index(ev)
        uniform = len(space) == 0 or space.min() == space.max()
        for sp in space[:1] if uniform else np.unique(space):
            lanes = np.arange(len(space)) if uniform else np.flatnonzero(space == sp)
            self._check_space(ev, int(sp), lanes, first[lanes], wide[lanes], write, scope, flags_word)

    def _sync_effects(self, ev: AccessBatch, write: bool, scope: int) -> None:
        acquire_op = ev.sem in ("acquire", "acq_rel")
        release_op = ev.sem in ("release", "acq_rel")
        publishing = np.zeros(0, dtype=np.int64)
        if write:
            publishing = np.arange(len(ev.threads)) if release_op else np.flatnonzero(self.fence_scope[ev.threads] >= 0)
        serial = np.zeros(len(ev.threads), dtype=np.bool_)
        if ev.kind == AccessKind.ATOMIC and len(publishing) and len(ev.threads) > 1:
            # Read-modify-writes of one batch take effect lane by lane: a lane reads what the lane before it
            # on the same address wrote, so where a lane releases on an address that other lanes access too,
            # go in batch order (a lane alone never needs to).
            serial = _shared_release_addresses(ev.addrs, publishing)
            publishes = np.zeros(len(ev.threads), dtype=np.bool_)
            publishes[publishing] = True
            for i in np.flatnonzero(serial):
                one = np.array([i])
                if int(ev.addrs[i]) in self.released:
                    self._observe(ev, one, acquire_op)
                if publishes[i]:
                    self._publish(ev, one, scope, release_op)
            publishing = publishing[~serial[publishing]]
        reads = ev.kind in (AccessKind.READ, AccessKind.ATOMIC)
        if reads and len(self._released_keys):
            lanes = np.flatnonzero(~serial & self._released_at(ev.addrs))
            if len(lanes):
                self._observe(ev, lanes, acquire_op)
        if len(publishing):
            self._publish(ev, publishing, scope, release_op)

    def _released_at(self, addrs: np.ndarray) -> np.ndarray:
        """Which of `addrs` are released locations: a few looked up in the dict, many in its key array."""
        if len(addrs) <= scalar_paths.MAX_LANES:
            released = self.released
            return np.array([a in released for a in addrs.tolist()], dtype=np.bool_)
        return np.isin(addrs, self._released_keys)

    def _check_space(
        self, ev, space: int, lanes: np.ndarray, first: np.ndarray, wide: np.ndarray, write: bool, scope: int, flags_word: int
    ) -> None:
        """Check lanes `lanes` of `ev` (all in `space`, their first units `first`, in words where `wide`) against
        the shadow and each other, then record them. Units are bytes or 4-byte words (`shadow.PageTable`); the
        variables named `byte` hold units."""
        threads = ev.threads[lanes]
        byte, lane_of_byte, width = _units(first, wide, ev.size)
        nb = len(byte)
        sh = self._shadow(space, int(byte.max()) + 1)
        t = threads[lane_of_byte]
        clock = self.clock[t]
        cur_flags = np.full(nb, flags_word, dtype=np.int16)
        words = stored_words(ev)
        # 1. against the history
        slots = [sh.w] + ([sh.r1, sh.r2] if write else [])
        for slot in slots:
            u = slot["t"][byte]
            cand = (u >= 0) & (u != t)
            if not write:
                cand &= (slot["fl"][byte] & F_WRITE) != 0
            if cand.any():
                k = np.flatnonzero(cand)
                kl = lanes[lane_of_byte[k]]
                self._check_pairs(
                    ev, space, byte[k], t[k], u[k], slot["c"][byte[k]], slot["ph"][byte[k]], slot["pc"][byte[k]],
                    _unpack_flags(slot["fl"][byte[k]]), cur_flags[k], kl,
                    same_value=self._same_as_memory(ev, kl, words) if slot is sh.w else None, width=_take(width, k),
                )
        # 2. within the batch: lanes of one instruction are unordered with each other
        if nb < 2 or bool((byte[1:] > byte[:-1]).all()):  # coalesced: no byte twice, no sort needed
            order, sb, dup = np.arange(nb), byte, np.zeros(0, dtype=np.int64)
        else:
            order = np.argsort(byte, kind="stable")
            sb = byte[order]
            dup = np.flatnonzero(sb[1:] == sb[:-1])
        device_atomics = ev.kind == AccessKind.ATOMIC and scope >= SCOPE_RANK["gpu"]  # exempt among themselves
        if len(dup) and write and not device_atomics:
            a, b = order[dup], order[dup + 1]
            diff = t[a] != t[b]
            if diff.any():
                a, b = a[diff], b[diff]
                la, lb = lanes[lane_of_byte[a]], lanes[lane_of_byte[b]]
                self._check_pairs(
                    ev, space, byte[b], t[b], t[a], clock[a], self.phase[t[a]], np.full(len(a), ev.pc, np.int32),
                    _unpack_flags(cur_flags[a]), cur_flags[b], lb, same_batch=True,
                    same_value=None if words is None else lambda i, _: words[la[i]] == words[lb[i]], width=_take(width, b),
                )
        # 3. update the history: the last lane per byte wins; reads keep the last two readers
        last = np.append(sb[1:] != sb[:-1], True)
        keep = order[last]
        kb = byte[keep]
        kt = t[keep]
        if write:
            self._put(sh.w, kb, kt, clock[keep], self.phase[kt], ev.pc, flags_word)
            sh.r1["t"][kb] = -1
            sh.r2["t"][kb] = -1
        else:
            moving = sh.r1["t"][kb] != kt
            mv = kb[moving]
            for k in Shadow.FIELDS:
                sh.r2[k][mv] = sh.r1[k][mv]
            self._put(sh.r1, kb, kt, clock[keep], self.phase[kt], ev.pc, flags_word)
            # a previous lane of this batch by another thread is a better second reader than older history
            prev = np.flatnonzero(~last[:-1] & (t[order[:-1]] != t[order[1:]]))
            if len(prev):
                pb = order[prev]
                self._put(sh.r2, byte[pb], t[pb], clock[pb], self.phase[t[pb]], ev.pc, flags_word)

    @staticmethod
    def _put(slot, idx, t, c, ph, pc, fl) -> None:
        slot["t"][idx] = t
        slot["c"][idx] = c
        slot["ph"][idx] = ph
        slot["pc"][idx] = pc
        slot["fl"][idx] = fl

    def _locally_ordered(self, t: np.ndarray, u: np.ndarray, c: np.ndarray, ph: np.ndarray) -> np.ndarray:
        """Whether a barrier or warp sync orders u's access (clock c, phase ph) before t's current point."""
        geo = self.geo
        same_block = geo.block_of[t] == geo.block_of[u]
        ordered = same_block & (self.phase[t] > ph) & (self.phase[u] > ph)
        if self.wknown is not None:
            same_warp = geo.warp_of[t] == geo.warp_of[u]
            ordered |= same_warp & (self.wknown[t, geo.lane[u].astype(np.int64)] >= c)
        return ordered

    def _ordered(self, t: np.ndarray, u: np.ndarray, c: np.ndarray, ph: np.ndarray, know: list | None = None) -> np.ndarray:
        """Whether u's access (clock c, phase ph) happens before t's current point, per pair
        (`know`: the per-thread sparse knowledge to consult, the detector's own by default)."""
        geo = self.geo
        ordered = self._locally_ordered(t, u, c, ph)
        rest = np.flatnonzero(~ordered)
        if len(rest):
            know = self.know if know is None else know
            ur = u[rest]
            pairs = zip(*(col.tolist() for col in (t[rest], ur, c[rest], geo.block_of[ur], ph[rest], self.phase[ur])))
            ordered[rest] = [(k := know[tt]) is not None and k.knows(uu, cc, b, p, pn) for tt, uu, cc, b, p, pn in pairs]
        return ordered

    def _same_as_memory(self, ev, lanes: np.ndarray, words: np.ndarray | None):
        """The `same_value` test of pairs against the last write of each byte: the store's own byte against the
        byte in memory, which is the last write's since the store has not taken effect yet (`written_values`).
        None where values cannot be compared (not a store with known bytes, or no memory contents: a trace)."""
        if words is None or not hasattr(self.mem, "bytes_at"):
            return None

        def same(i: np.ndarray, canon: np.ndarray) -> np.ndarray:
            own = byte_at(words[lanes[i]], canon - ev.addrs[lanes[i]])
            return own == self.mem.bytes_at(canon)

        return same

    def _same_values(self, ev, idx: np.ndarray, addr: np.ndarray, flags_u: AccessFlags, flags_t: AccessFlags, same_value) -> np.ndarray:
        """Which racing pairs `idx`, at bytes `addr` (canonical), are two stores (neither atomic) that wrote the
        same byte: `same_value(i, addr)` answers for the pairs `i` where it applies (None: for none)."""
        same = np.zeros(len(idx), dtype=np.bool_)
        if same_value is None or ev.kind != AccessKind.WRITE:
            return same
        stores = flags_u.write[idx] & ~flags_u.atomic[idx] & ~flags_t.atomic[idx]
        if stores.any():
            same[stores] = same_value(idx[stores], addr[stores])
        return same

    def _racing_bytes(self, space: int, byte: np.ndarray, width: np.ndarray | None, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The racing pairs `idx` byte by byte: positions in `idx`, each once per byte of its pair's unit (four for
        a word), and the canonical address of that byte, in the order a byte-by-byte shadow finds them."""
        if width is None:
            return np.arange(len(idx)), self._canonical_many(space, byte[idx])
        w = width[idx]
        pos = np.repeat(np.arange(len(idx)), w)
        within = np.arange(len(pos), dtype=np.int64) - np.repeat(np.cumsum(w) - w, w)
        return pos, self._canonical_many(space, byte[idx[pos]]) + within.astype(np.uint64)

    def _check_pairs(
        self, ev, space, byte, t, u, c, ph, pc_u, flags_u: AccessFlags, cur_words, lanes, same_batch=False, same_value=None, width=None
    ) -> None:
        """Report the pairs (t's access in `ev`, u's earlier one) that race, at units `byte` of `width` bytes each
        (None: bytes); `same_value(i, addr)` says for pairs `i` of two stores whether they wrote the same byte at
        `addr` (None: not known)."""
        geo = self.geo
        flags_t = _unpack_flags(cur_words)
        same_block = geo.block_of[t] == geo.block_of[u]
        same_warp = geo.warp_of[t] == geo.warp_of[u]
        cause = classify(flags_u, flags_t, same_block, same_warp, self.model, self._same_cluster(t, u))
        racy = cause != NO_CAUSE
        if not racy.any():
            return
        idx = np.flatnonzero(racy)
        if not same_batch:
            blind = fence_blind(flags_u, flags_t, self.model)[idx]
            ordered = np.zeros(len(idx), dtype=np.bool_)
            i = idx[~blind]
            ordered[~blind] = self._ordered(t[i], u[i], c[i], ph[i])
            if blind.any():
                ordered[blind] = self._fence_blind_ordered(cause, idx[blind], t, u, c, ph)
            idx = idx[~ordered]
        if len(idx) == 0:
            return
        unacquired = self._unacquired(t[idx], u[idx], c[idx], ph[idx])
        pos, addr = self._racing_bytes(space, byte, width, idx)
        idx, unacquired = idx[pos], unacquired[pos]
        same = self._same_values(ev, idx, addr, flags_u, flags_t, same_value)
        # one finding per (pc pair, cause, same value, consumer fence missing); count the dynamic pairs
        keys = np.stack([pc_u[idx].astype(np.int64), cause[idx].astype(np.int64), same.astype(np.int64), unacquired.astype(np.int64)], axis=1)
        uk, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
        for (pcu, cz, sv, ua), f, n in zip(uk, first, counts):
            i = idx[f]
            self._report(
                ev, space, int(addr[f]), int(t[i]), int(u[i]), int(pcu), Cause(int(cz)), flags_u.take(np.array([i])), int(n),
                same=bool(sv), earlier=(int(c[i]), int(ph[i])), unacquired=bool(ua),
            )

    def _fence_blind_ordered(self, cause: np.ndarray, i: np.ndarray, t, u, c, ph) -> np.ndarray:
        """Pairs `i` that only barriers, warp syncs and program order may order (`rules.fence_blind`): which
        are; the others that synchronisation orders all the same get the cause `NOT_STRONG` (in place)."""
        local = self._locally_ordered(t[i], u[i], c[i], ph[i])
        rest = i[~local]
        if len(rest):
            synced = self._ordered(t[rest], u[rest], c[rest], ph[rest], know=self._happens_before_knowledge())
            cause[rest[synced]] = Cause.NOT_STRONG
        return local

    def _happens_before_knowledge(self) -> list:
        """The per-thread sparse knowledge of the full scoped happens-before (lock edges included)."""
        return self.know

    def _report(
        self, ev, space: int, canonical: int, t: int, u: int, pc_u: int, cause: Cause, fu: AccessFlags, count: int,
        same: bool = False, earlier: tuple[int, int] | None = None, unacquired: bool = False,
    ) -> None:
        """Add the finding of one racing pair: t's access in `ev` and u's earlier one at `pc_u`, made at
        (clock, phase) `earlier` (None: not known, as for lock-set races); `unacquired`: a fence after t's
        last flag read would order the pair (`_unacquired`)."""
        program, geo = self.ctx.program, self.geo
        op_u = _op_name(program.instructions[pc_u], bool(fu.write[0]))
        op_t = _op_name(program.instructions[ev.pc], ev.kind != AccessKind.READ)
        first = make_site(program, geo, pc_u, u, op_u, _scope_name(int(fu.scope[0])))
        second = make_site(program, geo, ev.pc, t, op_t, ev.scope if ev.strong else None)
        text = SAME_VALUE if same else self._cause_text(cause, t, u, pc_u, ev, earlier, unacquired)
        address = describe_address(self.mem, canonical)
        space_name = "shared" if space == Space.SHARED else "global"
        if same:
            severity = WARNING
        elif unacquired and not self._is_cas(self._flag_read_pc(t, u, earlier)):
            _, atomic, volatile, _ = batch_flags(ev)
            strong = bool(fu.atomic[0] or fu.volatile[0]) and (atomic or volatile)
            severity = unacquired_severity(cause, strong, self.model)
        else:
            severity = severity_of(cause)
        finding = Finding("data-race", severity, text, (first, second), space=space_name, address=address, same_value=same)
        self.findings.add(finding, count)

    def _cause_text(
        self, cause: Cause, t: int, u: int, pc_u: int, ev, earlier: tuple[int, int] | None = None, unacquired: bool = False
    ) -> str:
        """Why the pair races, in words. A release, flag read or acquire fence whose scope fell short is named
        only when the release it missed carries u's access (a flag's release sequence mixes releases of several
        threads); when a fence after t's flag read would order the pair (`unacquired`), the consumer's side is
        named: its acquire fence if one fell short, else the fence it lacks."""
        program, geo = self.ctx.program, self.geo
        if cause == Cause.NOT_STRONG:
            return cause_message(cause)
        notes = [] if earlier is None else [(text, acq) for text, rel, acq in self.missed.get(t, ()) if self._carries(rel, u, *earlier)]
        if unacquired:
            return next((text for text, acq in notes if acq), None) or self._missing_fence_text(self._flag_read_pc(t, u, earlier))
        if notes:
            return notes[0][0]
        if cause == Cause.INSUFFICIENT_SCOPE:
            narrow = pc_u if _is_cta(program.instructions[pc_u]) else ev.pc
            ins = program.instructions[narrow]
            op, hint = scoped_op_name(ins.opcode, ins.scope or "cta", next((m for m in ins.modifiers if m in _ATOMIC_OPS), None))
            where = ins.where()
            other = u if narrow == ev.pc else t
            return cause_message(cause, op=op, hint=hint, where=where, block=geo.thread_coords(other)[1])
        if cause == Cause.ATOMIC_VS_PLAIN:
            ins = program.instructions[pc_u]
            where = ins.where()
            return cause_message(cause, where=where)
        return cause_message(cause)

    def _canonical_many(self, space: int, units: np.ndarray) -> np.ndarray:
        """The canonical address (uint64) of the first byte of each dense unit of `space`."""
        units = np.asarray(units, dtype=np.int64)
        if space == Space.SHARED:
            return self.shared_slots.canonical(units)
        return np.uint64(GLOBAL_BASE) + self.global_pages.offsets(units).astype(np.uint64)


def _units(first: np.ndarray, wide: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The dense units of accesses of `size` bytes whose first units are `first` (4-byte words where `wide`, else
    bytes): every unit, lane by lane, the lane of each, and the bytes of each (None: all bytes)."""
    lanes = np.arange(len(first))
    if not wide.any() or wide.all():
        per_lane = size // WORD if wide.any() else size
        units = (first[:, None] + np.arange(per_lane, dtype=np.int64)[None, :]).reshape(-1)
        return units, np.repeat(lanes, per_lane), (np.full(len(units), WORD, dtype=np.int64) if wide.any() else None)
    counts = np.where(wide, size // WORD, size)
    lane = np.repeat(lanes, counts)
    units = first[lane] + np.arange(len(lane), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return units, lane, np.where(wide, WORD, 1)[lane].astype(np.int64)


def _take(width: np.ndarray | None, k: np.ndarray) -> np.ndarray | None:
    return None if width is None else width[k]


def _shared_release_addresses(addrs: np.ndarray, publishing: np.ndarray) -> np.ndarray:
    """The lanes whose address some lane of `publishing` releases on and another lane of the batch also
    accesses: only those see the batch's own lanes take effect in turn (a lane alone on its address reads
    what was there before the batch), so only they need going one by one."""
    hot = np.flatnonzero(np.isin(addrs, addrs[publishing]))
    _, inv, counts = np.unique(addrs[hot], return_inverse=True, return_counts=True)
    out = np.zeros(len(addrs), dtype=np.bool_)
    out[hot[counts[inv] > 1]] = True
    return out


def _objects(items: list) -> np.ndarray:
    """A 1-d object array of `items` (np.array would look inside them)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


_ATOMIC_OPS = frozenset({"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"})


def _is_cta(ins) -> bool:
    return ins.scope in ("cta", "cluster")


def _scope_name(rank: int) -> str | None:
    for name, r in SCOPE_RANK.items():
        if r == rank:
            return name
    return None


def _op_name(ins, write: bool) -> str:
    """How a site names an access, as every detector names it: `atomic add`, `read`, `volatile write`,
    `acquire read` (a strong `ld`/`st` says its semantics); a bulk reduction's writes are its atomics."""
    if ins.opcode in ("atom", "red") or (write and ins.opcode == "cp" and "reduce" in ins.modifiers):
        op = next((m for m in ins.modifiers if m in _ATOMIC_OPS), "rmw")
        return f"atomic {op}"
    op = "write" if write else "read"
    return f"{ins.semantics} {op}" if ins.semantics is not None and ins.opcode in ("ld", "st", "ldu") else op
