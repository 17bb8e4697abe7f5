"""The solver questions: can two distinct threads make conflicting, unordered accesses; can a barrier diverge.

Each question takes two copies of the generic thread's terms (thread 1 and
thread 2: every `thread` symbol renamed, `uniform` ones shared), adds what a
launch guarantees (indices below the dimensions, the dimensions within the
hardware's limits) and asks z3 for an assignment. *unsat* is a proof for
every input and every pair of threads; *sat* gives the witness; *unknown*
(the question's budget spent) is reported as such and never counted as a proof.

Every question has a budget of z3's resource units (`rlimit`), not of time:
the solver stops at the same point on every machine and under any load, so
the same file gives the same verdicts and the same report bytes everywhere.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import z3

from gpurace.sim.geometry import MAX_BLOCK_DIMS, MAX_GRID_DIMS, MAX_THREADS_PER_BLOCK
from gpurace.verify.contents import ContentFacts
from gpurace.verify.rereads import Rereads
from gpurace.verify.explore import DIMS, Access, BarrierSite, Exploration
from gpurace.verify.tickets import ticket_facts
from gpurace.verify.terms import Symbols, budgeted_solver, constants, fit, free_symbols

MAX_BLOCK = dict(zip(DIMS, MAX_BLOCK_DIMS))
MAX_GRID = dict(zip(DIMS, MAX_GRID_DIMS))
SCOPE_SPAN = (1 << 31)
"""With symbolic dimensions, each dimension's thread count (grid times block) is below 2^31: the launch scope."""


@dataclass
class Outcome:
    """A query's answer: "unsat", "sat" (with `model`) or "unknown" (with the solver's reason)."""

    status: str
    model: z3.ModelRef | None = None
    reason: str | None = None


DEFAULT_QUERY_BUDGET = 30
"""Millions of z3 resource units one question may take (each of its two steps, `PairSolver.solve`), some 10 s of a
current core; past it the question's answer is "unknown". Of the questions GPUVerify's and Faial's suites ask,
every one decided with 100 million took under 7 million."""

RLIMIT_UNIT = 1_000_000
"""Resource units in one unit of `--query-budget`."""

WITNESS_RLIMIT = 3_000_000
"""The budget for looking for a smaller witness when the solver has found one already (`PairSolver.solve_small`)."""


OUT_OF_TIME = "the command's wall-clock budget (--timeout) was spent before this question was answered"


def _gave_up(reason: str, rlimit: int, wall_ms: int | None) -> str:
    """Why the solver answered "unknown", in the report's words: the budget spent (z3 says "canceled" when the
    resource limit stops one of its tactics), the wall-clock limit, or z3's own reason."""
    budget = f"the solver spent its budget ({rlimit // RLIMIT_UNIT} million resource units, --query-budget)"
    if reason in ("max. resource limit exceeded", "resource limit exceeded") or (reason == "canceled" and wall_ms is None):
        return budget
    if reason in ("timeout", "canceled"):
        return f"{budget} or reached the wall-clock limit (--query-timeout)" if reason == "canceled" else (
            "the solver reached the wall-clock limit (--query-timeout)"
        )
    return f"the solver gave up ({reason})"


def _magnitude(x: z3.BitVecRef) -> z3.BitVecRef:
    return z3.If(x < 0, -x, x)


class PairSolver:
    """The two thread copies of one kernel's exploration, and the solver that holds their common facts."""

    def __init__(
        self, out: Exploration, sym: Symbols, dims: dict[str, int | None], rlimit: int, *, wall_ms: int | None = None,
        within_block: bool = False, deadline: float | None = None,
    ):
        """`rlimit`: the resource budget of each step of a question; `wall_ms`: a wall-clock limit on each step as
        well (a safety net only: where it ends a step, the answer depends on the machine and its load).
        `within_block`: race questions are asked of two threads of one block only (`conflict`). `deadline`
        (`time.monotonic()`): the command's wall-clock budget (`--timeout`); a question still open when it is spent
        is unknown."""
        self.out, self.sym, self.dims = out, sym, dims
        self.within_block = within_block
        for name in ("tid", "ctaid"):
            for d in DIMS:
                sym.named(f"{name}.{d}", 32, "thread")
        self.copies = {i: sym.thread_copies(f"@{i}") for i in (1, 2)}
        self.rlimit, self.wall_ms, self.deadline = rlimit, wall_ms, deadline
        # memo tables keyed by term id; each keeps its key term alive, so that an id is never reused meanwhile
        self.renamed: dict[tuple[int, int], tuple[z3.ExprRef, z3.ExprRef]] = {}
        self.abstracted: dict[int, tuple[z3.ExprRef, z3.ExprRef]] = {}
        self.symbols_in: dict[int, frozenset[str]] = {}
        self.base, self.hints = self._launch_facts()
        self.block_equal = z3.And(*[self.index(f"ctaid.{d}", 1) == self.index(f"ctaid.{d}", 2) for d in DIMS])
        self.thread_equal = z3.And(self.block_equal, *[self.index(f"tid.{d}", 1) == self.index(f"tid.{d}", 2) for d in DIMS])
        threads = z3.BitVecVal(1, 128)
        for d in DIMS:
            threads = threads * fit(self.dim(f"ntid.{d}"), 128) * fit(self.dim(f"nctaid.{d}"), 128)
        self.base += ticket_facts(out.additions, out.accesses, bool(out.unknown_pointers), self.rename, z3.Not(self.thread_equal), threads)
        blocks = {t: [self.index(f"ctaid.{d}", t) for d in DIMS] for t in (1, 2)}
        self.contents = ContentFacts(out.loads, out.accesses, bool(out.unknown_pointers) or out.discards, self.rename, blocks.__getitem__)
        self.rereads = Rereads(out, self.rename, within_block=within_block)

    def rename(self, term: z3.ExprRef, thread: int) -> z3.ExprRef:
        """`term` for thread 1 or 2 (memoised: the same conditions recur in many pairs)."""
        key = (term.get_id(), thread)
        if key not in self.renamed:
            pairs = self.copies[thread]
            self.renamed[key] = (term, z3.substitute(term, *pairs) if pairs else term)
        return self.renamed[key][1]

    def dim(self, name: str) -> z3.BitVecRef:
        fixed = self.dims.get(name)
        return z3.BitVecVal(fixed, 32) if fixed is not None else self.sym.named(name, 32, "uniform")

    def index(self, name: str, thread: int) -> z3.BitVecRef:
        """Thread `thread`'s copy of a thread or block index (`tid.x`), as `Symbols.thread_copies` names it."""
        return z3.BitVec(f"{name}@{thread}", 32)

    def _launch_facts(self) -> tuple[list[z3.BoolRef], list[z3.BoolRef]]:
        """(what the launch guarantees; hints: facts those imply, for the abstracted question only).

        The hints state what products of indices and dimensions are (the
        global index is below the thread count and determines the thread,
        and the kernel's 32-bit `blockIdx * blockDim + threadIdx` is its low
        half), which the abstracted question (`_abstract`) cannot compute.
        The exact question computes them, and does without their 64-bit
        products: a solver bit-blasts each into thousands of gates, which
        made every satisfiable question take seconds. The launch's own bound
        on the thread count is stated as narrowly as the block's limit
        allows for the same reason.
        """
        facts, hints = [], []
        for d in DIMS:
            ntid, nctaid = self.dim(f"ntid.{d}"), self.dim(f"nctaid.{d}")
            open_block, open_grid = self.dims.get(f"ntid.{d}") is None, self.dims.get(f"nctaid.{d}") is None
            # the hardware bounds symbolic dimensions; fixed ones are what they are (a GPUVerify header's may exceed them)
            facts += [z3.UGE(ntid, 1), z3.UGE(nctaid, 1)]
            facts += [z3.ULE(ntid, MAX_BLOCK[d])] if open_block else []
            facts += [z3.ULE(nctaid, MAX_GRID[d])] if open_grid else []
            if open_block or open_grid:
                bits = self._block_bits(d)
                facts.append(z3.ULT(fit(z3.Extract(bits - 1, 0, ntid), bits + 32) * fit(nctaid, bits + 32), SCOPE_SPAN))
            for t in (1, 2):
                tid, ctaid = self.index(f"tid.{d}", t), self.index(f"ctaid.{d}", t)
                facts += [z3.ULT(tid, ntid), z3.ULT(ctaid, nctaid)]
                wide = fit(ctaid, 64) * fit(ntid, 64) + fit(tid, 64)
                hints.append(z3.ULT(wide, fit(ntid, 64) * fit(nctaid, 64)))
                hints.append(z3.Extract(31, 0, wide) == ctaid * ntid + tid)
            total = fit(ntid, 64) * fit(nctaid, 64)
            hints += [z3.ULT(total, SCOPE_SPAN)] if open_block or open_grid else []
            hints += [z3.Extract(31, 0, total) == ntid * nctaid, z3.Extract(31, 0, total) == nctaid * ntid]
            wide1, wide2 = (fit(self.index(f"ctaid.{d}", t), 64) * fit(ntid, 64) + fit(self.index(f"tid.{d}", t), 64) for t in (1, 2))
            hints.append(z3.Implies(wide1 == wide2, z3.And(*[self.index(f"{n}.{d}", 1) == self.index(f"{n}.{d}", 2) for n in ("ctaid", "tid")])))
        if any(self.dims.get(f"ntid.{d}") is None for d in DIMS):
            # wide enough for the product of the three bounds and for the limit itself
            width = max(sum(self._block_bits(d) for d in DIMS), MAX_THREADS_PER_BLOCK.bit_length() + 1)
            block = [fit(self.dim(f"ntid.{d}"), width) for d in DIMS]
            facts.append(z3.ULE(block[0] * block[1] * block[2], MAX_THREADS_PER_BLOCK))
        for t in (1, 2):
            facts += [self.rename(a, t) for a in self.out.assumptions]
        facts += [self._stride_fact(*ind) for ind in self.out.inductions if not self._per_thread(ind[1])]
        facts += [fact for step in self.out.counter_steps for fact in self._later_counts(*step)]
        return facts, hints

    def _block_bits(self, d: str) -> int:
        """How many bits the block's size along `d` takes at most."""
        fixed = self.dims.get(f"ntid.{d}")
        return MAX_BLOCK[d].bit_length() if fixed is None else max(fixed.bit_length(), 1)

    def _abstract(self, term: z3.ExprRef) -> z3.ExprRef:
        """`term` with each product of two non-constant bit-vectors replaced by an uninterpreted function of them."""
        cache = self.abstracted
        stack = [term]
        while stack:
            t = stack[-1]
            if t.get_id() in cache:
                stack.pop()
                continue
            kids = t.children() if z3.is_app(t) else []
            pending = [c for c in kids if c.get_id() not in cache]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if not kids:
                cache[t.get_id()] = (t, t)
                continue
            args = [cache[c.get_id()][1] for c in kids]
            if t.decl().kind() == z3.Z3_OP_BMUL and sum(bool(free_symbols(c, self.symbols_in)) for c in kids) >= 2:
                width = t.size()
                times = z3.Function(f"times{width}", z3.BitVecSort(width), z3.BitVecSort(width), z3.BitVecSort(width))
                product = args[0]
                for a in args[1:]:
                    product = times(product, a)
                cache[t.get_id()] = (t, product)
            else:
                cache[t.get_id()] = (t, t.decl()(*args) if any(not a.eq(c) for a, c in zip(args, kids)) else t)
        return cache[term.get_id()][1]

    def _per_thread(self, term: z3.ExprRef) -> bool:
        return any(s.kind == "thread" for s in map(self.sym.of, constants(term)) if s is not None)

    def _later_counts(self, counter, value, following) -> list[z3.BoolRef]:
        """A thread in a later iteration than the other has passed at least the barriers the other has passed by
        the end of its own: the counts only add up, and are the same function of the iteration in both."""
        k1, k2 = self.rename(counter, 1), self.rename(counter, 2)
        return [
            z3.Implies(z3.ULT(k1, k2), z3.UGE(self.rename(value, 2), self.rename(following, 1))),
            z3.Implies(z3.ULT(k2, k1), z3.UGE(self.rename(value, 1), self.rename(following, 2))),
        ]

    def _stride_fact(self, start, step, counter) -> z3.BoolRef:
        """Two threads' values of a non-wrapping induction variable `start + k·step` with the same step, in
        different iterations, differ from their starts' difference by a multiple of the step: by one at least.

        True of the integers the no-wrap assumption makes them; stated over the
        very terms the accesses use, so that the solver need not reason about
        the multiplication (a grid-stride loop).
        """
        width = start.size()
        wide = width + 2

        def at(t):
            value = self.rename(start + fit(counter, width) * step, t)
            return fit(value, wide, True), fit(self.rename(start, t), wide, True)

        (x1, s1), (x2, s2) = at(1), at(2)
        return z3.Or(self.rename(counter, 1) == self.rename(counter, 2), _magnitude((x1 - x2) - (s1 - s2)) >= _magnitude(fit(step, wide, True)))

    def same_block(self) -> z3.BoolRef:
        return self.block_equal

    def lane_and_warp(self, thread: int) -> tuple[z3.BitVecRef, z3.BitVecRef]:
        """The thread's lane and warp in its block: its linear index in the block modulo and divided by 32."""
        t = [self.index(f"tid.{d}", thread) for d in DIMS]
        n = [self.dim(f"ntid.{d}") for d in DIMS]
        linear = t[0] + n[0] * (t[1] + n[1] * t[2])
        return linear & 31, z3.LShR(linear, 5)

    def same_warp(self) -> z3.BoolRef:
        return z3.And(self.block_equal, self.lane_and_warp(1)[1] == self.lane_and_warp(2)[1])

    def in_mask(self, mask: int, thread: int) -> z3.BoolRef:
        """The thread's lane is one of `mask`'s."""
        return z3.LShR(z3.BitVecVal(mask, 32), self.lane_and_warp(thread)[0]) & 1 == 1

    def distinct(self) -> z3.BoolRef:
        return z3.Not(self.thread_equal)

    def solve(
        self, *facts: z3.BoolRef, quantified: bool = False, witness_only: bool = False, rlimit: int | None = None, obj: str | None = None
    ) -> Outcome:
        """Whether `facts` (with the launch's) can hold; `quantified` when one of them has a quantifier.

        First with every product of two symbols made an uninterpreted
        function (`_abstract`): more behaviours, so *unsat* there is a proof,
        and one the solver finds fast when the facts stated for it (global
        indices, strides) make the products irrelevant. Otherwise exactly.
        `witness_only`: the answer only picks a witness among others already
        found (`solve_small`), so no proof is sought and `WITNESS_RLIMIT` bounds the search. `rlimit`
        bounds each step below the question's budget. `obj`: the question is about races on that object, whose
        loads then agree where a thread rereads bytes (`rereads`).
        """
        budget = min(self.rlimit, rlimit or self.rlimit, WITNESS_RLIMIT if witness_only else self.rlimit)
        if self._left_ms() == 0:
            return Outcome("unknown", reason=OUT_OF_TIME)
        if not quantified:  # `rereads` and `contents` read the symbols of plain terms only
            if obj is not None:
                facts = (*facts, *self.rereads.for_object(obj, facts))
            facts = (*facts, *self.contents.for_terms(facts))
        if not quantified and not witness_only:
            abstract = self._solver("QF_UFBV", budget)
            abstract.add(*(self._abstract(f) for f in (*self.base, *self.hints, *facts)))
            if abstract.check() == z3.unsat:
                return Outcome("unsat")
        solver = self._solver(None if quantified else "QF_BV", budget)
        solver.add(*self.base, *facts)
        answer = solver.check()
        if answer == z3.sat:
            return Outcome("sat", solver.model())
        if answer == z3.unsat:
            return Outcome("unsat")
        if self._left_ms() == 0:
            return Outcome("unknown", reason=OUT_OF_TIME)
        return Outcome("unknown", reason=_gave_up(solver.reason_unknown(), budget, self.wall_ms))

    def _left_ms(self) -> int | None:
        """Milliseconds left of the command's wall-clock budget (0 when spent); None without one."""
        if self.deadline is None:
            return None
        return max(0, int((self.deadline - time.monotonic()) * 1000))

    def _solver(self, logic: str | None, rlimit: int) -> z3.Solver:
        """A solver for `logic` (None: any, for quantified questions) with the step's budget, and the wall-clock
        safety net when one was asked for."""
        solver = budgeted_solver(logic, rlimit)
        limits = [ms for ms in (self.wall_ms, self._left_ms()) if ms is not None]
        if limits:
            solver.set("timeout", max(1, min(limits)))
        return solver

    def solve_small(self, *facts: z3.BoolRef, quantified: bool = False, obj: str | None = None) -> Outcome:
        """As `solve`, but a witness within a small launch and small parameters is preferred when one exists.

        A small witness (few blocks and threads, small parameters, early loop
        iterations) is one a person can read, the simulator can run and
        whose iterations can be checked reachable; when none exists the
        first answer stands.
        """
        first = self.solve(*facts, quantified=quantified, obj=obj)
        if first.status != "sat":
            return first
        small = self.small_witness_bounds()
        tighter = self.solve(*facts, *small, quantified=quantified, witness_only=True, obj=obj)
        return tighter if tighter.status == "sat" else first

    def small_witness_bounds(self) -> list[z3.BoolRef]:
        """What makes a witness small (`solve_small`): open dimensions of a few blocks of few threads, small
        parameters, early loop iterations. Fixed dimensions are what they are: bounding them would leave
        no witness at all in a launch of more than 4 blocks."""
        small = [
            z3.ULE(self.dim(f"{n}.{d}"), limit) for n, limit in (("ntid", 64), ("nctaid", 4)) for d in DIMS if self.dims.get(f"{n}.{d}") is None
        ]
        small += [z3.ULE(s.term, 1 << 12) for name, s in self.sym.table.items() if s.kind == "uniform" and name.startswith("param.") and s.term.size() <= 64]
        small += [z3.ULE(self.rename(loop.counter, t), 16) for loop in self.out.loops.values() for t in (1, 2)]
        return small

    # ----------------------------------------------------------------- races

    def conflict(
        self, a: Access, b: Access, *, barriers: bool = True, warp_mask: int | None = None, same_value: bool = False
    ) -> z3.BoolRef | None:
        """Thread 1 makes `a` and thread 2 `b` (of one block, `within_block`), the bytes overlap, and nothing orders
        or exempts the pair.

        None when the pair can never race (two reads; atomics whose scope
        covers both threads wherever they are). With `barriers`, two threads
        in different block (grid) barrier intervals are ordered: the caller
        sets it only when those barriers were proved uniform. `warp_mask`, when the warp
        barriers were proved to be passed together (`warp_divergence`), is
        the lanes every warp barrier names: two of them in one warp are
        ordered when their counts of warp barriers passed differ. With
        `same_value` (GPUVerify's convention), two plain stores of one width
        at one offset that write the same bits are exempt (`benign_writes`).
        """
        if not (a.write or b.write):
            return None
        shared = self.out.objects[a.obj].kind == "shared"
        facts = [self.distinct(), self.rename(a.cond, 1), self.rename(b.cond, 2)]
        if a.atomic and b.atomic:
            block_scoped = {a.scope, b.scope} & {"cta", "cluster"}
            if not block_scoped or shared:
                return None
            facts.append(z3.Not(self.same_block()))  # a block-scoped atomic does not cover another block's thread
        if shared or self.within_block:
            facts.append(self.same_block())
        if barriers:
            same_interval = self.rename(a.barriers, 1) == self.rename(b.barriers, 2)
            facts.append(same_interval if shared else z3.Or(z3.Not(self.same_block()), same_interval))
            if self.out.grid_barriers:  # proved uniform, or `barriers` is False (see `grid_divergence`)
                facts.append(self.rename(a.grid_barriers, 1) == self.rename(b.grid_barriers, 2))
        if warp_mask is not None:
            same_warp_interval = self.rename(a.warp_barriers, 1) == self.rename(b.warp_barriers, 2)
            outside = z3.Or(z3.Not(self.same_warp()), z3.Not(self.in_mask(warp_mask, 1)), z3.Not(self.in_mask(warp_mask, 2)))
            facts.append(z3.Or(outside, same_warp_interval))
        lo1, lo2 = self.rename(a.offset, 1), self.rename(b.offset, 2)
        facts += [lo1 < lo2 + b.size, lo2 < lo1 + a.size]
        if same_value and (benign := self.benign_writes(a, b)) is not None:
            facts.append(z3.Not(benign))
        return z3.And(*facts)

    def benign_writes(self, a: Access, b: Access) -> z3.BoolRef | None:
        """Thread 1's store `a` and thread 2's store `b` write the same bits to the same bytes; None when the
        pair is not two plain stores of known values and one width (then no pair of theirs is exempt).

        Only whole stores at one offset count: where two stores overlap in
        part, their other bytes would still differ in what a reader sees.
        """
        if a.stored is None or b.stored is None or a.size != b.size:
            return None
        same_bytes = self.rename(a.offset, 1) == self.rename(b.offset, 2)
        return z3.And(same_bytes, self.rename(a.stored, 1) == self.rename(b.stored, 2))

    # ------------------------------------------------------------- barriers

    def warp_divergence(self, site: BarrierSite, exits: list[int], mask: int) -> z3.BoolRef:
        """A lane reaches the warp barrier `site` outside its `mask`, or another lane of the mask, in the same
        warp and the same iterations with as many warp barriers passed, does not reach it (`divergence`)."""
        outside = z3.And(self.rename(site.cond, 1), z3.Not(self.in_mask(mask, 1)))
        missed = z3.And(self.same_warp(), self.in_mask(mask, 2), self._misses(site, exits))
        return z3.Or(outside, missed)

    def grid_divergence(self, site: BarrierSite, exits: list[int]) -> z3.BoolRef:
        """Two threads anywhere in the grid, as `divergence` asks it of two threads of one block: every thread
        must pass each grid barrier, in the same iterations, for the counts to order accesses."""
        return self._misses(site, exits)

    def divergence(self, site: BarrierSite, exits: list[int]) -> z3.BoolRef:
        """Two threads of a block in the same iterations of the enclosing loops: one reaches `site`, the other not.

        `exits` are the loops the barrier comes after whose iterations are
        exact (`LoopFacts.monotone`): the second thread leaves each in one
        iteration only, so "it does not reach the barrier" holds for every
        value of their counters. For other loops (and other approximated
        values) some value suffices: an over-approximation, never a proof
        missed.
        """
        return z3.And(self.same_block(), self._misses(site, exits))

    def _misses(self, site: BarrierSite, exits: list[int]) -> z3.BoolRef:
        """Distinct threads in the same iterations and barrier interval: thread 1 reaches `site`, thread 2 not."""
        same_iterations = [
            self.rename(self.out.loops[h].counter, 1) == self.rename(self.out.loops[h].counter, 2) for h in site.loops
        ]
        misses = z3.Not(self.rename(site.cond, 2))
        if exits:
            misses = z3.ForAll([self.rename(self.out.loops[h].counter, 2) for h in exits], misses)
        return z3.And(
            self.distinct(), *same_iterations,
            self.rename(site.barriers, 1) == self.rename(site.barriers, 2),
            self.rename(site.cond, 1), misses,
        )
