"""The barrier-interval race detector: the fast path for kernels whose only synchronisation is `__syncthreads`.

In such kernels two accesses are ordered iff the same thread made them, or
threads of one block made them in different *barrier intervals* of that block
(a barrier instance both threads passed lies between them). Accesses of
different blocks are never ordered. So no clocks are needed (CURD and Simulee
use the same observation): the detector buffers the accesses of each block's
open interval, and when the block's barrier completes (or all its threads have
exited) it checks them in one vectorised sort/group pass and drops them.
Shared memory is block-private, so its history ends there; global accesses are
folded into a per-address summary that later intervals of *other* blocks are
checked against, so memory stays proportional to the footprint.

Limits: a barrier is taken to order the whole block (programs with `bar.sync`
thread counts or `bar.arrive` are left to the happens-before detector by
`applies`); a thread that exited before a barrier its block then passed (which
the simulator reports as barrier divergence) is treated as if it had passed it.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.findings import SAME_VALUE, WARNING, Finding, FindingSet, describe_address, make_site
from gpurace import allocator
from gpurace.detect.interval_summary import Summary
from gpurace.detect.open_accesses import OpenAccesses
from gpurace.detect.pc_ranges import PcRanges
from gpurace.detect.rules import (
    BLOCK_SCOPES,
    NO_SCOPE,
    AccessFlags,
    Cause,
    batch_flags,
    cause_message,
    classify,
    model_strong,
    scoped_op_name,
    severity_of,
)
from gpurace.detect.segments import Segments, lexsort, pairs_in_runs, run_bounds, run_ids, shared_by_threads, split_segments
from gpurace.detect.written_values import span
from gpurace.frontend.ptx.ir import Instruction
from gpurace.sim.events import AccessBatch, AccessKind, Event, ExitEvent, SyncEvent
from gpurace.sim.memory.layout import CANON_LOCAL_TAG, CANON_SHARED_TAG, CANON_TAG_MASK
from gpurace.sim.program import Program

CLOSE_CHUNK = 4_000_000
"""The most accesses one step of an interval's close checks together (`IntervalDetector._close`): checking costs
a few hundred bytes per access for a moment, so a close of millions of accesses goes in chunks of address ranges."""

_SYNC_OPCODES = frozenset({"membar", "fence", "mbarrier"})
_ORDERING_SEMANTICS = frozenset({"acquire", "release", "acq_rel", "sc", "mmio"})
"""`ld`/`st` semantics that order by themselves. `volatile` and `.relaxed` accesses order only with a fence
(a release or acquire pattern) or a release/acquire operation, which `applies` refuses anyway; without them
they are strong accesses and nothing more, which `rules.classify` judges under every model."""


def _needs_happens_before(ins: Instruction) -> bool:
    """Whether one instruction synchronises in a way barrier intervals cannot express."""
    if ins.opcode in _SYNC_OPCODES:
        return True
    if ins.scope == "cluster" or ins.opcode == "mapa":
        # distributed shared memory and cluster scope: threads of other blocks of a cluster access a block's
        # shared memory or synchronise with it, which barrier intervals of one block do not express (`sim.clusters`)
        return True
    if ins.opcode == "cp":
        # an asynchronous copy reads at its pc and writes there at its wait (`sim.async_copies`); the
        # per-instruction table here keeps one access kind per pc
        return True
    if ins.opcode in ("bar", "barrier"):
        if ins.has("warp") or ins.has("arrive") or ins.has("cluster"):
            return True
        # a thread count makes the barrier order only part of the block: `bar.sync a, b` / `bar.red.op d, a, b, p`
        return len(ins.operands) > (3 if ins.has("red") else 1)
    if ins.opcode in ("ld", "st", "ldu"):
        return ins.semantics in _ORDERING_SEMANTICS
    if ins.opcode in ("atom", "red"):
        return ins.semantics in ("acquire", "release", "acq_rel")
    return False


class _PcTable:
    """Per-instruction access facts (every thread of an instruction shares them), filled as batches arrive."""

    def __init__(self, npcs: int) -> None:
        self.write = np.zeros(npcs, dtype=np.bool_)
        self.atomic = np.zeros(npcs, dtype=np.bool_)
        self.volatile = np.zeros(npcs, dtype=np.bool_)
        self.scope = np.full(npcs, NO_SCOPE, dtype=np.int8)
        self.op: dict[int, str] = {}
        self.scope_name: dict[int, str | None] = {}
        self.atomic_op: dict[int, str | None] = {}

    def record(self, batch: AccessBatch) -> None:
        pc = batch.pc
        if pc in self.op:
            return
        self.write[pc], self.atomic[pc], self.volatile[pc], self.scope[pc] = batch_flags(batch)
        if batch.kind == AccessKind.ATOMIC:
            op = f"atomic {batch.atomic_op}" if batch.atomic_op else "atomic"
        else:
            op = "read" if batch.kind == AccessKind.READ else "write"
            if batch.sem is not None:
                op = f"{batch.sem} {op}"
        self.op[pc] = op
        self.scope_name[pc] = batch.scope if batch.strong else None
        self.atomic_op[pc] = batch.atomic_op

    def flags(self, pcs: np.ndarray) -> AccessFlags:
        return AccessFlags(self.write[pcs], self.atomic[pcs], self.volatile[pcs], self.scope[pcs])


def _choose_example(tmin_a, tmax_a, tmin_b, tmax_b, owner: np.ndarray):
    """One concrete thread pair per group pair, preferring threads of different `owner` (warp or block).

    Thread ids grow with warp and block, so the two candidates (min of a, max
    of b) and (max of a, min of b) include a pair of different owners whenever
    one exists, and a pair of different threads whenever one exists.
    Returns (thread_a, thread_b, different threads?, different owners?).
    """
    d1, d2 = tmin_a != tmax_b, tmax_a != tmin_b
    o1 = owner[tmin_a] != owner[tmax_b]
    o2 = owner[tmax_a] != owner[tmin_b]
    use1 = o1 | (d1 & ~o2)
    ta = np.where(use1, tmin_a, tmax_a)
    tb = np.where(use1, tmax_b, tmin_b)
    return ta, tb, d1 | d2, o1 | o2


class IntervalDetector:
    """Data races in barrier-only kernels, by barrier intervals (see the module docstring).

    `count` of a finding: for two accesses of one block, the exact number of
    conflicting pairs of distinct accesses (a thread repeating the same
    instruction on the same address within one interval counts once); for
    accesses of different blocks (global memory), a lower bound (at least the
    smaller number of accesses of the two instructions at each address).
    """

    name = "interval"

    def __init__(self, ctx: DetectorContext) -> None:
        self.ctx = ctx
        self.program = ctx.program
        self.geometry = ctx.geometry
        self.pcs = _PcTable(len(ctx.program.instructions))
        self.findings = FindingSet()
        allocator.for_detector_closes()  # a close's columns are freed and built again, interval after interval
        self._open = OpenAccesses(ctx.geometry.nthreads)
        # pcs of the buffered batches; a pc seen twice means a thread may have repeated an access
        self._pending_pcs: set[int] = set()
        self._pending_repeats = False
        self._alive = np.bincount(ctx.geometry.block_of, minlength=ctx.geometry.nblocks).astype(np.int64)
        # global summary: one row per (start, size, pc), kept as tiers of runs (`interval_summary`)
        self._summary = Summary()
        self._summary_writes = False  # whether some remembered item writes (a store or an atomic)

    @staticmethod
    def applies(program: Program) -> bool:
        """True iff barriers are the program's only synchronisation.

        That excludes fences, warp syncs, partial barriers and acquire/release
        operations; plain atomics and `volatile`/`.relaxed` accesses are fine:
        with no fence to pair with they order nothing, and they are checked
        for conflicts and scope under the model as every detector checks them.
        """
        return not any(_needs_happens_before(ins) for ins in program.instructions)

    # ------------------------------------------------------------------ events

    def on_event(self, event: Event) -> None:
        if isinstance(event, AccessBatch):
            self._on_access(event)
        elif isinstance(event, SyncEvent):
            if event.kind == "barrier":
                self._close(np.asarray(event.groups, dtype=np.int64))  # a block per released thread: repeats
        elif isinstance(event, ExitEvent):
            blocks = self.geometry.block_of[np.asarray(event.threads, dtype=np.int64)]
            before = self._alive.copy()
            self._alive -= np.bincount(blocks, minlength=len(self._alive))
            done = np.flatnonzero((before > 0) & (self._alive <= 0))
            if len(done):
                self._close(done)

    def finish(self) -> list[Finding]:
        if self._open.n:
            self._close(None)
        return self.findings.sorted()

    def _on_access(self, batch: AccessBatch) -> None:
        if len(batch.threads) == 0:
            return
        self.pcs.record(batch)
        if batch.pc in self._pending_pcs:
            self._pending_repeats = True
        self._pending_pcs.add(batch.pc)
        self._open.append(batch)

    # ------------------------------------------------------------------ interval ends

    def _close(self, blocks: np.ndarray | None) -> None:
        """End the open interval of `blocks` (None: every block; repeats allowed): check and drop its accesses.

        The accesses are checked in chunks of about CLOSE_CHUNK accesses, one address range each
        (`OpenAccesses.close`; one chunk when they fit), so that a launch whose blocks all reach a barrier
        together needs memory for one chunk at a time. Accesses in different chunks never overlap, so each chunk
        is checked completely on its own (against the summary of intervals closed earlier) and no finding or
        count depends on where chunks end.
        """
        if self._open.n == 0:
            return
        closing = np.ones(self.geometry.nblocks, dtype=np.bool_)
        if blocks is not None:
            closing[:] = False
            closing[blocks] = True
        repeats = self._pending_repeats
        ranges = self._open.ranges(len(self.pcs.write))
        self._open.close(
            closing, self.geometry.block_of, CLOSE_CHUNK, lambda records: self._close_records(records, repeats, ranges),
            self._wanted(ranges),
        )
        if self._open.n == 0:
            self._pending_pcs, self._pending_repeats = set(), False

    def _wanted(self, ranges: PcRanges) -> np.ndarray | None:
        """The instructions whose closing accesses a close must check (per pc), or None for all of them.

        An access can take part in a race only if its instruction's range meets (`PcRanges.meet`) that of an
        instruction it may conflict with: within one block in any interval; across blocks, when global items
        are no longer remembered for later intervals (the last close of a launch, with no earlier interval in
        the summary to meet), else every global access is needed for the summary. Shared memory is never
        remembered, so before the last close an instruction whose accesses are all shared is needed only when
        it may conflict within the block with an instruction that accessed shared memory (the reads of a tile
        that a force or stencil loop makes between two barriers are left out before any gather).
        """
        if self._summary.rows or (self._alive > 0).any():
            shared_only, some_shared = ranges.within(CANON_SHARED_TAG, CANON_LOCAL_TAG)  # every block's shared memory
            if not shared_only.any():
                return None
            wanted = ~shared_only
            wanted |= self._conflicting(ranges.present[some_shared[ranges.present]], ranges, True)
            return wanted
        return self._conflicting(ranges.present, ranges, True) | self._conflicting(ranges.present, ranges, False)

    def _conflicting(self, present: np.ndarray, ranges: PcRanges, same_block: bool) -> np.ndarray:
        """Per pc: whether it is one of the instructions `present` that may race with one of them (itself
        included), by threads of one block or of two (`same_block`): one of the two writes, their `ranges` meet
        and the model's rules (`rules.classify`) give a cause."""
        a, b = np.repeat(present, len(present)), np.tile(present, len(present))
        fa, fb = self.pcs.flags(a), self.pcs.flags(b)
        racy = (fa.write | fb.write) & ranges.meet(a, b) & (classify(fa, fb, same_block, False, self.ctx.model) != Cause.NONE)
        conflicting = np.zeros(len(self.pcs.write), dtype=np.bool_)
        conflicting[a[racy]] = True
        return conflicting

    def _close_records(self, records: list[np.ndarray], repeats: bool, ranges: PcRanges) -> None:
        """Check the accesses (thread, addr, size, pc, seq, val, known) of whole blocks whose interval closed;
        `repeats`: a thread may have made one access twice; `ranges`: the instructions' address ranges."""
        # Large intervals (a grid-stride loop over millions of elements) make every column hundreds of MB: each
        # is let go (`del`, `clear`) as soon as a smaller or reordered one replaces it, so that few live at once.
        # The cheap filters come first and see every execution of a repeated access (they answer the same for
        # each), so that the sort that keeps one execution per access runs only on what they leave.
        columns = list(records)
        records.clear()
        thread, addr, size, pc = columns[:4]
        if len(thread) == 0:
            return
        glob = (addr & np.uint64(CANON_TAG_MASK)) != np.uint64(CANON_SHARED_TAG)
        maybe = self._may_conflict(pc, glob, ranges)
        if maybe.all():
            maybe = shared_by_threads(thread, addr, size, write=self.pcs.write[pc])
        elif maybe.any():
            near = maybe.nonzero()[0]
            maybe[near] = shared_by_threads(thread[near], addr[near], size[near], write=self.pcs.write[pc[near]])
            del near
        if maybe.any():
            same_block = [c[maybe] for c in columns]
            del maybe
            self._check_same_block(*(_first_executions(same_block) if repeats else same_block))
            del same_block
        else:
            del maybe
        del thread, addr, size, pc
        if glob.any():
            if not glob.all():
                columns = [c[glob] for c in columns]
            del glob
            self._check_other_blocks(columns, repeats)

    def _may_conflict(self, pc: np.ndarray, glob: np.ndarray, ranges: PcRanges) -> np.ndarray:
        """Per access: whether its instruction may conflict, within one block, with an instruction that accessed
        the same space in this chunk (itself included) and whose `ranges` meet its own. An interval of
        shared-memory atomics only (a histogram's bins), of reads only, or whose writes are each thread's own
        elements of arrays it does not read has none, and skips the sort and group pass of `_check_same_block`
        entirely."""
        npcs = len(self.pcs.write)
        may = np.zeros(len(pc), dtype=np.bool_)
        for space in (glob, ~glob):
            present = np.flatnonzero(np.bincount(pc[space], minlength=npcs))
            if len(present):
                may |= space & self._conflicting(present, ranges, True)[pc]
        return may

    def _check_same_block(self, thread, addr, size, pc, seq, val, known) -> None:
        """Conflicts between threads of one block within the interval just closed."""
        geo = self.geometry
        segs = split_segments(geo.block_of[thread], addr, addr + size)
        r_thread, r_pc, r_seq = thread[segs.rec], pc[segs.rec], seq[segs.rec]
        # groups: (segment, instruction)
        o = np.lexsort((r_pc, segs.seg))
        g_seg, g_pc, g_thread, g_first, g_seq, g_start = (
            segs.seg[o], r_pc[o], r_thread[o], segs.first[o], r_seq[o], segs.start[o]
        )
        begin, _ = run_bounds(run_ids(g_seg, g_pc))
        n = np.diff(np.append(begin, len(g_seg)))
        nf = np.add.reduceat(g_first.astype(np.int64), begin)
        tmin = np.minimum.reduceat(g_thread, begin)
        tmax = np.maximum.reduceat(g_thread, begin)
        seqmin = np.minimum.reduceat(g_seq, begin)
        gseg, gpc, gstart = g_seg[begin], g_pc[begin], g_start[begin]

        i, j = pairs_in_runs(gseg, include_self=True)
        pa, pb = gpc[i], gpc[j]
        fa, fb = self.pcs.flags(pa), self.pcs.flags(pb)
        ta, tb, distinct, cross_warp = _choose_example(tmin[i], tmax[i], tmin[j], tmax[j], geo.warp_of)
        cause = classify(fa, fb, True, ~cross_warp, self.ctx.model)
        racy = (fa.write | fb.write) & (cause != Cause.NONE)
        same = np.zeros(len(i), dtype=np.bool_)
        stores = racy & fa.write & fb.write & ~fa.atomic & ~fb.atomic
        if stores.any():
            # a group stored one known value on its segment when all its stores did and they agree
            r_val = _segment_bytes(segs, val, addr, addr + size)[o]
            vmin = np.minimum.reduceat(r_val, begin)
            uniform = np.logical_and.reduceat(known[segs.rec][o], begin) & (vmin == np.maximum.reduceat(r_val, begin))
            same = stores & uniform[i] & uniform[j] & (vmin[i] == vmin[j])
        self_pair = i == j
        count = np.where(
            self_pair,
            (n[i] * (n[i] - 1) - (n[i] - nf[i]) * (n[i] - nf[i] - 1)) // 2,
            n[i] * n[j] - (n[i] - nf[i]) * (n[j] - nf[j]),
        )
        shared = (gstart & np.uint64(CANON_TAG_MASK)) == np.uint64(CANON_SHARED_TAG)
        keys = self._pair_keys(pa, pb, shared[i])

        # same-thread pairs are ordered by program order: subtract them from the counts
        o2 = np.lexsort((r_thread, segs.seg))
        sa, sb = pairs_in_runs(run_ids(segs.seg[o2], r_thread[o2]), include_self=False)
        sa, sb = o2[sa], o2[sb]
        once = segs.first[sa] | segs.first[sb]
        sa, sb = sa[once], sb[once]
        s_shared = (segs.start[sa] & np.uint64(CANON_TAG_MASK)) == np.uint64(CANON_SHARED_TAG)
        same_thread_keys = self._pair_keys(r_pc[sa], r_pc[sb], s_shared)

        all_keys = np.concatenate([keys[racy], same_thread_keys])
        all_counts = np.concatenate([count[racy], -np.ones(len(same_thread_keys), dtype=np.int64)])
        ukeys, inverse = np.unique(all_keys, return_inverse=True)
        totals = np.bincount(inverse, weights=all_counts, minlength=len(ukeys)).astype(np.int64)
        # a finding is a same-value race only if every racing group pair of its two instructions is one
        differ = np.bincount(inverse[: int(racy.sum())], weights=(distinct & ~same)[racy], minlength=len(ukeys)) > 0

        cand = np.flatnonzero(racy & distinct)
        if len(cand) == 0:
            return
        cand = cand[np.lexsort((~cross_warp[cand], keys[cand]))]
        firsts = cand[np.append(True, keys[cand][1:] != keys[cand][:-1])]
        at = np.searchsorted(ukeys, keys[firsts])
        for row, total, benign in zip(firsts, totals[at], ~differ[at]):
            if total <= 0:
                continue
            a_first = seqmin[i[row]] <= seqmin[j[row]] if not self_pair[row] else True
            self._report(
                (int(pa[row]), int(ta[row])),
                (int(pb[row]), int(tb[row])),
                a_first,
                Cause(int(cause[row])),
                int(gstart[i[row]]),
                bool(shared[i[row]]),
                int(total),
                bool(benign),
            )

    def _check_other_blocks(self, records: list[np.ndarray], repeats: bool) -> None:
        """Global conflicts between the closed interval and other blocks (closed before, or closing now); `records`
        (thread, addr, size, pc, seq, val, known) are the interval's global accesses, taken over (emptied);
        `repeats`: a thread may have made one access twice (an item counts each thread once)."""
        thread, addr, size, pc, seq, val, known = records
        records.clear()
        block_of = self.geometry.block_of
        if not self._summary.rows and not (self._alive > 0).any():
            # the last interval, with nothing earlier to meet and nothing to remember: only ranges that
            # several blocks touch, one of them writing, can race, so the (exact) item building below needs no
            # other records
            several = shared_by_threads(block_of[thread], addr, size, write=self.pcs.write[pc])
            if not several.any():
                return
            thread, addr, size, pc, seq, val, known = (c[several] for c in (thread, addr, size, pc, seq, val, known))
        # new items: one per (start, size, instruction)
        o = lexsort((thread, pc, size, addr))
        thread, addr, size, pc, seq, val, known = (c[o] for c in (thread, addr, size, pc, seq, val, known))
        begin, _ = run_bounds(run_ids(addr, size, pc))
        if len(begin) == len(addr):
            # every item has one record (each thread its own elements, as coalesced loads and stores give): the
            # records are the items
            new = (addr, size, pc, np.ones(len(addr), dtype=np.int64), thread, thread.copy(), seq, val, known)
            del o, begin
            return self._check_items(new)
        if repeats:
            # threads are sorted within an item: count each once (its first execution has the least seq, and
            # the item's bytes are known only if every execution stored the same ones, as one record each)
            new_thread = np.ones(len(thread), dtype=np.bool_)
            new_thread[1:] = thread[1:] != thread[:-1]
            new_thread[begin] = True
            n = np.add.reduceat(new_thread, begin, dtype=np.int64)
            del new_thread
        else:
            n = np.diff(np.append(begin, len(addr)))
        vmin = np.minimum.reduceat(val, begin)
        new = (
            addr[begin],
            size[begin],
            pc[begin],
            n,
            np.minimum.reduceat(thread, begin),
            np.maximum.reduceat(thread, begin),
            np.minimum.reduceat(seq, begin),
            vmin,
            np.logical_and.reduceat(known, begin) & (vmin == np.maximum.reduceat(val, begin)),
        )
        del thread, addr, known, o, begin
        self._check_items(new)

    def _check_items(self, new: tuple[np.ndarray, ...]) -> None:
        """Check the closed interval's global items (one per (start, size, instruction), sorted so, as the
        summary's rows) against each other and the summary of earlier intervals, and remember them."""
        block_of = self.geometry.block_of
        if not self._summary_writes and not self.pcs.write[new[2]].any():
            # reads never conflict with reads: with no write among these items or the remembered ones (the
            # neighbour lists and particles a force kernel loads, interval after interval), nothing can race
            self._remember(new)
            return
        old = self._summary.near(new[0], new[0] + new[1])
        both = new if len(old[0]) == 0 else tuple(np.concatenate([a, b]) for a, b in zip(new, old))
        start, size, pc, n, tmin, tmax, seq, val, uni = both
        is_new = np.arange(len(start)) < len(new[0])
        # only items that another block may overlap, one of the two writing, can race here (the image a
        # convolution reads, however many blocks read each pixel, has none); when some item spans blocks, the
        # filter sees each item as both its lowest and its highest block, so that it keeps the single-block
        # items such an item overlaps
        bmin, bmax = block_of[tmin], block_of[tmax]
        write = self.pcs.write[pc]
        if (bmin != bmax).any():
            twice = (np.concatenate([bmin, bmax]), np.tile(start, 2), np.tile(size, 2))
            maybe = shared_by_threads(*twice, write=np.tile(write, 2))[: len(start)]
        else:
            maybe = shared_by_threads(bmin, start, size, write=write)
        if not maybe.any():
            self._remember(new)
            return
        start, size, pc, n, tmin, tmax, seq, val, uni, is_new = (
            c[maybe] for c in (start, size, pc, n, tmin, tmax, seq, val, uni, is_new)
        )

        segs = split_segments(np.zeros(len(start), dtype=np.int64), start, start + size)
        o = np.argsort(segs.seg, kind="stable")
        rec, first, seg_start = segs.rec[o], segs.first[o], segs.start[o]
        ri, rj = pairs_in_runs(segs.seg[o], include_self=True)
        i, j = rec[ri], rec[rj]
        useful = (is_new[i] | is_new[j]) & ((i != j) | is_new[i])
        ri, rj, i, j = ri[useful], rj[useful], i[useful], j[useful]
        pa, pb = pc[i], pc[j]
        fa, fb = self.pcs.flags(pa), self.pcs.flags(pb)
        ta, tb, _, cross_block = _choose_example(tmin[i], tmax[i], tmin[j], tmax[j], block_of)
        cause = classify(fa, fb, False, False, self.ctx.model)
        racy = (fa.write | fb.write) & (cause != Cause.NONE) & cross_block
        same = np.zeros(len(i), dtype=np.bool_)
        stores = racy & fa.write & fb.write & ~fa.atomic & ~fb.atomic
        if stores.any():
            seg_val = _segment_bytes(segs, val, start, start + size)[o]
            same = stores & uni[i] & uni[j] & (seg_val[ri] == seg_val[rj])
        count = np.where(i == j, n[i] - 1, np.minimum(n[i], n[j])) * (first[ri] | first[rj])
        keys = self._pair_keys(pa, pb, np.zeros(len(pa), dtype=np.bool_))
        rows = np.flatnonzero(racy)
        if len(rows):
            ukeys, inverse = np.unique(keys[rows], return_inverse=True)
            totals = np.bincount(inverse, weights=count[rows], minlength=len(ukeys)).astype(np.int64)
            differ = np.bincount(inverse, weights=~same[rows], minlength=len(ukeys)) > 0
            firsts = rows[np.unique(inverse, return_index=True)[1]]
            for row, total, benign in zip(firsts, totals, ~differ):
                self._report(
                    (int(pa[row]), int(ta[row])),
                    (int(pb[row]), int(tb[row])),
                    seq[i[row]] <= seq[j[row]],
                    Cause(int(cause[row])),
                    int(seg_start[ri[row]]),
                    False,
                    int(total),
                    bool(benign),
                )
        self._remember(new)

    def _remember(self, new: tuple[np.ndarray, ...]) -> None:
        """Keep the closed interval's global items for later intervals, unless none can follow."""
        if (self._alive > 0).any():
            self._summary.add(new)
            self._summary_writes |= bool(self.pcs.write[new[2]].any())

    # ------------------------------------------------------------------ findings

    @staticmethod
    def _pair_keys(pa: np.ndarray, pb: np.ndarray, shared: np.ndarray) -> np.ndarray:
        """One int64 per (unordered instruction pair, space): the findings' deduplication key."""
        lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
        return (lo * np.int64(1 << 31) + hi) * 2 + shared.astype(np.int64)

    def _report(self, a, b, a_first: bool, cause: Cause, address: int, shared: bool, count: int, same: bool) -> None:
        """Add one finding for the access pairs of instructions a and b ((pc, example thread) each); `same`: every
        racing pair of them was two stores of the same bytes."""
        if not a_first:
            a, b = b, a
        program, geo, pcs = self.program, self.geometry, self.pcs
        sites = tuple(make_site(program, geo, pc, g, pcs.op[pc], pcs.scope_name[pc]) for pc, g in (a, b))
        finding = Finding(
            kind="data-race",
            severity=WARNING if same else severity_of(cause),
            cause=SAME_VALUE if same else self._cause_text(cause, a, b, sites),
            sites=sites,
            space="shared" if shared else "global",
            address=describe_address(self.ctx.memory, address),
            same_value=same,
        )
        self.findings.add(finding, count)

    def _cause_text(self, cause: Cause, a, b, sites) -> str:
        pcs, program = self.pcs, self.program
        if cause == Cause.INSUFFICIENT_SCOPE:
            (narrow_pc, _), other = (a, sites[1]) if int(pcs.scope[a[0]]) in BLOCK_SCOPES else (b, sites[0])
            op, hint = scoped_op_name(
                program.instructions[narrow_pc].opcode, pcs.scope_name[narrow_pc] or "cta", pcs.atomic_op[narrow_pc]
            )
            return cause_message(cause, op=op, hint=hint, where=program.where(narrow_pc), block=other.block)
        if cause == Cause.ATOMIC_VS_PLAIN:
            strong = model_strong(pcs.flags(np.array([a[0], b[0]])), self.ctx.model)
            plain_pc = b[0] if strong[0] else a[0]
            return cause_message(cause, where=program.where(plain_pc))
        return cause_message(cause)



def _first_executions(records: list[np.ndarray]) -> list[np.ndarray]:
    """One record per distinct (thread, address range, instruction) of `records` (thread, addr, size, pc, seq, val,
    known), keeping its first execution; its bytes stay known only if every execution stored the same ones."""
    # records are in event order and lexsort is stable, so the first execution comes first
    thread, addr, size, pc, seq, val, known = records
    order = np.lexsort((pc, size, addr, thread))
    thread, addr, size, pc, seq, val, known = (c[order] for c in (thread, addr, size, pc, seq, val, known))
    del order
    begin, _ = run_bounds(run_ids(thread, addr, size, pc))
    known = np.logical_and.reduceat(known, begin) & (np.minimum.reduceat(val, begin) == np.maximum.reduceat(val, begin))
    return [c[begin] for c in (thread, addr, size, pc, seq, val)] + [known]


def _segment_bytes(segs: Segments, val: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The bytes each record stored (`val`, at [start, end)) within each of its segments, as `written_values.span`.

    A record's segments are consecutive in `segs` and tile its range, so a
    segment ends where the record's next one starts, or where the record ends.
    """
    rec = segs.rec
    seg_end = end[rec].copy()
    same_rec = np.flatnonzero(rec[1:] == rec[:-1])
    seg_end[same_rec] = segs.start[same_rec + 1]
    return span(val[rec], start[rec], segs.start, seg_end)
