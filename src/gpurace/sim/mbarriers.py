"""mbarrier objects (sm_80+): their phases, the threads waiting on them, and what the detectors see of them.

An mbarrier is an opaque 8-byte object in shared memory. The simulator keeps its state in a side table keyed by
the object's canonical address, as the PTX ISA describes it: the current phase, the pending arrival count, the
expected arrival count (what `init` set, less `arrive_drop`s) and the tx-count. A phase completes when its pending
count and its tx-count are both zero; the next phase then starts with the expected count pending. Memory keeps
whatever bytes were there: the contents are opaque, and an ordinary `ld`/`st` of a live mbarrier's bytes is an
`invalid-mbarrier-use` finding (undefined behaviour in PTX, which the simulator cannot model faithfully).

**Instructions.** `init` (a count of 1..2^20-1), `arrive` (with an optional count; `.noComplete`, which must not
complete the phase; `.expect_tx`, which first adds to the tx-count), `arrive_drop` (also lowers the expected count
of later phases), `expect_tx`, `complete_tx`, `test_wait`/`try_wait` (with the state token an arrive returned, or
with `.parity`), `inval` and `pending_count`. The token of an arrive holds the phase it arrived on (high 32 bits)
and the pending count its arrival left (low 32 bits), which `pending_count` reads back. A wait with a token of
phase p succeeds once the current phase is past p; with parity P, once the current phase's parity is not P (the
ISA's "current or immediately preceding phase": a parity of the preceding phase succeeds at once).

**Waiting.** `test_wait` and `try_wait` return false while the phase is incomplete, and kernels spin on them
(libcu++'s `cuda::barrier::wait` backs off with `%globaltimer` and `nanosleep`). A thread whose wait is not
satisfied blocks at the instruction instead (`WAITING`), costing no steps, and runs it again when a phase of its
mbarrier completes. When nothing else can run, each blocked thread is let go once with false (the schedule in
which its test came early), so a kernel that does other work between tests goes on; a thread that blocks again
with no mbarrier changed since is in a `deadlock`, reported with the wait's and the `init`'s lines.

**Happens-before.** Completing a phase synchronises every arrive of the phase (release, by default) with every wait
that sees it complete (acquire, by default), when each is inside the other's scope (`.cta` by default, `.cluster`
for threads of other blocks of the cluster). The detectors see this as release/acquire operations on a location, as
they see flags and locks, with no detector knowing about mbarriers: the byte at `object + 4 * (phase % 2)` stands
for the phase's `.cta` arrivals, the next for its `.cluster` ones. The first arrival of a phase there is a strong
release store (which starts a new release sequence, dropping the phase two before), each later arrival a release
atomic (which extends it), and a satisfied wait an acquire load of the completed phase's byte of `.cta` arrivals,
and a `.cluster` wait one of both bytes, each with its instruction's scope. So a waiter acquires exactly the
arrivals of the phase it waited for that its scope lets it see: a `.cta` wait orders nothing of a remote `.cluster`
arrive (it does not read its byte, and what the arrive was to publish is a race with the waiter's reads), and
mbarrier operations never race with each other, as PTX has it. `init` is an ordinary 8-byte store, so an `init` that
other threads may still be using the object across (no barrier in between) is a data race with their operations.
`inval` emits nothing: libcu++'s `cuda::pipeline` invalidates its objects after ordering the other lanes of the warp
only by a warp collective (`match.any.sync`), which the memory model does not count, and a use after `inval` in the
simulated order is a finding anyway. `expect_tx`, `complete_tx` and `pending_count` order nothing (relaxed, in the
ISA) and emit no event.

**Cluster scope.** An arrive in the `.shared::cluster` state space is a `.cluster` one whatever its qualifiers say
(`mbarrier_ops._scope`). An object in another block's shared memory (a `mapa` address, `.shared::cluster` or generic)
takes `arrive` and `arrive_drop` (which cannot return a state there: the sink `_`), `expect_tx` and `complete_tx`,
as the ISA's table allows; `init`, `inval` and the waits on it are `invalid-mbarrier-use` findings, as is a state
asked of a remote arrive.

**Bulk copies.** A `cp.async.bulk{.tensor}` with `.mbarrier::complete_tx::bytes` performs a complete-tx of its size
on its object when it completes (`sim.async_copies`, mode `BULK_MBARRIER`). The ISA gives that complete-tx
`.release` semantics at `.cluster` scope and makes the copies' writes visible to every wait that sees the phase
complete: the detectors see it as a release at cluster scope on the 2 bytes after the arrivals' (`object + 4 *
(phase % 2) + 2`), which a satisfied wait on a phase that had copies also acquires at cluster scope. So a copy from
another block of the cluster (a multicast, a bulk copy or reduction into distributed shared memory) is ordered
before the waiters of the phase it completes on, whatever the wait's scope. The simulator lets it complete as late
as it can: once the phase's pending count is zero and its tx-count no more than the bytes of the bulk copies in
flight on it, the phase is *ready*, and completes when the next mbarrier operation on the object (a wait, most
often) observes it, or when no thread can run otherwise; so every access to a destination before a wait that saw the
phase complete races with a copy still in flight. The copies then write, each followed by a release of its issuing
thread on the phase's location (so the phase's waiters acquire the copies' writes). Copies that complete more bytes
than the tx-count expects are an `invalid-mbarrier-use` finding: the phase completes before some of them.

**`cp.async.mbarrier.arrive[.noinc]`.** The thread's earlier `cp.async` copies complete, and then an arrival
happens, at some time the ISA leaves open; the simulator takes the latest, when the phase could complete
otherwise. Without `.noinc` the instruction adds one to the pending count, which that arrival takes away again.
The copies' writes are given to the detectors at the instruction, followed by a release of the issuing thread on
the phase's location (so waiters of the phase are ordered after them); until the phase completes the copies stay
in flight for `sim.async_copies`, which reports any access to their destination as a race with the copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpurace.detect.findings import ERROR, Finding, describe_address, make_site
from gpurace.errors import UserError
from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.sim.memory import Space
from gpurace.sim.memory.layout import CANON_OWNER_SHIFT, CANON_OWNER_MASK
from gpurace.words import plural

WAITING = 5
"""The engine's status of a thread blocked in an unsatisfied mbarrier wait (beside RUN, BAR, WARP, DONE, PARKED)."""

OBJECT_SIZE = 8
ARRIVAL_BYTES = 1
"""The byte at `object + 4 * (phase % 2)` stands for a phase's `.cta` arrivals, the next for its `.cluster` ones."""
TX_OFFSET, TX_BYTES = 2, 2
"""The 2 bytes after them stand for the complete-tx of the phase's bulk copies."""
_SCOPES = ("cta", "cluster")
MAX_COUNT = (1 << 20) - 1
"""The largest expected arrival count PTX allows."""

MISUSE = "invalid-mbarrier-use"


@dataclass
class Barrier:
    """The state of one mbarrier object (module docstring)."""

    init_pc: int
    init_thread: int
    expected: int
    pending: int
    phase: int = 0
    tx: int = 0
    arrivals: list[int] = field(default_factory=lambda: [0, 0])  # so far in this phase, by scope (`_SCOPES`): the
    # first of each scope starts the release sequence of its byte
    deferred: int = 0  # arrivals owed by `cp.async.mbarrier.arrive`, made when the phase can otherwise complete
    alive: bool = True  # False after `inval`
    copied: list[bool] = field(default_factory=lambda: [False, False])  # by phase parity: bulk copies completed it


class Mbarriers:
    """The mbarrier objects of one launch and the threads waiting on them (module docstring)."""

    def __init__(self, eng) -> None:
        self.eng = eng
        n = eng.geo.nthreads
        self.table: dict[int, Barrier] = {}
        self.live = False  # some object is initialised: ordinary accesses are checked against them
        self._starts = np.zeros(0, dtype=np.uint64)  # the live objects' addresses, sorted
        self.epoch = 0  # counts state changes, to tell a thread blocking again in vain (`unstick`)
        self.wait_on = np.zeros(n, dtype=np.uint64)  # the object each WAITING thread waits on
        self.told_false = np.zeros(n, dtype=np.bool_)  # let go once with false: its next wait returns false
        self.told_at = np.full(n, -1, dtype=np.int64)  # the epoch at which it was
        self.ready: set[int] = set()  # objects whose phase waits only for bulk copies to land (`_try_complete`)

    # ------------------------------------------------------------------ lookup and findings

    def _misuse(self, pc: int, g: int, cause: str, addr: int, count: int = 1) -> None:
        eng = self.eng
        site = make_site(eng.program, eng.geo, pc, g, "mbarrier")
        eng.findings.add(Finding(MISUSE, ERROR, cause, (site,), space="shared", address=describe_address(eng.mem, addr)), count)

    def usable(self, pc: int, what: str, threads: np.ndarray, canon: np.ndarray) -> np.ndarray:
        """Which lanes name an initialised, not invalidated object; the others are findings."""
        ok = np.array([(b := self.table.get(int(a))) is not None and b.alive for a in canon.tolist()], dtype=np.bool_)
        if self.ready:  # an operation on an object observes its phase: the copies it waits for land first
            self._complete_ready(sorted(self.ready.intersection(canon[ok].tolist())))
        if not ok.all():
            bad = np.flatnonzero(~ok)
            a = int(canon[bad[0]])
            gone = a in self.table
            why = "after mbarrier.inval" if gone else "on an object no mbarrier.init initialised"
            self._misuse(pc, int(threads[bad[0]]), f"{what} {why}", a, len(bad))
        return ok

    def _index(self) -> None:
        self._starts = np.sort(np.array([a for a, b in self.table.items() if b.alive], dtype=np.uint64))
        self.live = len(self._starts) > 0

    def check_access(self, pc: int, threads: np.ndarray, canon: np.ndarray, size: int) -> None:
        """An ordinary access (threads at canonical `canon`, `size` bytes) that touches a live object: a finding."""
        starts = self._starts
        at = np.searchsorted(starts, canon + np.uint64(size), side="left") - 1
        hit = at >= 0
        hit[hit] = starts[at[hit]] + np.uint64(OBJECT_SIZE) > canon[hit]
        if hit.any():
            lane = int(np.argmax(hit))
            cause = "an ordinary load or store of a live mbarrier object's bytes (only mbarrier instructions may access it)"
            self._misuse(pc, int(threads[lane]), cause, int(canon[lane]), int(hit.sum()))

    # ------------------------------------------------------------------ events

    def _emit(self, pc: int, kind: AccessKind, threads, addrs, size: int, sem: str | None, scope: str = "cta") -> None:
        if not len(threads):
            return
        eng = self.eng
        order = np.argsort(threads, kind="stable")
        space = np.full(len(threads), int(Space.SHARED), dtype=np.int8)
        strong = sem is not None
        op = "add" if kind == AccessKind.ATOMIC else None
        eng.emit(AccessBatch(eng.next_seq(), pc, kind, threads[order], addrs[order], size, space, strong,
                             scope if strong else None, sem, op))  # fmt: skip

    def _phase_location(self, addr: int, phase: int) -> np.uint64:
        return np.uint64(addr + 4 * (phase % 2))

    def remote(self, threads: np.ndarray, canon: np.ndarray) -> np.ndarray:
        """Which objects (at canonical shared addresses `canon`) lie in another block than their thread's."""
        owner = ((canon >> np.uint64(CANON_OWNER_SHIFT)) & np.uint64(CANON_OWNER_MASK)).astype(np.int64)
        return owner != self.eng.geo.block_of[threads]

    def local_only(self, pc: int, what: str, threads: np.ndarray, canon: np.ndarray) -> np.ndarray:
        """Lanes whose object is in their own block; the others are findings (`what` does not reach a remote one)."""
        far = self.remote(threads, canon)
        if far.any():
            i = int(np.argmax(far))
            self._misuse(pc, int(threads[i]), f"{what} on an mbarrier object of another block of the cluster (only "
                         "arrive, arrive_drop, expect_tx and complete_tx may reach one)", int(canon[i]), int(far.sum()))  # fmt: skip
        return ~far

    # ------------------------------------------------------------------ instructions

    def init(self, pc: int, threads: np.ndarray, canon: np.ndarray, counts: np.ndarray, where: str) -> None:
        bad = (counts < 1) | (counts > MAX_COUNT)
        if bad.any():
            raise UserError(f"{where}: mbarrier.init with count {int(counts[bad][0])}: PTX allows 1..{MAX_COUNT}")
        self._emit(pc, AccessKind.WRITE, threads, canon, OBJECT_SIZE, None)
        for a, g, c in zip(canon.tolist(), threads.tolist(), counts.tolist()):
            self.table[a] = Barrier(pc, g, c, c)
            self._wake(a)
        self.epoch += 1
        self._index()

    def inval(self, pc: int, threads: np.ndarray, canon: np.ndarray) -> None:
        ok = self.usable(pc, "mbarrier.inval", threads, canon)
        for a in canon[ok].tolist():
            self.table[a].alive = False
        self.epoch += 1
        self._index()

    def arrive(self, pc: int, threads, canon, counts, *, sem: str, drop: bool, no_complete: bool, tx=None, deferred=False,
               scope: str = "cta"):  # fmt: skip
        """Arrivals of `threads` (ascending) on the objects at `canon`, `counts` each; returns the state tokens.

        `tx`: the tx-counts of `.expect_tx`; `deferred`: `cp.async.mbarrier.arrive`, whose arrival is owed
        (`counts` 1 without `.noinc`, which adds the one it owes to the pending count, 0 with it); `scope`: the
        threads the arrival's release reaches."""
        tokens = np.zeros(len(threads), dtype=np.uint64)
        ok = self.usable(pc, "mbarrier arrive", threads, canon)
        first = np.zeros(len(threads), dtype=np.bool_)
        lanes = np.flatnonzero(ok)
        loc = np.zeros(len(threads), dtype=np.uint64)
        touched = []
        for a in np.unique(canon[lanes]).tolist():
            b = self.table[a]
            mine = lanes[canon[lanes] == a]
            c = counts[mine].astype(np.int64)
            if tx is not None:
                b.tx += int(tx[mine].sum())
            loc[mine] = self._phase_location(a, b.phase) + np.uint64(_SCOPES.index(scope))
            first[mine[0]] = b.arrivals[_SCOPES.index(scope)] == 0
            b.arrivals[_SCOPES.index(scope)] += len(mine)
            if deferred:
                b.pending += int(c.sum())
                b.deferred += len(mine)
                left = np.full(len(mine), b.pending, dtype=np.int64)
            else:
                left = b.pending - np.cumsum(c)
                if drop:
                    b.expected -= int(c.sum())
                if left[-1] < 0:
                    g = int(threads[mine[np.argmax(left < 0)]])
                    self._misuse(
                        pc, g, f"more arrivals on an mbarrier phase than its expected count of {b.expected}: "
                        f"{plural(int(-left[-1]), 'arrival')} too many (the phase completes and they count "
                        "towards the next, in no defined order)", a,
                    )  # fmt: skip
                if no_complete and left[-1] <= 0:
                    self._misuse(pc, int(threads[mine[-1]]), "mbarrier.arrive.noComplete completes the phase (undefined behaviour in PTX)", a)
                b.pending = max(int(left[-1]), 0)
            tokens[mine] = (np.uint64(b.phase) << np.uint64(32)) | np.maximum(left, 0).astype(np.uint64)
            touched.append(a)
        self.epoch += 1
        release = "release" if sem == "release" else "relaxed"
        self._emit(pc, AccessKind.WRITE, threads[first], loc[first], ARRIVAL_BYTES, release, scope)
        rest = ok & ~first
        self._emit(pc, AccessKind.ATOMIC, threads[rest], loc[rest], ARRIVAL_BYTES, release, scope)
        for a in touched:
            self._try_complete(a)
        return tokens

    def change_tx(self, pc: int, threads: np.ndarray, canon: np.ndarray, amounts: np.ndarray) -> None:
        """`expect_tx` (positive amounts) and `complete_tx` (negative)."""
        ok = self.usable(pc, "mbarrier tx-count update", threads, canon)
        for a, d in zip(canon[ok].tolist(), amounts[ok].tolist()):
            self.table[a].tx += int(d)
        self.epoch += 1
        for a in np.unique(canon[ok]).tolist():
            self._try_complete(a)

    def settle(self, a: int) -> None:
        """A bulk copy towards the object at `a` was issued: its phase may complete now (`_try_complete`)."""
        self._try_complete(a)

    def _try_complete(self, a: int) -> None:
        """Complete the phase of the object at `a` when nothing but owed arrivals and the complete_tx of bulk
        copies in flight is pending. A phase that waits for bulk copies only becomes `ready`, and completes when
        an mbarrier operation on the object observes it, or when nothing else can run (`unstick`)."""
        b = self.table[a]
        copies = self.eng.async_copies
        inflight = copies.inflight_bytes(a) if copies.pending else 0
        if b.pending - b.deferred > 0 or b.tx - inflight > 0:
            return
        if inflight:
            self.ready.add(a)
            return
        if b.deferred:
            copies.release([a])  # the copies owed to this phase land now (module docstring)
        self._next_phase(a)

    def _complete_ready(self, objects: list[int]) -> None:
        """Complete the phases of the ready `objects`: their bulk copies write, in one batch of events, each
        followed by a release of its issuing thread on its phase's location (its complete-tx)."""
        if not objects:
            return
        copies = self.eng.async_copies
        inflight = {a: copies.inflight_bytes(a) for a in objects}
        pcs, threads, barriers = copies.release(objects)
        phase_of = {a: self.table[a].phase for a in objects}
        tx_at = np.uint64(TX_OFFSET)
        loc = np.array([self._phase_location(int(a), phase_of[int(a)]) + tx_at for a in barriers.tolist()], dtype=np.uint64)
        for pc in np.unique(pcs).tolist():
            mine = np.flatnonzero(pcs == pc)
            # an event names each thread once: a thread that copied towards several objects gets one per object
            rounds = np.zeros(len(mine), dtype=np.int64)
            t = threads[mine]
            order = np.argsort(t, kind="stable")
            same = np.concatenate(([False], t[order][1:] == t[order][:-1]))
            rounds[order] = np.arange(len(t)) - np.maximum.accumulate(np.where(~same, np.arange(len(t)), 0))
            for r in range(int(rounds.max()) + 1):
                sel = mine[rounds == r]
                self._emit(pc, AccessKind.ATOMIC, threads[sel], loc[sel], TX_BYTES, "release", "cluster")
        for a in objects:
            self.ready.discard(a)
            b = self.table[a]
            b.copied[b.phase % 2] = True
            if b.tx < inflight[a]:
                first = int(np.argmax(barriers == np.uint64(a)))
                self._misuse(
                    int(pcs[first]), int(threads[first]), f"the bulk copies in flight on an mbarrier phase complete "
                    f"{inflight[a]} bytes (complete_tx) where its tx-count expects {b.tx} (expect_tx): the phase "
                    "completes before some of them, and their bytes count towards the next phase", a,
                )  # fmt: skip
            self._next_phase(a)

    def _next_phase(self, a: int) -> None:
        b = self.table[a]
        b.phase += 1
        b.pending, b.arrivals, b.deferred, b.tx = b.expected, [0, 0], 0, 0
        b.copied[b.phase % 2] = False
        self.eng.progress = True
        self._wake(a)

    def _wake(self, a: int) -> None:
        eng = self.eng
        waiting = np.flatnonzero((eng.status == WAITING) & (self.wait_on == np.uint64(a)))
        if len(waiting):
            eng.resume(waiting)

    def wait(self, pc: int, threads, canon, wanted, *, parity: bool, sem: str, scope: str = "cta") -> np.ndarray:
        """`test_wait`/`try_wait`: which of `threads` see their phase complete (`wanted`: tokens, or parities).

        The lanes that do not, and were not let go with false (`unstick`), block (`WAITING`)."""
        ok = self.usable(pc, "mbarrier wait", threads, canon)
        ok[ok] = self.local_only(pc, "mbarrier wait", threads[ok], canon[ok])
        done = ~ok  # the run goes on past a wait on no object
        copied = np.zeros(len(threads), dtype=np.bool_)
        loc = np.zeros(len(threads), dtype=np.uint64)
        for a in np.unique(canon[ok]).tolist():
            b = self.table[a]
            mine = np.flatnonzero(ok & (canon == np.uint64(a)))
            if parity:
                got = (wanted[mine].astype(np.int64) & 1) != b.phase % 2
                phase = np.full(len(mine), b.phase - 1)
            else:
                phase = (wanted[mine] >> np.uint64(32)).astype(np.int64)
                got = phase < b.phase
            done[mine] = got
            loc[mine] = np.uint64(a) + (np.uint64(4) * (phase % 2).astype(np.uint64))
            copied[mine] = np.array(b.copied)[phase % 2]
        acquired = done & ok
        acquire = "acquire" if sem == "acquire" else "relaxed"
        self._emit(pc, AccessKind.READ, threads[acquired], loc[acquired], ARRIVAL_BYTES, acquire, scope)
        if scope == "cluster":  # the phase's arrivals of cluster scope too
            self._emit(pc, AccessKind.READ, threads[acquired], loc[acquired] + np.uint64(1), ARRIVAL_BYTES, acquire, scope)
        # the complete-tx of the phase's bulk copies, at cluster scope (module docstring)
        tx = acquired & copied
        self._emit(pc, AccessKind.READ, threads[tx], loc[tx] + np.uint64(TX_OFFSET), TX_BYTES, acquire, "cluster")
        blocked = ~done & ~self.told_false[threads]
        self.told_false[threads] = False
        if blocked.any():
            stay = threads[blocked]
            self.eng.status[stay] = WAITING
            self.wait_on[stay] = canon[blocked]
        return done

    # ------------------------------------------------------------------ stuck

    def unstick(self) -> bool:
        """Nothing can run: let every blocked thread go once with false, unless it was let go already with no
        mbarrier changed since (it blocked again in vain). True if any thread was let go."""
        eng = self.eng
        if self.ready:  # bulk copies land before any wait is let go with false
            self._complete_ready(sorted(self.ready))
            self.epoch += 1
            return True
        waiting = np.flatnonzero(eng.status == WAITING)
        fresh = waiting[self.told_at[waiting] != self.epoch]
        if not len(fresh):
            return False
        self.told_false[fresh] = True
        self.told_at[fresh] = self.epoch
        eng.resume(fresh)
        return True

    def report_stuck(self) -> None:
        """A deadlock finding per object that blocked threads wait on for ever."""
        eng = self.eng
        waiting = np.flatnonzero(eng.status == WAITING)
        for a in np.unique(self.wait_on[waiting]).tolist():
            members = waiting[self.wait_on[waiting] == np.uint64(a)]
            b = self.table[a]
            g = int(members[0])
            owed = f" ({b.deferred} owed by cp.async.mbarrier.arrive)" if b.deferred else ""
            tx = f" and a tx-count of {b.tx}" if b.tx else ""
            cause = (
                f"mbarrier phase never completes: {plural(len(members), 'thread')} wait for phase {b.phase}, "
                f"which still has {plural(b.pending, 'pending arrival')}{owed}{tx} of the {b.expected} expected, "
                "and every thread that could arrive has exited or waits"
            )
            sites = (make_site(eng.program, eng.geo, int(eng.pc[g]), g, "mbarrier wait"), make_site(eng.program, eng.geo, b.init_pc, b.init_thread, "mbarrier.init"))
            eng.findings.add(Finding("deadlock", ERROR, cause, sites, space="shared", address=describe_address(eng.mem, a)), len(members))
