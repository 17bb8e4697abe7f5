"""The SIMT execution engine: scheduling, waiting, and the end-of-run checks.

Every thread has its own pc (independent thread scheduling). A scheduler step
picks one pc and executes that instruction for every eligible thread sitting
at it, across warps and blocks, as one vectorised operation.

Scheduling (the default, deterministic policy) is "lowest pc first, with
yields at backward branches": a thread that takes a backward branch is held
back (`yielded`) until every other runnable thread has also reached a backward
branch, blocked, or exited; then a new *round* starts. Lowest-pc-first makes
divergent threads reconverge (the ones behind catch up) and keeps the common
case fully vectorised; the per-round yield gives every thread a turn, so spin
locks taken by every lane of a warp and flags set by another block make
progress. A spinning thread whose iteration only re-reads memory parks until
something it read changes (`sim.parking`), so waiters cost a few iterations
per wait, not one per round. All blocks are co-resident (a grid larger than a real GPU could hold
still runs, which can only make more schedules possible, never fewer).

The seeded `random` policy (`sim.schedule`) explores other interleavings:
it ranks the warps at random and lets the highest-ranked warp at a
synchronisation point (atomic, fence, barrier, strong access) go first, and
holds warps back for a few steps, at the start and around synchronisation
points; otherwise it runs the lowest pc as `min-pc` does. It keeps the rounds
and yields, and so the same progress guarantees. The `reverse` policy is its
fixed variant: highest warp first, no holds. The `flip` policy
(`sim.contention`) is `min-pc` with the winner of every contended atomic of an
earlier run held back until the runner-up has gone. `reverse` and `flip` pick
as `min-pc` does until it first runs an instruction whose order between warps
matters, so `check` forks them from schedule 0's run at that step
(`sim.shared_prefix`; `Engine._at_fork_point`).

Threads block at barriers (`bar.sync`) and warp-synchronising instructions
(`bar.warp.sync`, `shfl.sync`, ...). When nothing can run, the engine decides
what the program did wrong: barriers that wait for exited threads
(barrier divergence), warp syncs naming exited lanes (invalid warp sync), or a
deadlock. A livelock (a round in which nothing changed memory and every
spinning thread returned to exactly the state it had in the previous round, or
parked threads that nothing left running can wake) or an exhausted step
budget ends the run with a finding instead of a hang; so do the command's
wall-clock deadline (`timeout`) and a call deeper than the stack limit
(`stack-overflow`), both from `gpurace.limits.Limits`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from gpurace.detect.findings import ERROR, Finding, FindingSet, Site, make_site
from gpurace.frontend.demangle import demangle_signature
from gpurace.limits import Limits, format_size
from gpurace.words import plural
from gpurace.sim import assert_distance, collector
from gpurace.sim.async_copies import AsyncCopies
from gpurace.sim.mbarriers import Mbarriers
from gpurace.sim.wgmma_ops import WgmmaState
from gpurace.sim.proxy_fences import ProxyFences, reads_shared_async
from gpurace.sim.tensormap_proxy import TensormapProxy, edits_tensor_maps
from gpurace.sim.clusters import ClusterBarrier
from gpurace.sim.device_runtime import DeviceRuntime
from gpurace.sim.events import Event, EventSink, ExitEvent, SyncEvent
from gpurace.sim.calls import CallStack
from gpurace.sim.geometry import WARP_SIZE, Geometry
from gpurace.sim.memory.layout import MAX_LOCAL_BYTES_PER_THREAD, Space
from gpurace.sim.program import Program
from gpurace.sim.contention import FlipSchedule
from gpurace.sim.parking import Parking
from gpurace.sim.schedule import SeededSchedule
from gpurace.sim.shared_prefix import SharedPrefix, order_matters
from gpurace.sim.state import ThreadState

RUN, BAR, WARP, DONE = 0, 1, 2, 3  # and PARKED (`sim.parking`)

# What a warp-waiting thread waits for: any bar.warp.sync, or the same collective pc.
WAIT_WARPSYNC, WAIT_COLLECTIVE = 0, 1


POLICIES = ("min-pc", "reverse", "random")

_TIMED_GROUP = 4096
"""A step of at least this many threads checks the time limit itself (others every 256 steps): one such step
can take a second, and 256 of them minutes past the limit."""

FIRST_LOOK_GAP, MAX_LOOK_GAP = 2, 32
"""First and largest gap, in rounds with memory progress, between two pairs of looks for spinners to park
(`Engine._look_now`)."""


@dataclass(frozen=True)
class Policy:
    """How the scheduler picks the next instruction: `min-pc` (default), `reverse` (highest warp first at
    synchronisation points), `random` with a seed (`sim.schedule`), or `flip` with the `gates` a watched run
    gave (`sim.contention`: the runner-up of every contended atomic goes first; built by `check`, not a
    `--policy` choice, since it needs a run to learn from)."""

    kind: str = "min-pc"
    seed: int = 0
    gates: tuple = ()


@dataclass
class RunStats:
    steps: int = 0
    thread_instructions: int = 0
    rounds: int = 0
    events: int = 0


@dataclass
class _ThreadsSeen:
    """A look at a round's end, for livelock and parking: the running threads, their pcs, the register slots
    written since the look before, and a hash per thread of those slots' values."""

    idx: np.ndarray
    pcs: np.ndarray
    slots: tuple[int, ...]
    hash: np.ndarray


def _group(keys: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`np.unique(keys, return_inverse=True, return_counts=True)` for keys in [0, `space`): by counting when the
    key space is not much larger than the keys (linear, where `unique` sorts), else by `unique`."""
    if space > 4 * len(keys) + 4096:
        return np.unique(keys, return_inverse=True, return_counts=True)
    counts = np.bincount(keys, minlength=space)
    present = counts > 0
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present), rank[keys], counts[present]


def in_launch(event: Event, geo: Geometry) -> Event:
    """`event` of a later wave (`sim.waves`) with the launch's thread, block and warp ids, as detectors know them."""
    changes = {"threads": event.threads + geo.thread_base}
    if isinstance(event, SyncEvent):
        if event.kind == "barrier":
            changes["groups"] = event.groups + geo.first_block
        elif event.kind in ("warp", "collective"):
            changes["groups"] = event.groups + (geo.warp_base << 32)
        else:
            raise ValueError(f"{event.kind} events do not occur in waves (launches with clusters run whole)")
    return replace(event, **changes)


def _absent_lanes(geo: Geometry) -> np.ndarray:
    """Per warp of the launch, the bits of the lanes that do not exist (past the end of a block's partial last
    warp). Every block has the same warps, so one block's pattern repeated: no pass over the threads."""
    counts = np.minimum(WARP_SIZE, geo.block_size - WARP_SIZE * np.arange(geo.warps_per_block, dtype=np.int64))
    present = ((np.uint64(1) << counts.astype(np.uint64)) - np.uint64(1)).astype(np.uint32)
    return np.tile(~present, geo.nblocks)


class Engine:
    """Runs one launch of a `Program` over a `Memory`, feeding events to sinks."""

    def __init__(
        self,
        program: Program,
        geometry: Geometry,
        memory,
        sinks: list[EventSink],
        *,
        policy: Policy = Policy(),
        max_steps: int = 2_000_000,
        progress: Callable[[RunStats], None] | None = None,
        limits: Limits | None = None,
        grid_workspace: int = 0,
        first_seq: int = 0,
        prefix: SharedPrefix | None = None,
    ):
        from gpurace.sim.execute import decode_all

        self.program = program
        self.geo = geometry
        self.mem = memory
        self.sinks = sinks
        self._use_policy(policy)
        # Schedule 0 of a check whose other schedules share its run up to the first instruction whose order
        # matters (`sim.shared_prefix`): those pcs, until one is picked.
        self.prefix = prefix
        self._fork_pcs = None
        if prefix is not None and prefix.pending and self.schedule is None:
            self._fork_pcs = order_matters(program)
            self.repick_at = self._fork_pcs
        self.max_steps = max_steps
        self.limits = limits or Limits()
        self.progress_callback = None if prefix is not None and prefix.role == "worker" else progress
        self.findings = FindingSet()
        self.stats = RunStats()
        n = geometry.nthreads
        self.grid_workspace = grid_workspace  # its address in a cooperative launch, else 0 (`sim.cooperative`)
        self.state = ThreadState(program, geometry, grid_workspace)
        self.calls = CallStack(n)
        self.pc = np.full(n, program.entry.entry, dtype=np.int64)
        self.status = np.zeros(n, dtype=np.int8)
        self.yielded = np.zeros(n, dtype=np.bool_)
        # The threads a step may pick from: a superset of the eligible ones (running, not yielded), so that a
        # step costs the threads still in play, not the launch; None: all of them, recomputed on the next pick.
        self._live: np.ndarray | None = None
        # Under `min-pc`, the lowest pc of the eligible threads the last pick left out (-1: unknown; `_pick`).
        self._rest_min = -1
        # The groups that yielded this round: at its end they are exactly the running threads.
        self.yield_log: list[np.ndarray] = []
        self.exit_pc = np.full(n, -1, dtype=np.int64)
        # Barrier waits: id, expected count (0 = the whole block), predicate for bar.red.
        self.bar_id = np.zeros(n, dtype=np.int32)
        self.bar_count = np.zeros(n, dtype=np.int32)
        self.bar_pred = np.zeros(n, dtype=np.bool_)
        self.bar_arrivals: dict[tuple[int, int], int] = {}  # (block, id) -> bar.arrive count
        # Warp waits.
        self.wait_mask = np.zeros(n, dtype=np.uint32)
        self.wait_kind = np.zeros(n, dtype=np.int8)
        self.exited_lanes = np.zeros(geometry.nwarps, dtype=np.uint32)
        # Lanes past the end of a block's partial last warp do not exist: a mask may name them (the full
        # mask 0xffffffff does) and nobody waits for them, as on hardware.
        self.absent_lanes = _absent_lanes(geometry)
        # Livelock detection and parked spinners.
        self.progress = False
        self._last_look: _ThreadsSeen | None = None
        # When to look at a round with progress (`_look_now`): the gap before the next pair of looks, the round
        # of the next look, and whether the last look was the first of a pair.
        self._look_gap = FIRST_LOOK_GAP
        self._next_look = FIRST_LOOK_GAP
        self._look_pair = False
        self.parking = Parking(self)
        self.watching = False  # some thread's reads and writes are recorded this round (`Parking.read`)
        self.stopped: str | None = None
        self._seq = first_seq  # events of earlier waves came before (`sim.waves`)
        self.bar_red_writers: dict[int, object] = {}  # pc of a bar.red -> writes its result on release
        self.async_copies = AsyncCopies(self)  # `cp.async` copies in flight
        self.mbarriers = Mbarriers(self)  # mbarrier objects and the threads blocked in their waits
        self.wgmma = WgmmaState(self)  # accumulators of wgmma products in flight (`sim.wgmma_ops`)
        self.proxy_fences = ProxyFences(self, reads_shared_async(program))  # unfenced generic writes (`sim.proxy_fences`)
        self.tensormap_proxy = TensormapProxy(self, edits_tensor_maps(program))  # edited maps (`sim.tensormap_proxy`)
        self.cluster_barrier = ClusterBarrier(self)  # `barrier.cluster` phases and their waiters (`sim.clusters`)
        self.assert_distance = assert_distance.watching(sinks, n)  # for the input search (`sim.assert_distance`)
        self.device_runtime = DeviceRuntime(self)  # launches from device code and their errors (`sim.device_runtime`)
        self.handlers = decode_all(self)

    def _use_policy(self, policy: Policy) -> None:
        """Schedule from now on under `policy`."""
        self.policy = policy
        if policy.kind == "min-pc":
            self.schedule = None
        elif policy.kind == "flip":
            self.schedule = FlipSchedule(self.program, self.geo, policy.gates)
        else:
            self.schedule = SeededSchedule(self.program, self.geo, policy.seed, reverse=policy.kind == "reverse")
        # Where the scheduler must pick again even when every eligible thread moved together.
        self.repick_at = self.schedule.sync_pcs if self.schedule is not None else None

    def _at_fork_point(self) -> None:
        """Schedule 0 picked its first instruction whose order matters: the other schedules fork from here
        (`sim.shared_prefix`); in a worker, this engine goes on under the worker's policy."""
        self._fork_pcs = None
        self.repick_at = None
        policy = self.prefix.reached(self)
        if policy is not None:
            self._use_policy(policy)
            if self.prefix.role == "worker":
                self.progress_callback = None

    # ------------------------------------------------------------------ events

    @property
    def last_seq(self) -> int:
        """The sequence number of the latest event."""
        return self._seq

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def emit(self, event: Event) -> None:
        self.stats.events += 1
        if self.geo.first_block:
            event = in_launch(event, self.geo)
        for sink in self.sinks:
            sink.on_event(event)

    # ------------------------------------------------------------------ findings

    def site(self, pc: int, g: int, op: str, scope: str | None = None) -> Site:
        return make_site(self.program, self.geo, pc, g, op, scope)

    def thread_bytes(self, g: int, address: int, n: int) -> bytes:
        """The `n` bytes at generic `address` as thread `g` sees them (0 where nothing is), for messages and
        output made from the kernel's own strings (annotations, `printf`); no access event."""
        addrs = np.uint64(address) + np.arange(n, dtype=np.uint64)
        threads = np.full(n, g, dtype=np.int64)
        acc = self.mem.resolve(Space.GENERIC, addrs, threads, self.geo.block_of[threads], 1)
        return self.mem.load(acc, 1).astype(np.uint8).tobytes()

    def thread_string(self, g: int, address: int, limit: int) -> bytes:
        """The NUL-terminated string at generic `address` as thread `g` sees it, at most `limit` bytes."""
        return self.thread_bytes(g, address, limit).split(b"\0", 1)[0]

    def report(self, kind: str, cause: str, sites: list[Site], *, severity: str = ERROR, space=None, count=1, **details) -> None:
        self.findings.add(Finding(kind, severity, cause, tuple(sites), space=space, details=details), count)

    def report_access_errors(self, pc: int, acc, idx: np.ndarray, op: str, size: int) -> None:
        """Out-of-bounds, misaligned and read-only accesses: one finding per instruction and kind."""
        from gpurace.sim.memory import ErrorKind, Space

        bad = np.flatnonzero(acc.error != ErrorKind.OK)
        kinds = acc.error[bad]
        for k in np.unique(kinds):
            lanes = bad[kinds == k]
            lane = int(lanes[0])
            g = int(idx[lane])
            kind = {ErrorKind.OUT_OF_BOUNDS: "out-of-bounds", ErrorKind.MISALIGNED: "misaligned-access"}.get(
                ErrorKind(int(k)), "write-to-read-only"
            )
            self.report(
                kind,
                self.mem.describe_error(acc, lane),
                [self.site(pc, g, op)],
                space=Space(int(acc.space[lane])).name.lower(),
                count=len(lanes),
                address=int(acc.address[lane]),
            )

    # ------------------------------------------------------------------ main loop

    def run(self) -> None:
        """Run the launch to its end (or to the first finding that stops it), the garbage collector held back
        meanwhile (`sim.collector`)."""
        with collector.held_back():
            self._run()

    def _run(self) -> None:
        pc, status, yielded = self.pc, self.status, self.yielded
        handlers = self.handlers
        stats = self.stats
        state = self.state
        group: np.ndarray | None = None
        group_pc = 0
        while True:
            if group is None:
                live = self._live
                if live is None:
                    live = np.flatnonzero((status == RUN) & ~yielded)
                else:
                    # every thread (a converged launch between rounds): the masks themselves, no gathers
                    eligible = (status == RUN) & ~yielded if len(live) == len(status) else (status[live] == RUN) & ~yielded[live]
                    if not eligible.all():
                        live = live[eligible]
                self._live = live
                ncand = len(live)
                if ncand == 0:
                    if not self._between_rounds():
                        return
                    continue
                group_pc, group = self._pick(live)
                if self._fork_pcs is not None and self._fork_pcs[group_pc]:
                    self._at_fork_point()
                    group_pc, group = self._pick(live)
                state.use_group(group)
            r = handlers[group_pc](group)
            if self.watching and self.parking.unsafe_pc[group_pc]:
                self.parking.ran_unsafe(group)
            stats.steps += 1
            stats.thread_instructions += len(group)
            state.clock = stats.steps
            if self.stopped is not None:
                return
            if stats.steps % 256 == 0 and self.progress_callback is not None:
                self.progress_callback(stats)
            if (stats.steps % 256 == 0 or len(group) >= _TIMED_GROUP) and self.limits.expired():
                self._out_of_time()
                return
            if stats.steps >= self.max_steps:
                self._step_budget_exhausted()
                return
            if r is not None:
                pc[state.rows(group)] = r
                if (len(group) == ncand or r < self._rest_min) and (self.repick_at is None or not self.repick_at[r]):
                    # the whole eligible set moved together, or the group is still alone at the lowest pc: the
                    # pick would choose it again, so no rescan
                    group_pc = r
                    continue
            group = None

    def _pick(self, live: np.ndarray) -> tuple[int, np.ndarray]:
        """(pc, threads) to run next among the eligible threads `live` (ascending).

        Under `min-pc` it also notes the lowest pc of the others (`_rest_min`): while the group moves on below
        it and nothing else changes (`resume` forgets it), the group is the next pick too, so a step of a
        diverged group costs its own threads, not a scan of all the threads that wait further on."""
        self._rest_min = -1
        if self.schedule is None:
            pcs = self.pc if len(live) == len(self.pc) else self.pc[live]  # every thread: no gather
            p = int(pcs.min())
            if int(pcs.max()) == p:  # converged: the group is all of them, no mask to compress with
                return p, live
            at = pcs == p
            group = live[at]
            self._rest_min = int(pcs[~at].min())
            return p, group
        return self.schedule.pick(self.pc, live, self.stats.steps)

    def wake_priority(self, idx: np.ndarray) -> np.ndarray:
        """A sort key over threads `idx`, lowest first: the order in which this policy lets contenders win
        (thread order under `min-pc` and `flip`, warp rank under `random` and `reverse`)."""
        if isinstance(self.schedule, SeededSchedule):
            return self.schedule.priority(idx)
        return idx

    def resume(self, idx: np.ndarray) -> None:
        """Threads `idx` (ascending) leave a wait and run again, in this round."""
        self.status[idx] = RUN
        self._rest_min = -1  # they may sit below the running group: pick again
        live = self._live
        if live is None:
            return
        if 8 * (len(idx) + len(live)) > len(self.status):
            self._live = None  # as cheap to find them all again
            return
        pos = np.minimum(np.searchsorted(live, idx), max(len(live) - 1, 0))
        new = idx[live[pos] != idx] if len(live) else idx
        self._live = np.sort(np.concatenate((live, new)), kind="stable")  # two ascending runs: timsort merges them

    def _between_rounds(self) -> bool:
        """No eligible thread: start a new round, resolve waits, or finish. False ends the run.

        Every thread still running has yielded this round, so the yield log names them all."""
        log = self.yield_log  # handlers hold this list: emptied in place
        # The log is the round's groups, each ascending: timsort ("stable") merges such runs in linear time,
        # where the default quicksort costs n log n (a tenth of a second per round at 1M threads).
        if len(log) == 1:  # one group yielded the whole round (converged code): already ascending
            running = log[0]
        else:
            running = np.sort(np.concatenate(log), kind="stable") if log else np.zeros(0, dtype=np.int64)
        log.clear()
        still = (self.status if len(running) == len(self.status) else self.status[running]) == RUN
        if not still.all():
            running = running[still]
        parking = self.parking
        if len(running) or parking.count:
            all_same, same = self._look_now(running)
            spinning = running
            running, woken = parking.settle(running, same, self.progress)
            if len(spinning) and not self.progress and all_same and not len(woken):
                self._livelocked(np.union1d(spinning, parking.parked()))
                return False
            if len(running):
                self.stats.rounds += 1
                self.progress = False
                if len(running) == len(self.yielded):
                    self.yielded[:] = False
                else:
                    self.yielded[running] = False
                self._live = running
                return True
            if parking.count:
                self._livelocked(parking.parked())  # nothing runs, so nothing can wake them
                return False
        self._live = None
        if (self.status == DONE).all():
            return False
        return self._resolve_stuck()

    # ------------------------------------------------------------------ livelock

    def _look_now(self, idx: np.ndarray) -> tuple[bool, np.ndarray]:
        """`_look` at the end of every round without memory progress (the livelock check); of rounds with
        progress, in pairs of consecutive rounds at growing gaps while the looks find no thread where the one
        before saw it (so that a loop storing every iteration pays a look now and then, not every round), and
        at every round again once one does."""
        rounds = self.stats.rounds
        if self.progress and rounds < self._next_look:
            return False, np.zeros(len(idx), dtype=np.bool_)
        all_same, same = self._look(idx)
        if not same.any() and self._look_pair:
            # the second look of a pair found no spinner: wait longer before the next pair
            self._look_gap = min(2 * self._look_gap, MAX_LOOK_GAP)
            self._next_look = rounds + self._look_gap
            self._look_pair = False
        else:
            # a spinner (keep looking at every round), or the first look of a pair
            self._look_pair = not same.any()
            self._next_look = rounds + 1
        return all_same, same

    def _look(self, idx: np.ndarray) -> tuple[bool, np.ndarray]:
        """Whether threads `idx` (ascending) are where, and hold what, they were at the last look (the previous
        round's end): all of them (and no other), and each one. This look is kept for the next.

        Incremental: only the register slots written since the last look (`ThreadState.dirty`) can differ,
        and a hash per thread of their values stands for them. Two looks compare when the same slots were
        written before each (a spin loop writes the same ones every time); otherwise the answer is "changed"
        and the spin is found a look later, so the answer never errs toward a false livelock or a wrong
        parking, and a look costs the registers the round wrote, not all of them.
        """
        state = self.state
        last = self._last_look
        pcs = self.pc.copy() if len(idx) == len(self.pc) else self.pc[idx]
        slots = tuple(int(s) for s in np.flatnonzero(state.dirty))
        state.dirty[:] = False
        h = self._look_hashes(idx, pcs, slots)
        self._last_look = _ThreadsSeen(idx, pcs, slots, h)
        if last is None or last.slots != slots or not len(idx) or not len(last.idx):
            return False, np.zeros(len(idx), dtype=np.bool_)
        if len(idx) == len(last.idx) and np.array_equal(idx, last.idx):  # the same threads (the common case)
            same = (last.pcs == pcs) & (last.hash == h)
        else:
            at = np.minimum(np.searchsorted(last.idx, idx), len(last.idx) - 1)
            same = (last.idx[at] == idx) & (last.pcs[at] == pcs) & (last.hash[at] == h)
        return len(idx) == len(last.idx) and bool(same.all()), same

    def _look_hashes(self, idx: np.ndarray, pcs: np.ndarray, slots: tuple[int, ...]) -> np.ndarray:
        """Per thread of `idx` (at `pcs`), a 64-bit hash of its pc and its registers in `slots`."""
        state = self.state
        # A thread's hash depends on its own registers only: when most threads run, hashing every thread's
        # registers whole and keeping those of `idx` costs less than gathering each register for them.
        dense = 2 * len(idx) >= len(self.pc)
        h = np.multiply((self.pc if dense else pcs).view(np.uint64), np.uint64(0x9E3779B97F4A7C15))
        prime = np.uint64(0x100000001B3)
        for slot in slots:
            reg = state.regs[slot]
            np.bitwise_xor(h, reg if dense else reg[idx], out=h)
            np.multiply(h, prime, out=h)
        if dense and len(idx) < len(self.pc):
            h = h[idx]
        return h

    def _livelocked(self, idx: np.ndarray) -> None:
        """Threads `idx` spin, or are parked, with nothing left to change what they observe."""
        pcs = np.unique(self.pc[idx])
        sites = [self.site(int(p), int(idx[np.argmax(self.pc[idx] == p)]), "spin") for p in pcs[:2]]
        self.report(
            "livelock",
            f"{plural(len(idx), 'thread')} spin without making progress: nothing they can observe changes "
            "(no other thread is left to change the memory they wait on)",
            sites,
            threads=len(idx),
        )
        self.stopped = "livelock"

    def _step_budget_exhausted(self) -> None:
        self._stop_running(
            "livelock",
            f"the run exceeded its step budget of {self.max_steps} scheduler steps",
            "raise --max-steps if the kernel is just long",
        )
        self.stopped = "step budget"

    def _out_of_time(self) -> None:
        self._stop_running(
            "timeout",
            f"the check exceeded its wall-clock budget of {self.limits.timeout:g} s after {self.stats.steps} scheduler steps",
            "raise --timeout if the kernel is just long",
        )
        self.stopped = "timeout"

    def _stop_running(self, kind: str, what: str, advice: str) -> None:
        """A finding at the pcs of the threads still running, for a run that a limit ends."""
        live = np.flatnonzero(self.status != DONE)
        pcs = np.unique(self.pc[live])[:2]
        sites = [self.site(int(p), int(live[np.argmax(self.pc[live] == p)]), "running") for p in pcs]
        self.report(kind, f"{what} with {plural(len(live), 'thread')} still running ({advice})", sites, threads=len(live))

    def stack_overflow(self, pc: int, idx: np.ndarray, callee: str) -> None:
        """Threads `idx` at the call at `pc` would overflow their stack: a finding, and the run ends.

        The stack is bounded twice: nested calls (`--max-call-depth`) and the bytes of their frames (the local
        memory a GPU gives one thread)."""
        g = int(idx[np.argmax(self.calls.depth[idx])])
        depth = int(self.calls.depth[g]) + 1
        if depth > self.limits.max_call_depth:
            limit = f"the stack limit of {self.limits.max_call_depth} nested calls: unbounded recursion, or raise --max-call-depth"
        else:
            limit = (
                f"the {format_size(MAX_LOCAL_BYTES_PER_THREAD)} of local memory a thread has for its call frames: "
                "unbounded recursion, or frames too large for it"
            )
        self.report(
            "stack-overflow",
            f"the call to {demangle_signature(callee).name} would nest {depth} calls deep, past {limit}",
            [self.site(pc, g, "call")],
            count=len(idx),
            depth=depth,
        )
        self.stopped = "stack overflow"

    # ------------------------------------------------------------------ barriers

    def arrive_barrier(self, idx: np.ndarray, bar_id: np.ndarray, count: np.ndarray, pred: np.ndarray | None) -> None:
        self.status[idx] = BAR
        self.bar_id[idx] = bar_id
        self.bar_count[idx] = count
        if pred is not None:
            self.bar_pred[idx] = pred
        self.check_barriers()

    def check_barriers(self, *, allow_exited: bool = False) -> bool:
        """Release every barrier instance whose arrivals are complete. True if any was released.

        With `allow_exited`, a barrier also completes when every thread of its block
        that has not exited is waiting at it (a barrier divergence finding says so).
        """
        waiting = np.flatnonzero(self.status == BAR)
        if len(waiting) == 0:
            return False
        geo = self.geo
        blocks = geo.block_of[waiting]
        key = blocks * 16 + self.bar_id[waiting]
        ukeys, inv, arrived = _group(key, geo.nblocks * 16)
        expected = np.zeros(len(ukeys), dtype=np.int64)
        np.maximum.at(expected, inv, self.bar_count[waiting].astype(np.int64))  # one dtype: NumPy's fast path
        whole = expected == 0
        expected[whole] = geo.block_size
        if self.bar_arrivals:
            for i, k in enumerate(ukeys):
                arrived[i] += self.bar_arrivals.get((int(k) // 16, int(k) % 16), 0)
        complete = arrived >= expected
        exited_release = np.zeros(len(ukeys), dtype=np.bool_)
        if allow_exited and not complete.all():
            done_per_block = np.bincount(geo.block_of[self.status == DONE], minlength=geo.nblocks)
            ublocks = ukeys // 16
            # every non-exited thread of the block waits at this barrier instance
            per_block_waiting = np.bincount(blocks, minlength=geo.nblocks)
            exited_release = (~complete) & whole & (arrived + done_per_block[ublocks] >= geo.block_size) & (
                per_block_waiting[ublocks] == arrived
            )
            complete = complete | exited_release
        if not complete.any():
            return False
        released = waiting[complete[inv]]
        self._release_barrier(released, ukeys, complete, exited_release, inv[complete[inv]])
        return True

    def _release_barrier(self, released, ukeys, complete, exited_release, rel_inv) -> None:
        """Release the threads of every completed barrier instance at once.

        The cost is linear in the released threads, whatever the number of blocks: the per-instance
        checks are grouped operations, and only instances with something to report are visited one by one.
        """
        geo = self.geo
        pcs = self.pc[released]
        if self.bar_arrivals:
            for k in ukeys[complete]:
                self.bar_arrivals.pop((int(k) // 16, int(k) % 16), None)
        # Threads of one instance at different barrier statements: its lowest and highest pc differ.
        lowest = np.full(len(ukeys), np.iinfo(np.int64).max, dtype=np.int64)
        highest = np.full(len(ukeys), -1, dtype=np.int64)
        np.minimum.at(lowest, rel_inv, pcs)
        np.maximum.at(highest, rel_inv, pcs)
        for k_i in np.flatnonzero(complete & (lowest != highest)):
            bid = int(ukeys[k_i]) % 16
            members = released[rel_inv == k_i]
            mpcs = self.pc[members]
            distinct = np.unique(mpcs)
            a = int(members[np.argmax(mpcs == distinct[0])])
            b = int(members[np.argmax(mpcs == distinct[1])])
            self.report(
                "barrier-divergence",
                f"threads of block {self.site(int(distinct[0]), a, 'barrier').block} reach barrier {bid} "
                "at different barrier statements",
                [self.site(int(distinct[0]), a, "barrier"), self.site(int(distinct[1]), b, "barrier")],
            )
        for k_i in np.flatnonzero(exited_release):
            block, bid = int(ukeys[k_i]) // 16, int(ukeys[k_i]) % 16
            w = int(released[np.argmax(rel_inv == k_i)])
            gone = np.flatnonzero((geo.block_of == block) & (self.status == DONE))
            e = int(gone[0])
            self.report(
                "barrier-divergence",
                f"threads wait at barrier {bid} while {plural(len(gone), 'thread')} of their block have exited "
                "without reaching it",
                [self.site(int(self.pc[w]), w, "barrier"), self.site(int(self.exit_pc[e]), e, "exit")],
            )
        self._complete_bar_red(released)
        if self.proxy_fences.active:
            self.proxy_fences.barrier(released)
        self.resume(released)
        self.pc[released] = pcs + 1
        self.progress = True
        self.emit(SyncEvent(self.next_seq(), "barrier", released, geo.block_of[released], pcs))

    def _complete_bar_red(self, released: np.ndarray) -> None:
        """Write the results of `bar.red` (`__syncthreads_count/and/or`) for released threads."""
        if not self.bar_red_writers:
            return
        pcs = self.pc[released]
        for p in np.unique(pcs):
            writer = self.bar_red_writers.get(int(p))
            if writer is None:
                continue
            members = released[pcs == p]
            # reduce over all released threads of the same block and barrier, whatever their pc
            blocks = self.geo.block_of[members]
            all_blocks = self.geo.block_of[released]
            counts = np.bincount(all_blocks, weights=self.bar_pred[released], minlength=self.geo.nblocks)
            sizes = np.bincount(all_blocks, minlength=self.geo.nblocks)
            writer(members, counts[blocks].astype(np.int64), sizes[blocks])

    def bar_arrive(self, idx: np.ndarray, bar_id: np.ndarray) -> None:
        """`bar.arrive`: count the arrival without waiting."""
        blocks = self.geo.block_of[idx]
        keys, counts = np.unique(blocks * 16 + bar_id, return_counts=True)
        for k, c in zip(keys, counts):
            key = (int(k) // 16, int(k) % 16)
            self.bar_arrivals[key] = self.bar_arrivals.get(key, 0) + int(c)
        self.check_barriers()

    # ------------------------------------------------------------------ warp syncs

    def lane_bits(self, idx: np.ndarray | slice) -> np.ndarray:
        return np.left_shift(np.uint32(1), self.geo.lane[idx]).astype(np.uint32)

    def warp_or(self, warps: np.ndarray, bits: np.ndarray) -> np.ndarray:
        """OR of `bits` per global warp (array over all warps)."""
        acc = np.zeros(self.geo.nwarps, dtype=np.uint32)
        if len(warps) > 1 and (warps[1:] >= warps[:-1]).all():
            # ascending threads, so each warp's lanes are one run: OR the runs (`ufunc.at` costs ten times more)
            starts = np.flatnonzero(np.concatenate(([True], warps[1:] != warps[:-1])))
            acc[warps[starts]] = np.bitwise_or.reduceat(bits, starts)
        else:
            np.bitwise_or.at(acc, warps, bits)
        return acc

    def check_masks(self, pc: int, idx: np.ndarray, masks: np.ndarray, what: str) -> np.ndarray:
        """Validate warp-sync masks; returns the effective masks (own lane added, exited lanes removed)."""
        own = self.lane_bits(idx)
        missing_self = (masks & own) == 0
        if missing_self.any():
            g = int(idx[np.argmax(missing_self)])
            self.report(
                "invalid-warp-sync",
                f"lane {int(self.geo.lane[g])} executes {what} with mask 0x{int(masks[np.argmax(missing_self)]):08x}, "
                "which does not include the lane itself",
                [self.site(pc, g, what)],
                count=int(missing_self.sum()),
            )
        warps = self.geo.warp_of[idx]
        masks = masks & ~self.absent_lanes[warps]
        gone = masks & self.exited_lanes[warps]
        if gone.any():
            i = int(np.argmax(gone != 0))
            g = int(idx[i])
            self.report(
                "invalid-warp-sync",
                f"{what} with mask 0x{int(masks[i]):08x} names lane(s) 0x{int(gone[i]):08x} that have already exited",
                [self.site(pc, g, what)],
                count=int((gone != 0).sum()),
            )
        return self.effective_masks(idx, masks)

    def effective_masks(self, idx: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The lanes each of `idx` really waits for: its mask plus itself, less exited and absent lanes."""
        warps = self.geo.warp_of[idx]
        return (masks | self.lane_bits(idx)) & ~(self.exited_lanes[warps] | self.absent_lanes[warps])

    def warp_ready(self, idx: np.ndarray, masks: np.ndarray, present_idx: np.ndarray) -> np.ndarray:
        """Which of `idx` have every lane of their mask among `present_idx`."""
        warps = self.geo.warp_of[present_idx]
        present = self.warp_or(warps, self.lane_bits(present_idx))
        return (masks & ~present[self.geo.warp_of[idx]]) == 0

    # ------------------------------------------------------------------ exits

    def exit_threads(self, idx: np.ndarray, pc: int) -> None:
        if self.async_copies.pending:
            self.async_copies.exit(idx)  # their copies complete last in their program order (`sim.async_copies`)
        where = self.state.rows(idx)  # consecutive threads: slices, not scatters
        self.status[where] = DONE
        self.exit_pc[where] = pc
        self.exited_lanes |= self.warp_or(self.geo.warp_of[where], self.lane_bits(where))
        self.progress = True
        self.emit(ExitEvent(self.next_seq(), pc, idx))
        if (self.status == WARP).any() and (self.status[self.warp_mates(idx)] == WARP).any():
            from gpurace.sim.execute import recheck_warp_waiters

            recheck_warp_waiters(self)

    def warp_mates(self, idx: np.ndarray) -> np.ndarray:
        """Every thread of the warps of `idx` (a warp is up to 32 consecutive thread ids of one block)."""
        geo = self.geo
        firsts = np.unique(idx - geo.lane[idx])
        ids = (firsts[:, None] + np.arange(32)).ravel()
        ends = np.repeat((geo.block_of[firsts] + 1) * geo.block_size, 32)
        return ids[ids < ends]

    # ------------------------------------------------------------------ stuck

    def _resolve_stuck(self) -> bool:
        """Nothing can run but some threads wait. Release what hardware would, else report a deadlock."""
        if self.check_barriers(allow_exited=True):
            return True
        if self.mbarriers.unstick():  # a blocked mbarrier wait returns false once (`sim.mbarriers`)
            return True
        self.mbarriers.report_stuck()
        self.cluster_barrier.report_stuck()
        waiting = np.flatnonzero(self.status != DONE)
        bar = waiting[self.status[waiting] == BAR]
        warp = waiting[self.status[waiting] == WARP]
        geo = self.geo
        # Threads of one block waiting at different barriers, or at a barrier while others wait at a warp sync.
        if len(bar):
            # report the first stuck block: the others are usually stuck the same way
            b = int(geo.block_of[bar[0]])
            members = bar[geo.block_of[bar] == b]
            pcs = np.unique(self.pc[members])
            others = waiting[(geo.block_of[waiting] == b) & (self.status[waiting] != BAR)]
            if len(pcs) > 1 or len(np.unique(self.bar_id[members])) > 1:
                a = int(members[np.argmax(self.pc[members] == pcs[0])])
                c = int(members[np.argmax(self.pc[members] == pcs[-1])])
                self.report(
                    "barrier-divergence",
                    "threads of one block wait at different barriers; none of them can complete",
                    [self.site(int(pcs[0]), a, "barrier"), self.site(int(pcs[-1]), c, "barrier")],
                )
            elif len(others):
                a = int(members[0])
                c = int(others[0])
                self.report(
                    "deadlock",
                    "threads wait at a barrier that other threads of their block can never reach: "
                    "those wait for a warp synchronisation",
                    [self.site(int(self.pc[a]), a, "barrier"), self.site(int(self.pc[c]), c, "warp sync")],
                )
            else:
                a = int(members[0])
                need = int(self.bar_count[a]) or geo.block_size
                self.report(
                    "deadlock",
                    f"barrier {int(self.bar_id[a])} waits for {need} threads but only {len(members)} can arrive",
                    [self.site(int(self.pc[a]), a, "barrier")],
                )
        elif len(warp):
            a = int(warp[0])
            self.report(
                "deadlock",
                f"lanes wait at a warp synchronisation (mask 0x{int(self.wait_mask[a]):08x}) for lanes that never arrive",
                [self.site(int(self.pc[a]), a, "warp sync")],
            )
        self.stopped = "deadlock"
        return False
