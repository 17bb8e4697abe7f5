"""Redundant barriers: `__syncthreads()` calls that order no conflicting accesses (Simulee's Algorithm 5).

A barrier costs every thread of the block a wait, so one that orders nothing
is a performance bug. Removing a barrier *statement* removes all of its
instances and merges the barrier intervals they separated. So, per block, the
intervals between barrier instances are grouped into *runs*: maximal
sequences of intervals separated only by instances of one statement. The
statement is *needed* when some run of it holds a pair of accesses in
different intervals, by different threads of the block, overlapping in at
least one byte, at least one a write, that would race if nothing ordered them
(`rules.classify`: atomics whose scopes cover both threads never race, nor do
volatile pairs under `--model ptx`). Pairs in non-adjacent intervals of a run
matter too: with one `__syncthreads()` in a loop, a write in the first
iteration and a read in the third are ordered only by that statement. Pairs
farther apart stay ordered by the other barriers; pairs of one interval race
whatever happens to this barrier (the race detectors report them); accesses
of other blocks are never ordered by a barrier.

A barrier can also order accesses of *other* blocks through a chain: all
threads write, `__syncthreads()`, then one thread publishes with
`__threadfence()` and a flag that another block reads (fences are cumulative
over what the barrier ordered before them), or one thread acquires a flag and
the barrier passes that on to the whole block. Such chains need an operation
that synchronises beyond the block (a fence, or a release/acquire access to
memory other than shared, of scope wider than `cta`; under `--model scord`
any such strong read, since ScoRD's consumer needs no fence), so a run in
which the block executed one is taken as needing its barrier. Other
synchronisation (warp syncs, release/acquire inside the block) could order a
pair that the rule counts against the barrier; not crediting it errs toward
"needed", the safe side.

Only barriers that order the whole block are judged: `bar.sync`/
`barrier.sync` without a thread count. `bar.red` (`__syncthreads_count/and/
or`) ends intervals like any whole-block barrier but is never reported, since
its result is needed; barriers with a thread count (and `bar.arrive`) order
part of a block and are ignored (merging their intervals only adds pairs, so
again toward "needed"). An instance that did not release every thread of its
block at one statement is barrier divergence, already an error; its
statements count as needed. What a run shows holds for its input only: a
search unions `executed` and `needed` over many runs and calls
`redundant_barrier_findings`.

Memory: the accesses of each block's open interval (as the interval race
detector buffers them), plus, while the current run's statement is still
undecided, a summary of the run's earlier intervals with one row per
(block, address, instruction), kept sorted by address (`access_items`) so
that each barrier costs binary searches of the interval's accesses rather
than a sort of the summary. A run whose statement is already needed keeps
nothing, and once every statement is needed the detector stops buffering.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from gpurace.detect.access_items import AccessItems, may_conflict, merged, near, union
from gpurace.detect.base import DetectorContext
from gpurace.detect.findings import PERFORMANCE, Finding, Site, make_site, position_key
from gpurace.detect.rules import AccessFlags, Cause, batch_flags, classify
from gpurace.detect.segments import pairs_in_runs, run_bounds, split_segments
from gpurace.frontend.ptx.ir import Instruction
from gpurace.sim.events import SCOPE_RANK, AccessBatch, AccessKind, Event, ExitEvent, FenceEvent, SyncEvent
from gpurace.sim.memory.layout import CANON_SHARED_TAG, CANON_TAG_MASK
from gpurace.sim.program import Program

REDUNDANT_BARRIER = "redundant-barrier"

_BEYOND_BLOCK = SCOPE_RANK["cluster"]
"""Scopes from this rank up reach threads of other blocks."""

_RELEASE_ACQUIRE = frozenset({"release", "acquire", "acq_rel"})


def _orders_whole_block(ins: Instruction) -> bool:
    """`bar.sync a` / `barrier.sync a` / `bar.red.op d, a, p`: a barrier every thread of the block takes part in."""
    if ins.opcode not in ("bar", "barrier") or ins.has("warp") or ins.has("arrive") or ins.has("cluster"):
        return False
    return len(ins.operands) == (3 if ins.has("red") else 1)


def statement_key(program, pc: int) -> tuple:
    """The source position of an instruction, as findings are deduplicated (`Finding.key`); the pc without one.

    Removing a barrier from the source removes every instruction compiled
    from that position (unrolled copies, inlined calls), so it is the unit
    that is judged and reported.
    """
    return position_key(program.instructions[pc].loc, pc)


@dataclass(frozen=True)
class BarrierTable:
    """Static facts about the program's barriers, per pc.

    `boundary`: the instruction is a whole-block barrier (it ends intervals);
    `reportable`: a boundary that may be reported (not `bar.red`);
    `statement`: the id of the instruction's source position, shared by all
    barrier pcs compiled from it (-1 for other instructions);
    `reportable_statement`: per statement id, whether one of its pcs is reportable.
    """

    boundary: np.ndarray
    reportable: np.ndarray
    statement: np.ndarray
    reportable_statement: np.ndarray

    @staticmethod
    def of(program) -> BarrierTable:
        n = len(program.instructions)
        boundary = np.zeros(n, dtype=np.bool_)
        reportable = np.zeros(n, dtype=np.bool_)
        statement = np.full(n, -1, dtype=np.int64)
        ids: dict[tuple, int] = {}
        for pc, ins in enumerate(program.instructions):
            if ins.opcode not in ("bar", "barrier"):
                continue
            statement[pc] = ids.setdefault(statement_key(program, pc), len(ids))
            boundary[pc] = _orders_whole_block(ins)
            reportable[pc] = boundary[pc] and not ins.has("red")
        reportable_statement = np.zeros(len(ids), dtype=np.bool_)
        reportable_statement[statement[reportable]] = True
        return BarrierTable(boundary, reportable, statement, reportable_statement)


class RedundantBarrierDetector:
    """Finds barrier statements that no run needed (see the module docstring).

    After the run: `executed` holds the pcs of reportable barriers that
    completed at least once, `needed` those whose statement some conflicting
    pair (or a cross-block chain) needs; `instances` counts the completed
    instances of each executed pc (one per block and completion) and
    `examples` holds the first one as a `Site`.
    """

    name = "redundant-barriers"

    def __init__(self, ctx: DetectorContext) -> None:
        self.ctx = ctx
        self.program = ctx.program
        self.geometry = ctx.geometry
        self.table = BarrierTable.of(ctx.program)
        self.executed: set[int] = set()
        self.instances: dict[int, int] = {}
        self.examples: dict[int, Site] = {}
        npcs = len(ctx.program.instructions)
        nblocks = ctx.geometry.nblocks
        self._write = np.zeros(npcs, dtype=np.bool_)
        self._atomic = np.zeros(npcs, dtype=np.bool_)
        self._volatile = np.zeros(npcs, dtype=np.bool_)
        self._scope = np.full(npcs, -1, dtype=np.int8)
        self._size = np.zeros(npcs, dtype=np.uint64)
        self._seen = np.zeros(npcs, dtype=np.bool_)
        # one flag per statement, plus a last one, always set, that statement -1 (no barrier) indexes
        self._statement_needed = np.append(~self.table.reportable_statement, True)
        self._settled = bool(self._statement_needed.all())
        self._pending: list[tuple[np.ndarray, ...]] = []
        self._history = AccessItems.empty()
        self._in_history = np.zeros(nblocks, dtype=np.bool_)
        self._run = np.full(nblocks, -1, dtype=np.int64)
        self._sync_history = np.zeros(nblocks, dtype=np.bool_)
        self._sync_open = np.zeros(nblocks, dtype=np.bool_)
        self._alive = np.bincount(ctx.geometry.block_of, minlength=nblocks).astype(np.int64)

    @property
    def needed(self) -> set[int]:
        """Pcs of reportable barriers whose statement is needed (every pc of a needed statement)."""
        t = self.table
        pcs = np.flatnonzero(t.reportable & self._statement_needed[t.statement])
        return {int(pc) for pc in pcs}

    # ------------------------------------------------------------------ events

    def on_event(self, event: Event) -> None:
        if isinstance(event, AccessBatch):
            if not self._settled and len(event.threads):
                self._on_access(event)
        elif isinstance(event, SyncEvent):
            if event.kind == "barrier":
                self._on_barrier(event)
        elif isinstance(event, FenceEvent):
            if SCOPE_RANK[event.scope] >= _BEYOND_BLOCK:
                self._sync_open[self.geometry.block_of[np.asarray(event.threads, dtype=np.int64)]] = True
        elif isinstance(event, ExitEvent):
            blocks = self.geometry.block_of[np.asarray(event.threads, dtype=np.int64)]
            before = self._alive.copy()
            self._alive -= np.bincount(blocks, minlength=len(self._alive))
            done = np.flatnonzero((before > 0) & (self._alive <= 0))
            if len(done):
                self._close(done, np.full(len(done), -1, dtype=np.int64))

    def finish(self) -> list[Finding]:
        """End every block's last run, then the findings of this run."""
        blocks = np.arange(self.geometry.nblocks)
        self._close(blocks, np.full(len(blocks), -1, dtype=np.int64))
        return self.findings()

    def findings(self) -> list[Finding]:
        return redundant_barrier_findings(
            self.program, self.executed, self.needed, examples=self.examples, instances=self.instances
        )

    def _on_access(self, batch: AccessBatch) -> None:
        pc = batch.pc
        if not self._seen[pc]:
            self._seen[pc] = True
            self._write[pc], self._atomic[pc], self._volatile[pc], self._scope[pc] = batch_flags(batch)
            self._size[pc] = batch.size
        threads = np.asarray(batch.threads, dtype=np.int64)
        addrs = np.asarray(batch.addrs, dtype=np.uint64)
        if self._synchronises_beyond_block(batch):
            # shared memory is the block's own: only other spaces reach other blocks
            beyond = (addrs & np.uint64(CANON_TAG_MASK)) != np.uint64(CANON_SHARED_TAG)
            self._sync_open[self.geometry.block_of[threads[beyond]]] = True
        self._pending.append((threads, addrs, np.full(len(threads), pc, dtype=np.int64)))

    def _synchronises_beyond_block(self, batch: AccessBatch) -> bool:
        """Whether the access can be one end of a release/acquire chain to another block (module docstring)."""
        if not batch.strong or batch.scope is None or SCOPE_RANK[batch.scope] < _BEYOND_BLOCK:
            return False
        if batch.sem in _RELEASE_ACQUIRE:
            return True
        return self.ctx.model == "scord" and batch.kind != AccessKind.WRITE

    def _on_barrier(self, event: SyncEvent) -> None:
        t = self.table
        threads = np.asarray(event.threads, dtype=np.int64)
        pcs = np.asarray(event.pcs, dtype=np.int64)
        if not t.boundary[pcs].any():
            return
        blocks = self.geometry.block_of[threads]
        self._count_instances(threads, blocks, pcs)
        ublocks, inv = np.unique(blocks, return_inverse=True)
        released = np.bincount(inv, minlength=len(ublocks))
        stmt = t.statement[pcs]
        smin = np.full(len(ublocks), np.iinfo(np.int64).max, dtype=np.int64)
        smax = np.full(len(ublocks), -1, dtype=np.int64)
        np.minimum.at(smin, inv, stmt)
        np.maximum.at(smax, inv, stmt)
        has_boundary = np.zeros(len(ublocks), dtype=np.bool_)
        np.logical_or.at(has_boundary, inv, t.boundary[pcs])
        divergent = has_boundary & ((released != self.geometry.block_size) | (smin != smax))
        if divergent.any():
            self._mark(stmt[divergent[inv] & t.reportable[pcs]])
        closing = np.flatnonzero(has_boundary)
        self._close(ublocks[closing], smin[closing])

    def _count_instances(self, threads: np.ndarray, blocks: np.ndarray, pcs: np.ndarray) -> None:
        """Record executed reportable pcs: one instance per block released at the pc, the first as example."""
        mine = self.table.reportable[pcs]
        if not mine.any():
            return
        threads, blocks, pcs = threads[mine], blocks[mine], pcs[mine]
        order = np.lexsort((threads, blocks, pcs))
        key = pcs[order] * np.int64(self.geometry.nblocks) + blocks[order]
        begin, _ = run_bounds(key)
        first_thread, first_pc = threads[order][begin], pcs[order][begin]
        per_pc, counts = np.unique(first_pc, return_counts=True)
        for pc, count in zip(per_pc.tolist(), counts.tolist()):
            self.instances[pc] = self.instances.get(pc, 0) + count
            if pc not in self.executed:
                self.executed.add(pc)
                g = int(first_thread[np.searchsorted(first_pc, pc)])
                self.examples[pc] = make_site(self.program, self.geometry, pc, g, "barrier")

    # ------------------------------------------------------------------ runs

    def _mark(self, statements: np.ndarray) -> None:
        if len(statements):
            self._statement_needed[statements] = True
            self._settled = bool(self._statement_needed.all())

    def _undecided(self, statements: np.ndarray) -> np.ndarray:
        """Which statements (-1: none) are reportable and not yet needed."""
        return ~self._statement_needed[statements]

    def _close(self, blocks: np.ndarray, next_run: np.ndarray) -> None:
        """The open interval of each of `blocks` ends at a barrier of statement `next_run` (-1: the block is done).

        First judge the current run of each block against the interval that
        ends, then continue the run (same statement) or start a new one.
        """
        run = self._run[blocks]
        sync = self._sync_history[blocks] | self._sync_open[blocks]
        self._mark(run[self._undecided(run) & sync])
        test = self._undecided(run)
        open_items = self._take_pending(blocks, blocks[test | self._undecided(next_run)])
        if test.any():
            tested = self._of_blocks(open_items, blocks[test])
            rows = near(self._history, tested.addr, tested.addr + self._size[tested.pc], int(self._size.max()))
            racy = self._conflicting_blocks(self._of_blocks(self._history.where(rows), blocks[test]), tested)
            self._mark(np.unique(self._run[racy]))
        carry = self._undecided(next_run)
        extend = carry & (next_run == run)
        ending = blocks[~extend & self._in_history[blocks]]
        if len(ending):
            self._history = self._history.where(~np.isin(self._history.block, ending))
            self._in_history[ending] = False
        if carry.any():
            self._history = union(self._history, self._of_blocks(open_items, blocks[carry]))
            self._in_history[blocks[carry]] = True
        self._sync_history[blocks] = np.where(next_run == run, sync, self._sync_open[blocks])
        self._sync_open[blocks] = False
        self._run[blocks] = next_run

    def _of_blocks(self, items: AccessItems, blocks: np.ndarray) -> AccessItems:
        chosen = np.zeros(self.geometry.nblocks, dtype=np.bool_)
        chosen[blocks] = True
        return items.where(chosen[items.block])

    def _take_pending(self, blocks: np.ndarray, wanted: np.ndarray) -> AccessItems:
        """Remove the buffered accesses of `blocks`; those of `wanted` come back as items."""
        if not self._pending:
            return AccessItems.empty()
        thread, addr, pc = (np.concatenate(c) for c in zip(*self._pending))
        block = self.geometry.block_of[thread]
        closing = np.zeros(self.geometry.nblocks, dtype=np.bool_)
        closing[blocks] = True
        rest = ~closing[block]
        self._pending = [(thread[rest], addr[rest], pc[rest])] if rest.any() else []
        closing[:] = False
        closing[wanted] = True
        keep = closing[block]
        return AccessItems.summarise(block[keep], addr[keep], pc[keep], thread[keep])

    def _conflicting_blocks(self, before: AccessItems, after: AccessItems) -> np.ndarray:
        """Blocks where an item of `before` and one of `after` conflict and would race if unordered.

        After the `may_conflict` filter, items are cut into elementary segments
        per block; each segment's items are grouped by (side, instruction), so
        the pairs enumerated per segment are pairs of distinct instructions,
        not of threads.
        """
        if len(before) == 0 or len(after) == 0:
            return np.zeros(0, dtype=np.int64)
        items, side = merged(before, after)
        maybe = may_conflict(items, side, self._size[items.pc])
        if not maybe.any():
            return np.zeros(0, dtype=np.int64)
        items, side = items.where(maybe), side[maybe].astype(np.int64)
        segs = split_segments(items.block, items.addr, items.addr + self._size[items.pc])
        r_side, r_pc = side[segs.rec], items.pc[segs.rec]
        key = (segs.seg * 2 + r_side) * np.int64(len(self._size)) + r_pc
        order = np.argsort(key, kind="stable")
        begin, _ = run_bounds(key[order])
        rec = segs.rec[order]
        g_seg, g_side, g_pc = segs.seg[order][begin], r_side[order][begin], r_pc[order][begin]
        g_block = items.block[rec][begin]
        g_tmin = np.minimum.reduceat(items.tmin[rec], begin)
        g_tmax = np.maximum.reduceat(items.tmax[rec], begin)
        # within a segment the groups of `before` sort first, so every cross pair has i < j
        i, j = pairs_in_runs(g_seg, include_self=False)
        cross = (g_side[i] == 0) & (g_side[j] == 1)
        i, j = i[cross], j[cross]
        fa, fb = self._flags(g_pc[i]), self._flags(g_pc[j])
        other_thread = (g_tmin[i] != g_tmax[j]) | (g_tmax[i] != g_tmin[j])
        cause = classify(fa, fb, True, False, self.ctx.model)
        racy = other_thread & (fa.write | fb.write) & (cause != Cause.NONE)
        return np.unique(g_block[i[racy]])

    def _flags(self, pcs: np.ndarray) -> AccessFlags:
        return AccessFlags(self._write[pcs], self._atomic[pcs], self._volatile[pcs], self._scope[pcs])


def redundant_barrier_findings(
    program: Program,
    executed: Iterable[int],
    needed: Iterable[int],
    *,
    examples: Mapping[int, Site] | None = None,
    instances: Mapping[int, int] | None = None,
) -> list[Finding]:
    """One `redundant-barrier` finding per source position whose executed barrier pcs none needed.

    `executed` and `needed` are pcs, typically unions over several runs of
    one kernel (a statement needed by any run is never reported). `examples`
    gives the site shown for a pc (without one, the site names the barrier
    with thread and block (0,0,0) as placeholders) and `instances` the
    number of completed instances, summed per statement as the finding's
    count. Findings come sorted by source position.
    """
    examples = examples or {}
    instances = instances or {}
    needed_statements = {statement_key(program, pc) for pc in needed}
    by_statement: dict[tuple, list[int]] = {}
    for pc in sorted(set(executed)):
        key = statement_key(program, pc)
        if key not in needed_statements:
            by_statement.setdefault(key, []).append(pc)
    out = []
    for key in sorted(by_statement):
        pcs = by_statement[key]
        count = sum(instances.get(pc, 0) for pc in pcs)
        site = next((examples[pc] for pc in pcs if pc in examples), None) or _placeholder_site(program, pcs[0])
        out.append(
            Finding(
                kind=REDUNDANT_BARRIER,
                severity=PERFORMANCE,
                cause=(
                    "no two conflicting accesses by different threads of a block are ordered only by this barrier: "
                    "removing it introduces no data race for the inputs run, and saves every thread of the block a wait"
                ),
                sites=(site,),
                count=max(count, 1),
            )
        )
    return out


def _placeholder_site(program, pc: int) -> Site:
    ins = program.instructions[pc]
    return Site(pc, (0, 0, 0), (0, 0, 0), 0, 0, "barrier", None, ins.loc, ins.text, program.owner[pc])
