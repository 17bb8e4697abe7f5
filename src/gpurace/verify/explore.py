"""Symbolic execution of one kernel for a generic thread: every access it may make, under which condition.

The kernel is executed once over its control-flow graph (not once per path):
at a join the register values of the incoming paths are merged into `If`
terms on the paths' conditions. The result is a list of `Access` records
(object, byte offset, size, kind, the condition under which the thread makes
it, the number of barriers the thread has passed) and of `BarrierSite`
records, all as terms over the *generic thread's* symbols; a race query then
takes two copies of them.

Loops are executed once with a fresh symbol for every register the loop body
assigns, and then classified by what one iteration does to it: unchanged
(the entry value), an induction variable (`h + c` with `c` fixed: the value
in iteration `k` is `entry + k*c`, exactly, with `k` the loop's counter), or
anything else (left free: an approximation, named in the report). An
iteration `k > 0` is reachable only if the back-edge was taken in iteration
`k - 1`; that condition is added when it is exact, so `for (i = tid; i < n;
i += stride)` stays exact. A signed induction variable is assumed not to wrap
around (C++ makes signed overflow undefined); unsigned ones may.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import z3

from gpurace.detect.rules import ATOMIC_SEMANTICS
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.kernels import KernelInfo
from gpurace.frontend.names import variable_name
from gpurace.frontend.ptx.debuginfo import is_library_file, user_frame
from gpurace.frontend.ptx.ir import (
    Addr,
    Function,
    Imm,
    Instruction,
    Module,
    Negated,
    ParamList,
    PredPair,
    Reg,
    SpecialReg,
    Sym,
    Vec,
    type_size,
)
from gpurace.verify.cfg import Cfg, Loop, build_cfg, live_in
from gpurace.verify.contents import Load
from gpurace.verify.enum_ranges import enum_range
from gpurace.verify.geometric import closed_form
from gpurace.verify.grid_sync import find_grid_syncs
from gpurace.verify.loop_exits import first_exit_form
from gpurace.verify.local_memory import PREFIX as LOCAL, overlapping, parse_slot, slot_name
from gpurace.verify.semantics import arith, combine, compare, convert, int_type
from gpurace.verify.tickets import Addition
from gpurace.verify.terms import HELPER_RLIMIT, Symbols, Value, budgeted_solver, constants, fit, free_symbols, merge

LOOP_KEYS = 1 << 20
"""Loops are keyed by block index plus this times the number of the function execution (kernel 0, each call)."""

CALL_DEPTH = 16
"""Calls nested deeper than this (and recursion) are unknown."""

AXIOM_PREFIX = "__gpurace_axiom_"
"""The functions the compatibility `cuda.h` makes of file-scope `__axiom(e)`s (`Explorer._axioms`)."""

ARG = "%param:"
"""Pseudo-registers holding a call's arguments and results (`st.param [param0]`, `ld.param [retval0]`)."""

BAR = "%bar"
"""A pseudo-register counting the block barriers (`bar.sync 0`) the thread has passed (64-bit, never wrapping)."""

WARP_BAR = "%wbar"
"""A pseudo-register counting the warp barriers (`bar.warp.sync`, `__syncwarp`) the thread has passed, any mask."""

GRID_BAR = "%gbar"
"""A pseudo-register counting the grid barriers (`this_grid().sync()`, see `grid_sync`) the thread has passed."""

COUNTERS = (BAR, WARP_BAR, GRID_BAR)

IRRELEVANCE_RLIMIT = HELPER_RLIMIT // 10
"""The budget of asking whether a term depends on a symbol (`_without_irrelevant`): the merged paths that name a
value without depending on it are plain tautologies, found at once; a question that needs more (a product of
symbols, as a grid-stride loop's test) is left undecided, the symbol kept."""

DIMS = ("x", "y", "z")


class Unsupported(Exception):
    """A construct the verifier does not reason about; the kernel's verdict is "unknown" with this reason."""


@dataclass(frozen=True)
class ObjectInfo:
    """A memory object accesses can race on: `kind` is "shared", "param" (a pointer parameter) or "global"."""

    name: str
    kind: str
    label: str


@dataclass
class Access:
    """One memory access of the generic thread, as terms over its symbols."""

    obj: str
    offset: z3.BitVecRef
    size: int
    write: bool
    read: bool
    atomic: bool
    scope: str | None
    volatile: bool
    cond: z3.BoolRef
    barriers: z3.BitVecRef
    ins: Instruction
    loops: tuple[int, ...]
    warp_barriers: z3.BitVecRef = z3.BitVecVal(0, 64)
    grid_barriers: z3.BitVecRef = z3.BitVecVal(0, 64)
    stored: z3.BitVecRef | None = None
    """The bytes a plain store writes (`size` * 8 bits), when they are one register or constant that is not a
    pointer; None for loads, atomics, vector stores and stored pointers. Only `--benign-same-value` reads it."""


@dataclass
class BarrierSite:
    """A `bar.sync 0` the generic thread reaches under `cond`, inside `loops` (their headers, outermost first).

    For a warp barrier (`bar.warp.sync mask`), `barriers` counts the warp
    barriers passed before it and `mask` is the 32-bit lane mask; for a
    grid barrier, `barriers` counts the grid barriers passed before it.
    """

    ins: Instruction
    cond: z3.BoolRef
    barriers: z3.BitVecRef
    loops: tuple[int, ...]
    mask: z3.BitVecRef | None = None


@dataclass
class LoopFacts:
    """What the queries need to know about a loop: its counter, the line of its head, how exact its iterations are.

    `exact`: the back-edge condition `backedge` (over the counter) has no
    approximated value, so iteration k needs it to hold in iteration k - 1.
    `monotone`: moreover once it fails it fails in every later iteration, so
    iteration k is reached *exactly* when it held in iteration k - 1 (and a
    thread leaves the loop in one iteration only).
    """

    header: int
    counter: z3.BitVecRef
    where: str
    exact: bool
    backedge: z3.BoolRef | None = None
    monotone: bool = False


@dataclass
class State:
    regs: dict[str, Value]
    cond: z3.BoolRef


@dataclass
class Exploration:
    """Everything the race and divergence queries need about one kernel.

    `inductions` are the (start, step, counter) of the induction variables
    assumed not to wrap, from which the queries state a fact the solver
    could only prove with nonlinear reasoning (`PairSolver`).
    `counter_steps` are the (counter, value, next value) of the barrier
    counts that are one function of a loop's iteration in every thread
    (`_uniform_evolution`): the count in a later iteration is at least the
    next value of an earlier one, a fact the solver could only prove by
    induction (`PairSolver`).
    `function_addresses` names the device functions whose address the kernel
    takes (the targets a function pointer can be proved to hold);
    `user_assumptions` are the `__assume`s: their index in `assumptions`,
    their line and whether they are inside a loop;
    `local_escaped` is set once the address of local memory is stored to
    other memory, after which a call may write the thread's local slots.
    `choices` are the pointers that select their object (`c ? A : B`, or a
    pointer assigned on two paths): each name a `Value.base` may hold here
    stands for its objects, each with the condition under which the pointer
    is that object's; an access through it is an access of each object
    under its condition.
    `additions` are the integer atomic additions, for `tickets`; `loads`
    the plain scalar loads of one object, for `contents`, which `discards`
    (a `discard` of cached bytes anywhere) turns off. `assumed` states, per
    function declared without a body, what verify assumed of it (`_bodiless_call`).
    """

    accesses: list[Access] = field(default_factory=list)
    barriers: list[BarrierSite] = field(default_factory=list)
    warp_barriers: list[BarrierSite] = field(default_factory=list)
    grid_barriers: list[BarrierSite] = field(default_factory=list)
    objects: dict[str, ObjectInfo] = field(default_factory=dict)
    assumptions: list[z3.BoolRef] = field(default_factory=list)
    loops: dict[int, LoopFacts] = field(default_factory=dict)
    unknown_pointers: list[Instruction] = field(default_factory=list)
    unmodelled: set[str] = field(default_factory=set)
    functions_run: int = 0
    function_addresses: list[str] = field(default_factory=list)
    local_escaped: bool = False
    inductions: list[tuple[z3.BitVecRef, z3.BitVecRef, z3.BitVecRef]] = field(default_factory=list)
    counter_steps: list[tuple[z3.BitVecRef, z3.BitVecRef, z3.BitVecRef]] = field(default_factory=list)
    user_assumptions: list[tuple[int, str, bool]] = field(default_factory=list)
    choices: dict[str, tuple[tuple[str, z3.BoolRef], ...]] = field(default_factory=dict)
    additions: list[Addition] = field(default_factory=list)
    loads: list[Load] = field(default_factory=list)
    discards: bool = False
    assumed: dict[str, str] = field(default_factory=dict)


class Explorer:
    """Executes one kernel symbolically; `run()` returns its Exploration or raises Unsupported."""

    def __init__(
        self, module: Module, fn: Function, info: KernelInfo, dims: dict[str, int | None], symbols: Symbols,
        caller: Explorer | None = None, bound: dict[str, Value] | None = None, site: Instruction | None = None,
    ):
        """`caller`, `bound` and `site` (the call) for a device function executed at a call site: it shares the
        caller's findings and symbols, continues its enclosing loops, and reads its parameters from `bound`."""
        self.module, self.fn, self.info, self.dims, self.sym = module, fn, info, dims, symbols
        self.widths = {}
        for decl in fn.regs:
            for name in decl.names():
                self.widths[name] = None if decl.type == "pred" else type_size(decl.type) * 8
        self.widths.update({c: 64 for c in COUNTERS})
        self.variables = {v.name: v for v in (*module.variables, *fn.variables)}
        self.params = {p.name: (i, p) for i, p in enumerate(fn.params)}
        self.cfg: Cfg = build_cfg(fn)
        self.grid = find_grid_syncs(fn)
        self.grid_entry: dict[int, z3.BoolRef] = {}  # per grid barrier, the condition under which it is reached
        self.live = live_in(self.cfg, fn, _reads, _writes)
        self.incoming: dict[int, list[State]] = {}
        self.back: dict[int, list[State]] = {}
        self.returned: list[State] = []
        self.bound = bound or {}
        self.signed_operands: list[z3.ExprRef] = []
        if caller is None:
            self.out = Exploration()
            self.active_loops: list[int] = []
            self.pointer_params: dict[str, ObjectInfo] = {}
            self.calls: tuple[str, ...] = (fn.name,)
            self.call_sites: tuple[Instruction, ...] = ()
        else:
            self.out = caller.out
            # the callers' local memory, which a pointer argument may reach, and the widths of its slots
            for name, var in caller.variables.items():
                if var.space == "local":
                    self.variables.setdefault(name, var)
            self.widths.update({n: w for n, w in caller.widths.items() if n.startswith(LOCAL)})
            self.active_loops = list(caller.active_loops)
            self.pointer_params = caller.pointer_params
            self.calls = (*caller.calls, fn.name)
            self.call_sites = (*caller.call_sites, site) if site is not None else caller.call_sites
        self.loop_base = LOOP_KEYS * self.out.functions_run
        self.out.functions_run += 1

    # ---------------------------------------------------------------- driver

    def run(self) -> Exploration:
        """Execute the kernel for the generic thread."""
        self._enum_ranges()
        start = State({c: Value(z3.BitVecVal(0, 64)) for c in COUNTERS}, z3.BoolVal(True))
        self.execute(self._axioms(start))
        return self.out

    def _axioms(self, state: State) -> State:
        """Assume GPUVerify's file-scope `__axiom(e)`s for the thread, before the kernel's first instruction.

        The compatibility `cuda.h` makes each a function no kernel calls,
        `__gpurace_axiom_N` (N its line), whose body is an `__assume(e)`:
        executed here, in the order of the file, it states `e` of the
        thread's values at the kernel's start.
        """
        names = [n for n in self.module.functions if n.startswith(AXIOM_PREFIX) and n[len(AXIOM_PREFIX) :].isdigit()]
        for name in sorted(names, key=lambda n: int(n[len(AXIOM_PREFIX) :])):
            fn = self.module.functions[name]
            axiom = Explorer(self.module, fn, self.info, self.dims, self.sym, caller=self)
            after = axiom.execute(State({c: state.regs[c] for c in COUNTERS}, state.cond))
            state = State({**state.regs, **{c: after.regs[c] for c in COUNTERS}}, state.cond)
            where = next((i.where() for i in fn.body if i.opcode == "call"), fn.name)
            self.out.assumed[name] = f"assumed, as GPUVerify does: the __axiom at {where} holds for every thread from its kernel's start"
        return state

    def _param_symbol(self, label: str, size: int) -> z3.BitVecRef:
        """The value of the scalar parameter `label` (`size` bytes), one for all threads."""
        return self.sym.named(f"param.{label}", size * 8, "uniform")

    def _enum_ranges(self) -> None:
        """Assume each enumeration-typed parameter holds a value of its enumeration (`enum_ranges`), and say so."""
        for param, info in zip(self.fn.params, self.info.params):
            known = enum_range(self.module.source_path, info.type)
            if known is None or param.dims or info.is_pointer:
                continue
            label = info.cpp_name or info.name
            value = self._param_symbol(label, param.size)
            lo, hi = (z3.BitVecVal(v, value.size()) for v in (known.lo, known.hi))
            self.out.assumptions.append(z3.And(lo <= value, value <= hi) if known.signed else z3.And(z3.UGE(value, lo), z3.ULE(value, hi)))
            self.out.assumed[f"enum {label}"] = (
                f"assumed, as C++ requires: `{label}`, of enumeration `{known.name}`, holds one of its values, "
                f"{known.lo} to {known.hi} (the smallest bit-field holding its enumerators)"
            )

    def execute(self, start: State) -> State:
        """Execute the function from `start`; the state it returns in (every path's, merged)."""
        self.incoming[self.cfg.order[0]] = [start]
        self._walk(self.cfg.order, None)
        ends = self.returned + self.incoming.pop(self.cfg.blocks[-1].index, [])
        if not ends:  # every path traps or exits: nothing comes back
            return State({c: start.regs[c] for c in COUNTERS}, z3.BoolVal(False))
        return self._merge(ends)

    def _walk(self, order: list[int], loop: Loop | None) -> None:
        done: set[int] = set()
        for b in order:
            if b in done:
                continue
            inner = self.cfg.loops.get(b)
            if inner is not None and inner is not loop:
                self._loop(inner)
                done |= inner.blocks
            else:
                self._block(b)

    def _block(self, b: int) -> None:
        states = self.incoming.pop(b, [])
        if not states:
            return
        state = self._merge(states)
        block = self.cfg.blocks[b]
        body = self.fn.body[block.start : block.end]
        for ins in body[:-1] if block.branch is not None else body:
            state = self._step(state, ins)
        if block.branch is not None:
            taken = self._guard(state, block.branch)
            edges = [(block.succs[0], z3.And(state.cond, taken)), (block.succs[1], z3.And(state.cond, z3.Not(taken)))]
        else:
            edges = [(s, state.cond) for s in block.succs]
            if body and body[-1].opcode == "ret" and not block.succs:
                self.returned.append(state)  # back to the caller (a kernel's thread just ends)
        for succ, cond in edges:
            target = State(state.regs, cond)
            header_loop = self.cfg.loops.get(succ)
            if header_loop is not None and b in header_loop.latches:
                self.back[succ].append(target)
            else:
                self.incoming.setdefault(succ, []).append(target)

    def _merge(self, states: list[State]) -> State:
        if len(states) == 1:
            return states[0]
        conds = [s.cond for s in states]
        names = set().union(*(s.regs for s in states))
        regs = {}
        for name in sorted(names):
            values = [s.regs[name] if name in s.regs else self._undefined(name) for s in states]
            regs[name] = merge(conds, values, lambda: self._approx(name, "values of different objects merged"), self._choose)
        return State(regs, _join_condition(conds))

    # ------------------------------------------------------------------ loops

    def _loop(self, loop: Loop) -> None:
        entry = self._merge(self.incoming.pop(loop.header))
        where = self._where(loop.header)
        key = self.loop_base + loop.header
        assigned = self._assigned(loop) & (self.live[loop.header] | set(COUNTERS))
        if self._may_store(loop):
            assigned |= {name for name in entry.regs if name.startswith(LOCAL)}
        heads: dict[str, Value] = {}
        for name in sorted(assigned):
            before = entry.regs.get(name) or self._undefined(name)
            term = self.sym.fresh(
                f"loop{key}.{name}", self.widths.get(name), "thread", f"value carried around the loop at {where}", key
            )
            heads[name] = Value(term, before.base)
        counter = self.sym.fresh(f"k{key}", 64, "thread", None, key)
        mark_sym = len(self.sym.table)
        mark_acc, mark_signed = len(self.out.accesses), len(self.signed_operands)
        mark_bar = (len(self.out.barriers), len(self.out.warp_barriers), len(self.out.grid_barriers))
        mark_loops = len(self.out.loops)
        self.incoming[loop.header] = [State({**entry.regs, **heads}, entry.cond)]
        marks = self._edge_marks()
        self.back[loop.header] = []
        self.active_loops.append(key)
        order = [b for b in self.cfg.order if b in loop.blocks]
        self._walk(order, loop)
        self.active_loops.pop()
        backs = self.back.pop(loop.header)
        # values made in the body differ per iteration; uniform ones (parameters, functions of other values) do not
        inside = {name for name in list(self.sym.table)[mark_sym:] if self.sym.table[name].kind == "thread"} | {str(v.term) for v in heads.values()}
        compared = set().union(*(free_symbols(t) for t in self.signed_operands[mark_signed:]))
        subst = self._classify(loop, entry, heads, backs, counter, inside, compared)
        back_cond = z3.Or(*[s.cond for s in backs]) if backs else z3.BoolVal(False)
        back_cond = z3.substitute(back_cond, *subst) if subst else back_cond
        back_cond = self._without_irrelevant(back_cond, self._thread_symbols(back_cond))
        exact = not free_symbols(back_cond) & inside  # free head symbols and values made inside differ per iteration
        if exact:
            back_cond = first_exit_form(back_cond, counter)
            previous = z3.substitute(back_cond, (counter, counter - 1))
            valid = z3.Or(counter == 0, previous)
        else:
            self.sym.table[str(counter)].reason = f"iteration count of the loop at {where}"
            valid = z3.BoolVal(True)
        monotone = exact and self._monotone(back_cond, counter)
        leaving = None
        if monotone:
            leaving = (counter, back_cond, self._exit_iteration(key, back_cond, counter))
        inner = list(self.out.loops.values())[mark_loops:]
        self.out.loops[key] = LoopFacts(key, counter, where, exact, back_cond if exact else None, monotone)
        self._rewrite(subst, valid, mark_acc, mark_bar, marks, loop, inner, leaving)

    def _thread_symbols(self, term: z3.ExprRef) -> set[str]:
        """The names of the symbols in `term` that may differ between threads."""
        return {n for n in free_symbols(term) if n in self.sym.table and self.sym.table[n].kind == "thread"}

    def _without_irrelevant(self, term: z3.ExprRef, names) -> z3.ExprRef:
        """`term` with each symbol of `names` on which it does not depend replaced by a constant (uniform ones, such
        as parameters and dimensions, are harmless and left to save the solver's time).

        A loop's back-edge condition, or a register's value at the back-edge,
        merges the paths that reach it; when the body branches on a loaded
        value or on the thread (`if (ixj > tid) { if (a > b) swap }`), every
        outcome reaches the back-edge, and the merged term names the
        comparison without depending on it. Left in, a loaded value would
        make the loop's iterations look approximated, and the thread index
        would make its trip count, and the barriers passed in it, look
        different in every thread.
        """
        for name in sorted(names):
            symbol = self.sym.table[name].term if name in self.sym.table else None
            if symbol is None or not z3.is_const(symbol):
                continue
            other = z3.Const(f"{name}.other", symbol.sort())
            solver = budgeted_solver(None, IRRELEVANCE_RLIMIT)
            solver.add(term != z3.substitute(term, (symbol, other)))
            if solver.check() == z3.unsat:
                constant = z3.BoolVal(False) if z3.is_bool(symbol) else z3.BitVecVal(0, symbol.size())
                term = z3.substitute(term, (symbol, constant))
        return term

    def _exit_iteration(self, key: int, back_cond: z3.BoolRef, counter: z3.BitVecRef) -> z3.ExprRef:
        """The iteration in which a monotone loop's back-edge test first fails, as one function of the values the
        test reads besides the counter (2^64 - 1 where it never fails).

        A thread that leaves the loop through that test does so in this
        iteration (every earlier test held, `LoopFacts.monotone`), and a
        thread in iteration k has k no later than it. Threads that agree on
        those values leave in the same iteration: the inner loop of a
        bitonic sort (`for (j = k >> 1; j > 0; j >>= 1)`) runs as many
        times in every thread, so the barriers passed by the end of an outer
        iteration are one function of that iteration for all threads
        (`_uniform_evolution`).
        """
        args = sorted((c for c in constants(back_cond) if not c.eq(counter)), key=str)
        return self.sym.determined(f"exit{key}", args, key)

    def _monotone(self, back_cond: z3.BoolRef, counter: z3.BitVecRef) -> bool:
        """Whether taking the back-edge in iteration j implies taking it in iteration j - 1, for every j >= 1.

        The loop's assumptions (a signed counter does not wrap) hold in
        iteration j + 1 too: the back-edge test of iteration j computes the
        counter's next value (`i + 1 < n` after `i++`), whose overflow would
        be as undefined as any other.
        """
        j = z3.BitVec(f"{counter}.j", 64)

        def at(term, value):
            return z3.substitute(term, (counter, value))

        solver = budgeted_solver("QF_BV", HELPER_RLIMIT)
        facts = [a for a in self.out.assumptions if counter.get_id() in {c.get_id() for c in constants(a)}]
        solver.add(*[at(a, i) for a in facts for i in (j - 1, j, j + 1)])
        solver.add(z3.UGE(j, 1), z3.ULT(j, 1 << 62), at(back_cond, j), z3.Not(at(back_cond, j - 1)))
        return solver.check() == z3.unsat

    def _may_store(self, loop: Loop) -> bool:
        """Whether the loop may write thread-private memory: it stores, or calls (its local slots may change)."""
        for b in loop.blocks:
            block = self.cfg.blocks[b]
            if any(ins.opcode in ("st", "atom", "red", "call") for ins in self.fn.body[block.start : block.end]):
                return True
        return False

    def _assigned(self, loop: Loop) -> set[str]:
        out: set[str] = set()
        for b in loop.blocks:
            block = self.cfg.blocks[b]
            for ins in self.fn.body[block.start : block.end]:
                if ins.opcode in ("bar", "barrier"):
                    out.add(WARP_BAR if ins.has("warp") else BAR)
                if id(ins) in self.grid.openings:
                    out.add(GRID_BAR)
                if ins.opcode == "call":
                    out.update(COUNTERS)  # a called function may pass barriers too
                out.update(_destinations(ins))
        return out

    def _classify(self, loop, entry, heads, backs, counter, inside, compared):
        """Substitution pairs for the loop's head symbols: entry values, induction formulas; others stay free."""
        if not backs:
            return [(v.term, (entry.regs.get(n) or self._undefined(n)).term) for n, v in heads.items()]
        back = self._merge(backs) if len(backs) > 1 else backs[0]
        subst: list[tuple[z3.ExprRef, z3.ExprRef]] = []
        pending = dict(heads)
        changed = True
        while changed:  # invariants first: an induction step may use a register the loop never changes
            changed = False
            for name, head in list(pending.items()):
                after = back.regs.get(name, head)
                after_term = z3.substitute(after.term, *subst) if subst else after.term
                if after_term.eq(head.term) or z3.eq(z3.simplify(after_term), head.term):
                    subst.append((head.term, (entry.regs.get(name) or self._undefined(name)).term))
                    del pending[name]
                    changed = True
        for name, head in list(pending.items()):
            after = back.regs.get(name, head)
            if after.base != head.base:
                raise Unsupported(f"a pointer changes object around the loop at {self._where(loop.header)}")
            if z3.is_bool(head.term):
                continue
            step = z3.simplify(z3.substitute(after.term - head.term, *subst) if subst else after.term - head.term)
            if free_symbols(step) & inside:
                continue
            width = head.term.size()
            start = (entry.regs.get(name) or self._undefined(name)).term
            subst.append((head.term, fit(start, width) + fit(counter, width) * step))
            del pending[name]
            if str(head.term) in compared:  # the loop compares it as a signed integer (through copies too)
                self.out.assumptions.append(_no_signed_wrap(fit(start, width), step, counter, width))
                self.out.inductions.append((fit(start, width), step, counter))
            elif name in COUNTERS:  # no thread passes 2^64 barriers: the count never wraps back to an earlier interval's
                self.out.assumptions.append(_no_unsigned_wrap(start, step, counter))
        for name, head in list(pending.items()):  # shifted by a constant each iteration: exact too
            if z3.is_bool(head.term):
                continue
            after = back.regs.get(name, head).term
            start = fit((entry.regs.get(name) or self._undefined(name)).term, head.term.size())
            signed = str(head.term) in compared
            form = closed_form(head.term, z3.substitute(after, *subst) if subst else after, start, counter, signed=signed)
            if form is not None:
                subst.append((head.term, form[0]))
                if form[1] is not None:
                    self.out.assumptions.append(form[1])
                del pending[name]
        uniform = self._uniform_evolution(loop, entry, back, pending, subst, counter)
        as_function = {str(h): v for h, v in uniform}
        for name, head in pending.items():
            if z3.is_bool(head.term):
                continue
            value = as_function.get(str(head.term), head.term)
            following = z3.substitute(back.regs.get(name, head).term, *subst) if subst else back.regs.get(name, head).term
            start = (entry.regs.get(name) or self._undefined(name)).term
            self.out.assumptions += [c(value, fit(start, value.size())) for c in _bounds(head.term, fit(start, head.term.size()), following)]
        subst += uniform
        return subst

    def _uniform_evolution(self, loop, entry, back, pending, subst, counter):
        """Head symbols whose value in iteration `k` is the same in every thread: `f(k)` for a uniform `f`.

        A register that starts uniform (no thread symbol on entry) and whose
        next value depends only on uniform values and such registers (`s >>= 1`
        from `blockDim.x / 2`) is approximated by one function of the
        iteration shared by all threads, rather than a free value per thread:
        two threads in the same iteration then agree on it.
        """
        def uniform_besides(term, names: set[str]) -> bool:
            """No thread symbol in `term` but the loop's counter and the head symbols of the registers `names`."""
            heads = {str(pending[n].term) for n in names} | {str(counter)}
            return all(n in heads or n not in self.sym.table or self.sym.table[n].kind != "thread" for n in free_symbols(term))

        candidates = {
            n for n, v in pending.items() if not z3.is_bool(v.term) and n in entry.regs and uniform_besides(entry.regs[n].term, set())
        }
        heads = {str(v.term) for v in pending.values()} | {str(counter)}
        nexts = {}
        for name in sorted(candidates):
            after = back.regs.get(name, pending[name]).term
            after = z3.substitute(after, *subst) if subst else after
            nexts[name] = self._without_irrelevant(after, self._thread_symbols(after) - heads)
        changed = True
        while changed:
            changed = False
            for name in sorted(candidates):
                if not uniform_besides(nexts[name], candidates):
                    candidates.discard(name)
                    changed = True
        out = []
        where = self._where(loop.header)
        for name in sorted(candidates):
            head = pending[name]
            reason = f"value carried around the loop at {where} (the same in every thread)"
            key = self.loop_base + loop.header
            out.append((head.term, self.sym.function(f"loop{key}.{name}", head.term.size(), reason, key)(counter)))
        for (head, value), name in zip(out, sorted(candidates)):
            # f(0) is the entry value and f(k) follows from f(k-1) by one iteration: true of every thread
            following = z3.substitute(nexts[name], *out)
            previous = z3.substitute(following, (counter, counter - 1))
            start = z3.substitute(value, (counter, z3.BitVecVal(0, 64)))
            self.out.assumptions.append(z3.And(start == fit(entry.regs[name].term, head.size()), z3.Or(counter == 0, value == fit(previous, head.size()))))
            if name in COUNTERS:  # barriers passed only add up: no thread passes 2^64 of them
                self.out.assumptions += [z3.UGE(value, start), z3.UGE(following, value)]
                self.out.counter_steps.append((counter, value, following))
        return out

    def _edge_marks(self) -> dict[tuple[str, int], int]:
        """How many states wait on each edge list now: the loop's exit states are those added after."""
        marks = {("in", b): len(states) for b, states in self.incoming.items()}
        marks.update({("back", h): len(states) for h, states in self.back.items()})
        marks[("ret", 0)] = len(self.returned)
        return marks

    def _rewrite(self, subst, valid, mark_acc: int, mark_bar: tuple[int, int, int], marks, loop: Loop, inner: list[LoopFacts], leaving) -> None:
        """Put the loop's classification into everything made inside it: its accesses, barriers and exit states.

        `leaving` (counter, back-edge test, `_exit_iteration`) is given for a
        monotone loop: an exit state whose condition implies the test failed
        left in that iteration, so its counter is replaced by it. In a loop
        nested in another, what defines that iteration becomes facts, for the
        enclosing loop's registers that count on it (`_exit_facts`); a loop
        at the top has no use for them, and they would only cost the solver.
        """
        substituted = []

        def sub(term):
            return z3.substitute(term, *subst) if subst else term

        def left(term):  # an exit state that left through the failed test, in the iteration it failed
            return z3.substitute(sub(term), (leaving[0], leaving[2]))

        def exit_state(s: State) -> State:
            cond = z3.And(sub(s.cond), valid)
            fix = left if leaving is not None and _implies_not(cond, leaving[1]) else sub
            cond = cond if fix is sub else left(cond)
            substituted.append(fix is left)
            return State({n: Value(fix(v.term), self._rechoose(v.base, fix)) for n, v in s.regs.items()}, cond)

        for acc in self.out.accesses[mark_acc:]:
            acc.offset, acc.barriers = sub(acc.offset), sub(acc.barriers)
            acc.stored = None if acc.stored is None else sub(acc.stored)
            acc.warp_barriers, acc.grid_barriers = sub(acc.warp_barriers), sub(acc.grid_barriers)
            acc.cond = z3.And(sub(acc.cond), valid)
        sites = self.out.barriers[mark_bar[0] :] + self.out.warp_barriers[mark_bar[1] :] + self.out.grid_barriers[mark_bar[2] :]
        for site in sites:
            site.barriers = sub(site.barriers)
            site.cond = z3.And(sub(site.cond), valid)
            if site.mask is not None:
                site.mask = z3.simplify(sub(site.mask))
        for facts in inner:  # loops nested in this one (also in functions it calls)
            if facts.backedge is not None:
                facts.backedge = sub(facts.backedge)
        # exits leave to blocks after the loop, or straight to an enclosing loop's head (its back-edge)
        for kind, lists in (("in", self.incoming), ("back", self.back), ("ret", {0: self.returned})):
            for key, states in lists.items():
                first = marks.get((kind, key), 0)
                states[first:] = [exit_state(s) for s in states[first:]]
        self.out.assumptions[:] = [sub(a) for a in self.out.assumptions]
        self.out.inductions[:] = [tuple(sub(t) for t in ind) for ind in self.out.inductions]
        self.out.counter_steps[:] = [tuple(sub(t) for t in step) for step in self.out.counter_steps]
        if any(substituted) and self.active_loops:
            self.out.assumptions += _exit_facts(leaving[0], leaving[1], valid, leaving[2])

    # ----------------------------------------------------------- instructions

    def _step(self, state: State, ins: Instruction) -> State:
        if id(ins) in self.grid.closings:  # every thread that entered `sync_grids` leaves it (see `grid_sync`)
            state = State(state.regs, self.grid_entry.get(self.grid.closings[id(ins)], state.cond))
        if id(ins) in self.grid.openings:
            self.grid_entry[id(ins)] = state.cond
            return self._grid_barrier(self._instruction(state, ins), ins, state.cond)
        return self._instruction(state, ins)

    def _instruction(self, state: State, ins: Instruction) -> State:
        op = ins.opcode
        guard = self._guard(state, ins) if ins.guard is not None else None
        cond = state.cond if guard is None else z3.And(state.cond, guard)
        if op in ("ld", "ldu", "st", "atom", "red"):
            return self._memory(state, ins, cond, guard)
        if op in ("bar", "barrier"):
            return self._barrier(state, ins, cond, guard)
        if op in ("membar", "fence"):
            self.out.unmodelled.add("memory fences")
            return state
        if op == "discard":  # the bytes become unspecified: a later load of them is not the contents others read
            self.out.discards = True
            return state
        if op in ("bra", "ret", "exit", "trap", "pmevent", "prefetch", "prefetchu", "nanosleep"):
            return state
        if op == "call":
            return self._call(state, ins, guard)
        if op in ("cp", "mbarrier", "wmma", "mma", "ldmatrix", "stmatrix", "sust", "suld", "tensormap", "wgmma", "mapa") or any(
            "::cluster" in m for m in ins.modifiers
        ):
            raise Unsupported(f"{ins.where()}: `{ins.text.strip()}` is not supported by verify")
        if not ins.operands:
            return state
        return self._assign(state, ins, guard)

    def _assign(self, state: State, ins: Instruction, guard) -> State:
        dest = ins.operands[0]
        srcs = ins.operands[1:]
        result = self._compute(state, ins, srcs)
        regs = dict(state.regs)
        if isinstance(dest, PredPair):
            targets = [(dest.first.name, result), (dest.second.name, None if result is None else Value(z3.Not(result.term)))]
        else:
            targets = [(name, result if len(_dest_regs(dest)) == 1 else None) for name in _dest_regs(dest)]
        for name, value in targets:
            if value is None:
                value = self._approx(name, f"result of `{ins.text.strip()}` at {ins.where()}")
            regs[name] = self._guarded(state, name, self._shape(name, value), guard)
        return State(regs, state.cond)

    def _guarded(self, state: State, name: str, value: Value, guard) -> Value:
        """What register `name` holds after an instruction under `guard` wrote `value` to it (None: unguarded)."""
        if guard is None:
            return value
        old = state.regs.get(name) or self._undefined(name)
        return merge([guard, z3.Not(guard)], [value, old], lambda: self._approx(name, "a pointer written under a guard"), self._choose)

    def _compute(self, state: State, ins: Instruction, srcs) -> Value | None:
        op = ins.opcode
        if op == "mov" and len(srcs) == 1 and not isinstance(srcs[0], Vec):
            return self._operand(state, srcs[0], ins)
        if op == "cvta":
            return self._operand(state, srcs[0], ins)
        if op == "cvt":
            return convert(ins, self._operand(state, srcs[0], ins))
        if op == "setp":
            a, b = (self._operand(state, s, ins) for s in srcs[:2])
            shape = int_type(ins)
            if shape and shape[1]:
                self.signed_operands += [a.term, b.term]
            test = compare(ins, a, b)
            if test is None:
                return None
            other = self._predicate(state, srcs[2]) if len(srcs) > 2 else None
            return Value(combine(ins, test, other))
        if op == "selp":
            a, b = (self._operand(state, s, ins) for s in srcs[:2])
            c = self._predicate(state, srcs[2])
            if z3.is_bool(a.term) or int_type(ins) is None:
                return None
            width = int_type(ins)[0]
            return merge([z3.Not(c), c], [Value(fit(b.term, width), b.base), Value(fit(a.term, width), a.base)], lambda: None, self._choose)
        if op in ("and", "or", "xor", "not") and ins.types == ("pred",):
            vals = [self._predicate(state, s) for s in srcs]
            if op == "not":
                return Value(z3.Not(vals[0]))
            return Value({"and": z3.And, "or": z3.Or, "xor": z3.Xor}[op](*vals))
        if op in ("add", "sub", "mul", "mad", "and", "or", "xor", "not", "neg", "abs", "min", "max", "shl", "shr", "div", "rem", "bfi"):
            return arith(ins, [self._operand(state, s, ins) for s in srcs])
        return None

    def _shape(self, name: str, value: Value) -> Value:
        """`value` at the width of register `name` (PTX writes narrower results zero-extended)."""
        width = self.widths.get(name)
        if width is None:
            return value if z3.is_bool(value.term) else Value(value.term != 0)
        if z3.is_bool(value.term):
            return Value(z3.If(value.term, z3.BitVecVal(1, width), z3.BitVecVal(0, width)))
        return Value(fit(value.term, width), value.base)

    def _operand(self, state: State, op, ins: Instruction) -> Value:
        if isinstance(op, Reg):
            return state.regs.get(op.name) or self._undefined(op.name, state)
        if isinstance(op, Imm):
            if op.kind != "int" and op.bits is not None:  # `0f3F800000`: exact bits; float arithmetic stays approximated
                return Value(z3.BitVecVal(op.bits, 32 if op.kind == "f32" else 64))
            if op.kind != "int":
                return self._approx("imm", f"floating-point constant at {ins.where()}")
            shape = int_type(ins)
            return Value(z3.BitVecVal(int(op.value), shape[0] if shape else 64))
        if isinstance(op, SpecialReg):
            return Value(self._special(op))
        if isinstance(op, Sym):
            return self._symbol_address(op.name, ins)
        if isinstance(op, Negated):
            return Value(z3.Not(self._predicate(state, op.reg)))
        return self._approx("operand", f"operand of `{ins.text.strip()}` at {ins.where()}")

    def _predicate(self, state: State, op) -> z3.BoolRef:
        if isinstance(op, Negated):
            return z3.Not(self._predicate(state, op.reg))
        if isinstance(op, Imm):
            return z3.BoolVal(bool(op.value))
        value = state.regs.get(op.name) or self._undefined(op.name, state)
        return value.term if z3.is_bool(value.term) else value.term != 0

    def _guard(self, state: State, ins: Instruction) -> z3.BoolRef:
        term = self._predicate(state, ins.guard.reg)
        return z3.Not(term) if ins.guard.negated else term

    def _special(self, op: SpecialReg) -> z3.ExprRef:
        name, comp = op.name, op.component
        if name in ("tid", "ctaid") and comp in DIMS:
            return self.sym.named(f"{name}.{comp}", 32, "thread")
        if name in ("ntid", "nctaid") and comp in DIMS:
            fixed = self.dims.get(f"{name}.{comp}")
            return z3.BitVecVal(fixed, 32) if fixed is not None else self.sym.named(f"{name}.{comp}", 32, "uniform")
        if name in ("envreg1", "envreg2"):  # the grid workspace's address (cooperative groups' driver ABI): grid-wide
            return self.sym.named(f"%{name}", 32, "uniform")
        if name == "laneid":
            t = [self._special(SpecialReg("tid", d)) for d in DIMS]
            n = [self._special(SpecialReg("ntid", d)) for d in DIMS]
            return (t[0] + n[0] * (t[1] + n[1] * t[2])) & 31
        return self.sym.fresh(f"%{name}", 32 if name not in ("clock64", "globaltimer", "gridid") else 64, "thread", f"special register %{name}")

    def _symbol_address(self, name: str, ins: Instruction) -> Value:
        width = 32 if ins.types and ins.types[0].endswith("32") else 64
        var = self.variables.get(name)
        if name == "WARP_SZ" and var is None:  # PTX's built-in constant: the warp size
            return Value(z3.BitVecVal(32, width))
        if var is None:
            fn = self.module.functions.get(name)
            if fn is not None and not fn.is_entry:
                return Value(fit(self._function_address(name), width))
            raise Unsupported(f"{ins.where()}: the address of `{name}` is not a variable verify knows")
        return Value(z3.BitVecVal(0, width), var.name)

    def _function_address(self, name: str) -> z3.BitVecRef:
        """A device function's address: a value shared by all threads, not null and unlike any other function's.

        Its number is left open, as the linker chooses it: a comparison of
        two function pointers (`f >= g`) can come out either way.
        """
        key = f"function {name}"
        if key not in self.sym.table:
            others = [self.sym.table[f"function {f}"].term for f in self.out.function_addresses]
            term = self.sym.named(key, 64, "uniform")
            self.out.assumptions.append(z3.Distinct(z3.BitVecVal(0, 64), *others, term))
            self.out.function_addresses.append(name)
        return self.sym.table[key].term

    def _object_for_variable(self, name: str) -> str | None:
        """The object a variable's accesses are judged on; None for thread-private (local) memory.

        Every `extern __shared__` array starts at the block's dynamic shared
        memory, whatever its name: they are all one object.
        """
        var = self.variables[name]
        if var.space == "shared" and var.count is None:
            names = sorted(variable_name(v.name) for v in self.variables.values() if v.space == "shared" and v.count is None)
            key = "extern shared"
            label = names[0] if len(names) == 1 else f"dynamic shared memory ({', '.join(names)})"
            self.out.objects.setdefault(key, ObjectInfo(key, "shared", label))
            return key
        if var.space in ("shared", "global", "const"):  # a store to __constant__ memory is an access too
            self.out.objects.setdefault(name, ObjectInfo(name, "shared" if var.space == "shared" else "global", variable_name(name)))
            return name
        return None

    # ----------------------------------------------------------------- memory

    def _memory(self, state: State, ins: Instruction, cond, guard) -> State:
        space = ins.space
        addr = next((o for o in ins.operands if isinstance(o, Addr)), None)
        if addr is None:
            raise Unsupported(f"{ins.where()}: memory operand of `{ins.text.strip()}` not understood")
        if space == "param" and ins.opcode == "st":
            return self._store_argument(state, ins, addr)
        if space == "param":
            return self._load_param(state, ins, addr, guard)
        atomic = ins.opcode in ("atom", "red") or ins.semantics in ATOMIC_SEMANTICS
        slot = self._local_slot(state, addr)
        if id(ins) in self.grid.internal and slot is None:  # the grid workspace inside `sync_grids`: not the kernel's
            return state if ins.opcode in ("st", "red") else self._clobber(state, ins, guard, f"the grid barrier's workspace at {ins.where()}")
        if ins.opcode in ("atom", "red"):
            self.out.unmodelled.add("atomics")
        elif atomic or ins.semantics == "volatile":
            self.out.unmodelled.add("strong (volatile or atomic) loads and stores")
        if slot is not None:
            return self._local_access(state, ins, slot, guard)
        if ins.opcode in ("st", "atom") and len(ins.operands) > 1:
            self._note_escape(state, ins.operands[-1], ins)
        untraced = len(self.out.unknown_pointers)
        places = self._locate(state, addr, ins)
        if ins.opcode in ("st", "atom", "red") and len(self.out.unknown_pointers) > untraced:
            state = self._havoc_local(state, f"a store through an untraced pointer at {ins.where()}")
        stored = self._stored_bits(state, ins, atomic)
        recorded = len(self.out.accesses)
        for obj, offset, chosen in places if space != "local" else ():
            size = _access_size(ins)
            scope = (ins.scope or "gpu") if atomic else None
            self.out.accesses.append(
                Access(
                    obj, fit(offset, 64, signed=True), size,
                    write=ins.opcode in ("st", "atom", "red"),
                    read=ins.opcode in ("ld", "ldu", "atom"),
                    atomic=atomic, scope=scope, volatile=ins.semantics == "volatile",
                    cond=z3.And(cond, chosen) if chosen is not None else cond,
                    barriers=state.regs[BAR].term, ins=ins, loops=tuple(self.active_loops),
                    warp_barriers=state.regs[WARP_BAR].term, grid_barriers=state.regs[GRID_BAR].term, stored=stored,
                )
            )
        if ins.opcode in ("atom", "red") and "add" in ins.modifiers and int_type(ins) is not None:
            return self._addition(state, ins, places, cond, guard)
        if ins.opcode in ("st", "red"):
            return state
        dest = ins.operands[0]
        plain = ins.opcode in ("ld", "ldu") and not atomic and ins.semantics != "volatile"
        if plain and len(self.out.accesses) == recorded + 1 and isinstance(dest, Reg) and _access_size(ins) == _scalar_size(ins):
            access = self.out.accesses[-1]
            value = self._approx(dest.name, f"loaded from memory at {ins.where()}")
            signed = bool(ins.types) and ins.types[-1].startswith("s")
            self.out.loads.append(Load(access, value.term, signed, self.out.objects[access.obj].kind == "shared"))
            return self._write_dest(state, dest, value, guard)
        why = "result of the atomic" if ins.opcode == "atom" else "loaded from memory"
        return self._clobber(state, ins, guard, f"{why} at {ins.where()}")

    def _stored_bits(self, state: State, ins: Instruction, atomic: bool) -> z3.BitVecRef | None:
        """What a plain scalar store writes, as `Access.stored` keeps it; None when that is not one known term.

        A pointer is left out: its term is an offset in its object, and two
        threads' equal offsets need not be equal addresses.
        """
        if ins.opcode != "st" or atomic or _access_size(ins) != _scalar_size(ins) or len(ins.operands) < 2:
            return None
        source = ins.operands[-1]
        if not isinstance(source, (Reg, Imm)):
            return None
        value = self._operand(state, source, ins)
        if value.base is not None or z3.is_bool(value.term):
            return None
        return fit(value.term, _access_size(ins) * 8)

    def _addition(self, state: State, ins: Instruction, places, cond, guard) -> State:
        """An integer `atom.add`/`red.add`: its result is a free value, recorded with the addition for `tickets`."""
        amount = z3.simplify(self._operand(state, ins.operands[-1], ins).term)
        addend = amount.as_long() if z3.is_bv_value(amount) else None
        result = None
        if ins.opcode == "atom" and len(_dest_regs(ins.operands[0])) != 1:
            state = self._clobber(state, ins, guard, f"result of the atomic at {ins.where()}")
        elif ins.opcode == "atom":
            (name,) = _dest_regs(ins.operands[0])
            value = self._approx(name, f"result of the atomic at {ins.where()}")
            state = self._write_dest(state, ins.operands[0], value, guard)
            result = value.term
        for obj, offset, chosen in places:
            self.out.additions.append(
                Addition(
                    obj, fit(offset, 64, signed=True), _access_size(ins), addend, ins.scope or "gpu",
                    z3.And(cond, chosen) if chosen is not None else cond, result, bool(self.active_loops),
                )
            )
        return state

    def _local_slot(self, state: State, addr: Addr):
        """(object, offset) when `addr` is in this function's thread-private memory, else None."""
        if isinstance(addr.base, Sym):
            var = self.variables.get(addr.base.name)
            return (var.name, z3.BitVecVal(addr.offset, 64)) if var is not None and var.space == "local" else None
        if addr.base is None:
            return None
        value = state.regs.get(addr.base.name)
        var = self.variables.get(value.base) if value is not None and value.base is not None else None
        if var is None or var.space != "local":
            return None
        return var.name, fit(value.term, 64) + addr.offset

    def _local_access(self, state: State, ins: Instruction, slot, guard) -> State:
        """A load or store of the thread's own local memory: kept exactly in slot pseudo-registers (`local_memory`)."""
        obj, offset = slot
        offset = z3.simplify(offset)
        start = offset.as_long() if z3.is_bv_value(offset) else None
        size = _access_size(ins)
        vector = any(m in ("v2", "v4", "v8") for m in ins.modifiers)
        if ins.opcode in ("st", "atom", "red"):
            value = None
            if ins.opcode == "st" and not vector and len(ins.operands) > 1:
                value = self._operand(state, ins.operands[-1], ins)
            state = self._local_store(state, ins, obj, start, size, value, guard)
            if ins.opcode != "atom":
                return state
        elif start is not None and not vector:
            value = self._local_load(state, obj, start, size, ins)
            if value is not None:
                return self._write_dest(state, ins.operands[0], value, guard)
        return self._clobber(state, ins, guard, f"loaded from memory at {ins.where()}")

    def _local_store(self, state: State, ins: Instruction, obj: str, start, size: int, value, guard) -> State:
        """Slots after storing `value` (None: unknown bytes) to `size` bytes at `start` (None: unknown offset)."""
        regs = dict(state.regs)
        target = slot_name(obj, start, size) if start is not None else None
        for name in overlapping(state.regs, obj, start, size):
            if name != target or value is None:
                regs[name] = self._guarded(state, name, self._approx(name, f"thread-private memory overwritten at {ins.where()}"), guard)
        if target is not None and value is not None:
            self.widths[target] = size * 8
            if value.base is not None and size != 8 or z3.is_bool(value.term):
                value = self._approx(target, f"stored to thread-private memory at {ins.where()}")
            elif value.base is None:
                value = Value(fit(value.term, size * 8))
            regs[target] = self._guarded(state, target, value, guard)
        return State(regs, state.cond)

    def _local_load(self, state: State, obj: str, start: int, size: int, ins: Instruction) -> Value | None:
        """The value of a slot holding bytes `start .. start + size` (a part of a wider slot too), or None."""
        exact = state.regs.get(slot_name(obj, start, size))
        if exact is not None:
            value = exact
        else:
            value = None
            for name in overlapping(state.regs, obj, start, size):
                _, at, width = parse_slot(name)
                whole = state.regs[name]
                if at <= start and start + size <= at + width and whole.base is None:
                    lo = (start - at) * 8
                    value = Value(z3.Extract(lo + size * 8 - 1, lo, whole.term))
            if value is None:
                return None
        kind = ins.types[-1] if ins.types else ""
        dest = ins.operands[0]
        width = self.widths.get(dest.name) if isinstance(dest, Reg) else None
        if kind.startswith("s") and value.base is None and width and width > size * 8:
            value = Value(z3.SignExt(width - size * 8, value.term))  # `ld.s8` into a wider register sign-extends
        return value

    def _note_escape(self, state: State, operand, ins: Instruction) -> None:
        """Storing the address of local memory to other memory loses track of it: calls then clobber the slots."""
        if isinstance(operand, Reg):
            value = state.regs.get(operand.name)
            var = self.variables.get(value.base) if value is not None and value.base is not None else None
            if var is not None and var.space == "local":
                self.out.local_escaped = True

    def _havoc_local(self, state: State, reason: str) -> State:
        """Every slot made an approximated value: something may have written any of them."""
        names = [n for n in state.regs if n.startswith(LOCAL)]
        if not names:
            return state
        regs = dict(state.regs)
        for name in names:
            regs[name] = self._approx(name, reason)
        return State(regs, state.cond)

    def _locate(self, state: State, addr: Addr, ins: Instruction) -> list[tuple[str, z3.BitVecRef, z3.BoolRef | None]]:
        """The (object, offset, condition) places an address operand points to; none for thread-private memory.

        A pointer that selects its object (`Exploration.choices`) gives each
        of its objects, under the condition that it is that one's (None:
        always). An address the analysis cannot trace to one object is
        noted: it may touch any object of its space, so those objects cannot
        be proved.
        """
        if isinstance(addr.base, Sym):
            var = self.variables.get(addr.base.name)
            if var is None:
                self.out.unknown_pointers.append(ins)
                return []
            obj = self._object_for_variable(var.name)
            return [] if obj is None else [(obj, z3.BitVecVal(addr.offset, 64), None)]
        if addr.base is None:
            self.out.unknown_pointers.append(ins)
            return []
        value = state.regs.get(addr.base.name) or self._undefined(addr.base.name, state)
        if value.base is None:
            self.out.unknown_pointers.append(ins)
            return []
        term = value.term + z3.BitVecVal(addr.offset, value.term.size())
        members = self.out.choices.get(value.base, ((value.base, None),))
        places = []
        for obj, chosen in members:
            if obj in self.variables:
                obj = self._object_for_variable(obj)
                if obj is None:
                    continue
            if obj in self.pointer_params:
                self.out.objects.setdefault(obj, self.pointer_params[obj])
            places.append((obj, term, chosen))
        return places

    def _choose(self, members: list[tuple[z3.BoolRef, str]]) -> str | None:
        """A pointer that is each object's under its condition (`Exploration.choices`); None when one is thread-private.

        The thread's own (local) memory is kept in slots that an access
        through a selecting pointer would have to update under a condition,
        which they do not model: such merges stay approximations.
        """
        conds: dict[str, list[z3.BoolRef]] = {}
        for cond, base in members:
            for obj, inner in self.out.choices.get(base, ((base, None),)):
                var = self.variables.get(obj)
                if var is not None and var.space == "local":
                    return None
                conds.setdefault(obj, []).append(cond if inner is None else z3.And(cond, inner))
        return self._new_choice(tuple((obj, z3.Or(*cs) if len(cs) > 1 else cs[0]) for obj, cs in conds.items()))

    def _rechoose(self, base: str | None, sub) -> str | None:
        """`base` after a loop's symbols are substituted (`_rewrite`): a selecting pointer's conditions change too."""
        if base not in self.out.choices:
            return base
        members = tuple((obj, sub(cond)) for obj, cond in self.out.choices[base])
        if all(new.eq(old) for (_, new), (_, old) in zip(members, self.out.choices[base])):
            return base
        return self._new_choice(members)

    def _new_choice(self, members: tuple[tuple[str, z3.BoolRef], ...]) -> str:
        """A new name for a pointer that selects among `members` (object, condition), recorded in `choices`."""
        name = f"choice#{len(self.out.choices) + 1}"
        self.out.choices[name] = members
        return name

    def _load_param(self, state: State, ins: Instruction, addr: Addr, guard) -> State:
        """`ld.param`: a kernel parameter, an argument of this call, or a called function's result.

        A vector load (`ld.param.v2.u32 {%r1, %r2}`, two fields of a struct)
        gives each register its own bytes.
        """
        dest = ins.operands[0]
        if isinstance(dest, Vec):
            size = type_size(ins.types[-1]) if ins.types else 4
            for i, elem in enumerate(dest.elems):
                if isinstance(elem, Reg):
                    value = self._param_bytes(state, ins, addr, addr.offset + i * size, size, scalar=False)
                    state = self._write_dest(state, elem, value, guard)
            return state
        return self._write_dest(state, dest, self._param_bytes(state, ins, addr, addr.offset, _access_size(ins), scalar=True), guard)

    def _param_bytes(self, state: State, ins: Instruction, addr: Addr, offset: int, size: int, *, scalar: bool) -> Value:
        """The `size` bytes at `offset` of the parameter space variable `addr` names.

        Eight bytes loaded alone from a struct passed by value are taken as a
        pointer field (`scalar`); parts of a vector load are plain values.
        """
        name = addr.base.name if isinstance(addr.base, Sym) else None
        passed = self.bound.get(name) if self.bound else None
        if passed is None and name is not None:
            passed = state.regs.get(ARG + name)  # a called function's result (`ld.param [retval0]`)
        if passed is not None:
            return self._slice(passed, offset, size, ins)
        if name not in self.params or self.bound:
            return Value(self.sym.fresh("param", size * 8, "thread", f"loaded from a parameter at {ins.where()}"))
        index, param = self.params[name]
        info = self.info.params[index] if index < len(self.info.params) else None
        label = (info.cpp_name or info.name) if info else name
        if info is not None and info.is_pointer and offset == 0 and size == 8:
            obj = f"param:{name}"
            self.pointer_params[obj] = ObjectInfo(obj, "param", label)
            return Value(z3.BitVecVal(0, 64), obj)
        if scalar and param.dims and size == 8 and offset % 8 == 0 and (info is None or not info.is_pointer):
            obj = f"param:{name}+{offset}"  # a pointer field of a struct passed by value, taken as one
            self.pointer_params[obj] = ObjectInfo(obj, "param", f"{label} (bytes {offset}..{offset + 7})")
            return Value(z3.BitVecVal(0, 64), obj)
        whole = self._param_symbol(label, param.size)
        lo = offset * 8
        if lo >= param.size * 8:
            return Value(self.sym.fresh("param", size * 8, "thread", f"loaded past the end of a parameter at {ins.where()}"))
        return Value(z3.Extract(min(lo + size * 8, param.size * 8) - 1, lo, whole))

    def _slice(self, value: Value, offset: int, size: int, ins: Instruction) -> Value:
        """`size` bytes at `offset` of an argument; approximated where the argument's known bytes end."""
        width = 1 if z3.is_bool(value.term) else value.term.size()
        if offset == 0 and size * 8 >= width:
            return value
        if z3.is_bool(value.term) or (offset + size) * 8 > width or value.base:
            return self._approx("arg", f"part of an argument at {ins.where()}")
        return Value(z3.Extract(offset * 8 + size * 8 - 1, offset * 8, value.term))

    def _clobber(self, state: State, ins: Instruction, guard, reason: str) -> State:
        regs = dict(state.regs)
        for name in _dest_regs(ins.operands[0]):
            regs[name] = self._guarded(state, name, self._approx(name, reason), guard)
        return State(regs, state.cond)

    def _write_dest(self, state: State, dest, value: Value, guard) -> State:
        regs = dict(state.regs)
        for name in _dest_regs(dest):
            regs[name] = self._guarded(state, name, self._shape(name, value), guard)
        return State(regs, state.cond)

    # --------------------------------------------------------------- barriers

    def _barrier(self, state: State, ins: Instruction, cond, guard) -> State:
        """`bar.sync 0` (`__syncthreads`) and `bar.red` (`__syncthreads_count/and/or`) end a barrier interval.

        Named barriers, thread counts and split arrive/wait need the
        participating threads, which the verifier does not model: unknown.
        """
        if ins.has("warp"):
            return self._warp_barrier(state, ins, cond, guard)
        reduction = ins.has("red")
        operands = ins.operands[1:] if reduction else ins.operands  # bar.red: destination, id[, count], predicate
        counted = len(operands) > (2 if reduction else 1)
        ident = operands[0] if operands else None
        if ins.has("arrive") or counted or not self._is_barrier_zero(state, ident, ins):
            raise Unsupported(f"{ins.where()}: `{ins.text.strip()}` (named, counted or split barriers) is not supported by verify")
        count = state.regs[BAR].term
        # A barrier without a source line (`__barrier_sync`'s, a builtin that -G leaves a function) is shown at its call.
        shown = ins if ins.loc is not None else next((c for c in reversed(self.call_sites) if c.loc is not None), ins)
        self.out.barriers.append(BarrierSite(shown, cond, count, tuple(self.active_loops)))
        regs = dict(state.regs)
        step = count + 1 if guard is None else z3.If(guard, count + 1, count)
        regs[BAR] = Value(step)
        state = State(regs, state.cond)
        if reduction:
            state = self._clobber(state, ins, guard, f"result of the barrier reduction at {ins.where()}")
        return state

    def _warp_barrier(self, state: State, ins: Instruction, cond, guard) -> State:
        """`bar.warp.sync mask` (`__syncwarp(mask)`): counted in `WARP_BAR`, its mask recorded.

        Whether the counts may order two lanes' accesses (every lane of the
        mask reaching each warp barrier together, the masks constant) is the
        queries' to decide (`verdicts`); here it is only recorded.
        """
        operand = ins.operands[0] if ins.operands else None
        if operand is None or len(ins.operands) > 1:
            raise Unsupported(f"{ins.where()}: `{ins.text.strip()}` is not a warp barrier verify understands")
        mask = fit(self._operand(state, operand, ins).term, 32) if not isinstance(operand, Imm) else z3.BitVecVal(int(operand.value) & 0xFFFFFFFF, 32)
        count = state.regs[WARP_BAR].term
        self.out.warp_barriers.append(BarrierSite(self._user_site(ins), cond, count, tuple(self.active_loops), z3.simplify(mask)))
        regs = dict(state.regs)
        regs[WARP_BAR] = Value(count + 1 if guard is None else z3.If(guard, count + 1, count))
        return State(regs, state.cond)

    def _grid_barrier(self, state: State, ins: Instruction, cond) -> State:
        """The block barrier that opens a `sync_grids` region is also a barrier of the whole grid: counted in
        `GRID_BAR` (after the block barrier itself, which counts in `BAR` as any other)."""
        count = state.regs[GRID_BAR].term
        self.out.grid_barriers.append(BarrierSite(self._user_site(ins), cond, count, tuple(self.active_loops)))
        regs = dict(state.regs)
        regs[GRID_BAR] = Value(count + 1)
        return State(regs, state.cond)

    def _user_site(self, ins: Instruction) -> Instruction:
        """The instruction a report shows for `ins`: itself when its line is the user's; when it is in a library
        header, the last instruction before it at a line of the user's (a header's code inlined without
        inlining information, as under -G), else the innermost call from the user's code that leads to it."""
        def in_user_code(i: Instruction) -> bool:
            return i.loc is not None and not is_library_file(user_frame(i.loc).file)

        if in_user_code(ins):
            return ins
        at = next(i for i, other in enumerate(self.fn.body) if other is ins)
        before = (i for i in reversed(self.fn.body[:at]) if in_user_code(i))
        return next(before, None) or next((c for c in reversed(self.call_sites) if in_user_code(c)), ins)

    def _is_barrier_zero(self, state: State, ident, ins: Instruction) -> bool:
        """True when a barrier's id is 0 in every thread: `bar.sync 0`, or a register holding the constant 0, as in
        `__barrier_sync(0)` (what cooperative groups' `thread_block::sync()` calls) compiled without inlining (-G)."""
        if isinstance(ident, Imm):
            return ident.value == 0
        if not isinstance(ident, Reg):
            return False
        term = z3.simplify(self._operand(state, ident, ins).term)
        return z3.is_bv_value(term) and term.as_long() == 0

    # ------------------------------------------------------------------ calls

    def _store_argument(self, state: State, ins: Instruction, addr: Addr) -> State:
        """`st.param [param0], %r` before a call (or `[func_retval0]` before a return): a pseudo-register.

        The bytes from offset 0 are kept, and a struct argument built field by
        field in order (`[param1+0]`, `[param1+4]`, `[param1+8]`: a `dim3`
        passed by value under -G) grows by each field that starts where the
        kept bytes end. Any other store at another offset drops the argument,
        which is then approximated where it is read beyond what was kept; a
        pointer field is never kept.
        """
        if not isinstance(addr.base, Sym) or len(ins.operands) < 2:
            return state
        if addr.offset != 0:
            self._note_escape(state, ins.operands[1], ins)  # a field of a struct argument: not passed on
        regs = dict(state.regs)
        key = ARG + addr.base.name
        if addr.offset == 0:
            regs[key] = self._operand(state, ins.operands[1], ins)
            return State(regs, state.cond)
        kept = regs.pop(key, None)
        if kept is not None and isinstance(ins.operands[1], (Reg, Imm)):
            field = self._operand(state, ins.operands[1], ins)
            if _appends(kept, field, addr.offset, _access_size(ins)):
                regs[key] = Value(z3.Concat(field.term, kept.term))
        return State(regs, state.cond)

    def _call(self, state: State, ins: Instruction, guard) -> State:
        """A call: a device function nvcc did not inline (as under `-G`) is executed in place.

        `__requires(e)` (`__gpurace_requires`) in the kernel and `__assume(e)`
        anywhere assume `e` wherever the thread reaches them (`_assume`); a
        `__requires` in a device function is ignored (it is the callers' to meet). `printf`, `__assert` and `assert`
        change nothing verify reasons about (asserts are not proved here); a
        verifier-only predicate's result is approximated. A call through a function pointer runs every function of
        the file the pointer can be (`_indirect_call`). Recursion, other
        indirect calls and functions only declared (defined in another file)
        are unsupported.
        """
        callee = next((o.name for o in ins.operands if isinstance(o, Sym)), None)
        lists = [o.items for o in ins.operands if isinstance(o, ParamList)]
        results, args = (lists[0], lists[1]) if len(lists) == 2 else ((), lists[0] if lists else ())
        target = next((o for o in ins.operands if isinstance(o, Reg)), None)
        if target is not None:
            return self._indirect_call(state, ins, guard, target, results, args)
        if callee in ("vprintf", "__gpurace_assert", "__assertfail"):
            return state  # `assert` failing ends the kernel: carrying on only adds accesses it never makes
        if callee == "__gpurace_requires" and len(self.calls) > 1:
            return state  # a device function's precondition is its callers' to meet, and verify does not prove it
        if callee in ("__gpurace_requires", "__gpurace_assume"):
            return self._assume(state, ins, guard, args, callee.removeprefix("__gpurace_"))
        if callee and callee.startswith("__gpurace_verifier_only_"):
            return state  # its result is read back with `ld.param [retval0]`, which approximates it
        fn = self.module.functions.get(callee or "")
        if fn is None:
            raise Unsupported(f"{ins.where()}: {_bodiless(callee)}")
        if fn.is_declaration:
            return self._bodiless_call(state, ins, fn, results, args)
        if guard is not None:
            raise Unsupported(f"{ins.where()}: a call under a guard is not supported by verify")
        return self._run_callee(state, ins, fn, results, args, state.cond)

    def _assume(self, state: State, ins: Instruction, guard, args, annotation: str) -> State:
        """Assume the annotation's condition for the thread that reaches it, in the iteration it reaches it.

        Each thread copy of a query gets it for its own values, at the loop
        iterations the query picks for it: never more than the user stated.
        An `__assume` in a loop (or on approximated values) holds in the
        witness's iterations but not necessarily in the others the witness
        runs through, so it keeps alarms from being certain (`verdicts`).
        """
        holds = state.regs.get(ARG + args[0].name) if args and isinstance(args[0], Sym) else None
        if holds is None:
            raise Unsupported(f"{ins.where()}: the condition of `__{annotation}` could not be read")
        reached = state.cond if guard is None else z3.And(state.cond, guard)
        if annotation == "assume":
            self.out.user_assumptions.append((len(self.out.assumptions), ins.where(), bool(self.active_loops)))
        self.out.assumptions.append(z3.Implies(reached, fit(holds.term, 32) != 0))
        return state

    def _bodiless_call(self, state: State, ins: Instruction, fn: Function, results, args) -> State:
        """A call to a function declared without a body, read as GPUVerify reads it: its results are free values.

        Defined in another file (or nowhere), what it does is not in the
        PTX. A function given no pointer cannot reach the kernel's memory but
        by other means (a `__device__` variable of this file, or a pointer
        kept in memory, that another file names), nor may it pass a barrier
        without making the call a barrier of its own; verify assumes it does
        neither, as GPUVerify does, and the report states the assumption
        (`Exploration.assumed`). Its results are free values, labelled, and
        the alarms of the kernel stay possible (it may synchronise). A
        function that may be given a pointer (`_pointer_parameter`) may
        write anything it reaches, and the kernel is unknown.
        """
        why = _pointer_parameter(fn)
        for a in args:
            passed = state.regs.get(ARG + a.name) if isinstance(a, Sym) else None
            if why is None and passed is not None and passed.base is not None:
                why = "it is passed an address"
        if why is not None:
            raise Unsupported(f"{ins.where()}: {_bodiless(fn.name)} ({why})")
        name = _signature_text(fn.name)
        self.out.assumed.setdefault(
            name,
            f"assumed, as GPUVerify does: `{name}`, declared without a body (first called at {ins.where()}), returns "
            "any value, touches no memory of the kernel's and passes no barrier",
        )
        self.out.unmodelled.add("calls to functions declared without a body")
        regs = {n: v for n, v in state.regs.items() if not n.startswith(ARG)}
        for ret, res in zip(fn.returns, results):
            if isinstance(res, Sym):
                reason = f"result of `{name}` (declared without a body) at {ins.where()}"
                regs[ARG + res.name] = Value(self.sym.fresh(f"result.{res.name}", ret.size * 8, "thread", reason))
        after = State(regs, state.cond)
        if self.out.local_escaped:
            after = self._havoc_local(after, f"thread-private memory the call at {ins.where()} can reach")
        return after

    def _run_callee(self, state: State, ins: Instruction, fn: Function, results, args, cond: z3.BoolRef) -> State:
        """Execute `fn`'s body for the thread reaching the call under `cond`; the caller's state after it."""
        if fn.name in self.calls or len(self.calls) > CALL_DEPTH:
            raise Unsupported(f"{ins.where()}: recursion (`{fn.name}`) is not supported by verify")
        bound = {p.name: state.regs[ARG + a.name] for p, a in zip(fn.params, args) if isinstance(a, Sym) and ARG + a.name in state.regs}
        callee_run = Explorer(self.module, fn, self.info, self.dims, self.sym, caller=self, bound=bound, site=ins)
        slots = {n: v for n, v in state.regs.items() if n.startswith(LOCAL)}  # the callee may write them through pointers
        after = callee_run.execute(State({**{c: state.regs[c] for c in COUNTERS}, **slots}, cond))
        regs = {n: v for n, v in state.regs.items() if not n.startswith(ARG)}
        regs.update({c: after.regs[c] for c in COUNTERS})
        for name, value in after.regs.items():
            slot = parse_slot(name)
            if slot is not None and slot[0] in self.variables and self.variables[slot[0]].space == "local":
                regs[name] = value
                self.widths[name] = slot[2] * 8
        for ret, name in zip(fn.returns, results):
            if isinstance(name, Sym) and ARG + ret.name in after.regs:
                regs[ARG + name.name] = after.regs[ARG + ret.name]
        after_call = State(regs, after.cond)
        if self.out.local_escaped:
            after_call = self._havoc_local(after_call, f"thread-private memory the call at {ins.where()} can reach")
        return after_call

    def _indirect_call(self, state: State, ins: Instruction, guard, target: Reg, results, args) -> State:
        """`call (ret), %rd, (args), prototype`: a call through a function pointer.

        The pointer must be proved (under the call's condition and the
        kernel's assumptions, such as `__requires(f == g | f == h)`) to hold
        the address of a device function of this file whose address the
        kernel takes; each such function that it can be is then executed
        under the condition that the pointer holds its address, and the paths
        are merged. A pointer that may hold anything else (a function of
        another file, say) leaves the kernel unknown.
        """
        if guard is not None:
            raise Unsupported(f"{ins.where()}: a call under a guard is not supported by verify")
        pointer = self._operand(state, target, ins)
        if pointer.base is not None or z3.is_bool(pointer.term):
            raise Unsupported(f"{ins.where()}: a call through `{target.name}`, which does not hold a function's address, is not supported by verify")
        address = fit(pointer.term, 64)
        known = [
            (fn, self.sym.table[f"function {name}"].term)
            for name in self.out.function_addresses
            if len((fn := self.module.functions[name]).params) == len(args) and len(fn.returns) == len(results)
        ]

        def possible(extra: z3.BoolRef) -> z3.CheckSatResult:
            solver = budgeted_solver("QF_BV", HELPER_RLIMIT)
            solver.add(*self.out.assumptions, state.cond, extra)
            return solver.check()

        if possible(z3.And(*[address != a for _, a in known])) != z3.unsat:
            raise Unsupported(
                f"{ins.where()}: a call through a function pointer that verify cannot prove to hold the address "
                "of a function defined in this file (state which ones with `__requires`) is not supported"
            )
        ends = [
            self._run_callee(state, ins, fn, results, args, z3.And(state.cond, address == a))
            for fn, a in known
            if possible(address == a) != z3.unsat
        ]
        return self._merge(ends)

    # ---------------------------------------------------------------- helpers

    def _approx(self, name: str, reason: str) -> Value:
        return Value(self.sym.fresh(name.lstrip("%"), self.widths.get(name, 64), "thread", reason))

    def _undefined(self, name: str, state: State | None = None) -> Value:
        value = self._approx(name, f"register {name} read before it is written")
        if state is not None:
            state.regs[name] = value
        return value

    def _where(self, block: int) -> str:
        b = self.cfg.blocks[block]
        for ins in self.fn.body[b.start : b.end] or self.fn.body[-1:]:
            return ins.where()
        return self.fn.name


def _join_condition(conds: list[z3.BoolRef]) -> z3.BoolRef:
    """The condition of reaching a join: `c` itself where the two sides of one branch on `c` meet again.

    Without this, `And(c, g) | And(c, !g)` would name `g`'s symbols, and a
    branch on a value loaded in a loop (the `e ? 1 : 0` of an annotation
    compiled without optimisation) would make the loop's iterations inexact.
    """
    if len(conds) == 2 and all(z3.is_and(c) and c.num_args() == 2 for c in conds):
        (c1, g1), (c2, g2) = (c.children() for c in conds)
        if c1.eq(c2) and (z3.is_not(g2) and g2.arg(0).eq(g1) or z3.is_not(g1) and g1.arg(0).eq(g2)):
            return c1
    return z3.Or(*conds)


def _reads(ins: Instruction) -> list[str]:
    """Registers `ins` reads: its sources, the base of a store's address, its guard."""
    ops = ins.operands[1:] if _destinations(ins) else ins.operands
    out = [ins.guard.reg.name] if ins.guard is not None else []
    stack = list(ops)
    while stack:
        op = stack.pop()
        if isinstance(op, Reg):
            out.append(op.name)
        elif isinstance(op, Negated):
            out.append(op.reg.name)
        elif isinstance(op, Addr) and isinstance(op.base, Reg):
            out.append(op.base.name)
        elif isinstance(op, Vec):
            stack.extend(op.elems)
    return out


def _destinations(ins: Instruction) -> list[str]:
    """Registers `ins` writes (when its guard lets it): the first operand, for instructions that have a result."""
    if not ins.operands or ins.opcode in ("st", "red", "bra", "ret", "exit", "call"):
        return []
    if ins.opcode in ("bar", "barrier") and not ins.has("red"):
        return []
    return _dest_regs(ins.operands[0])


def _writes(ins: Instruction) -> list[str]:
    """Registers `ins` certainly writes (a guarded instruction may not)."""
    return [] if ins.guard is not None else _destinations(ins)


def _appends(kept: Value, field: Value, offset: int, size: int) -> bool:
    """True when `field`, `size` bytes stored at `offset`, continues the plain bytes `kept` of an argument."""
    plain = kept.base is None and field.base is None and not z3.is_bool(kept.term) and not z3.is_bool(field.term)
    return plain and kept.term.size() == offset * 8 and field.term.size() == size * 8


def _bodiless(callee: str | None) -> str:
    """Why a call to a function declared without a body that may be given a pointer stops verify.

    Defined in another file, it may write whatever memory the pointer
    reaches, anywhere in it; that cannot be assumed away (`_bodiless_call`).
    """
    return (
        f"a call to `{_signature_text(callee or '?')}`, declared in this file but defined in none verify reads: what it "
        "reads, writes and synchronises is unknown, so nothing about the kernel is proved"
    )


def _signature_text(symbol: str) -> str:
    sig = demangle_signature(symbol)
    return sig.name + (f"({', '.join(sig.param_types)})" if sig.param_types is not None else "")


ARITHMETIC = re.compile(r"((un)?signed |const )*(bool|char|short|int|long|long long|float|double|__half|half)( int)?")
"""C++ parameter types that are plain numbers (after `demangle_signature`'s normalisation)."""


def _pointer_parameter(fn: Function) -> str | None:
    """Why a function declared without a body may be given an address through its parameters; None if it cannot.

    A parameter of 32 bits or less, or a number by the C++ signature, holds
    no generic address; nor does a struct passed by value aligned below 8
    bytes, since a pointer member would align it to 8. Anything else (a
    64-bit value of a function with C linkage, a struct that may hold a
    pointer) may be one.
    """
    types = demangle_signature(fn.name).param_types
    for i, param in enumerate(fn.params):
        declared = types[i] if types is not None and i < len(types) else None
        if param.dims:
            if (param.align or type_size(param.ptx_type)) >= 8:
                return f"its parameter {i + 1} is a struct that may hold a pointer"
        elif type_size(param.ptx_type) >= 8 and not (declared and ARITHMETIC.fullmatch(declared)):
            return f"its parameter {i + 1} may be a pointer"
    return None


def _dest_regs(op) -> list[str]:
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, PredPair):
        return [op.first.name, op.second.name]
    if isinstance(op, Vec):
        return [e.name for e in op.elems if isinstance(e, Reg)]
    return []  # `_`, or no register


def _access_size(ins: Instruction) -> int:
    lanes = next((int(m[1:]) for m in ins.modifiers if m in ("v2", "v4", "v8")), 1)
    return lanes * _scalar_size(ins)


def _scalar_size(ins: Instruction) -> int:
    """The bytes of one element of a memory instruction (of a vector access, one lane)."""
    types = ins.types
    return type_size(types[-1]) if types else 4


def _no_signed_wrap(start, step, counter, width: int) -> z3.BoolRef:
    """`start + j*step` stays within the signed range for every iteration j up to `counter`."""
    wide = 2 * width + 2
    k = fit(counter, width)
    value = fit(start, wide, True) + fit(k, wide) * fit(step, wide, True)
    low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    return z3.And(z3.ULT(counter, 1 << width), value >= low, value <= high)


BOUNDS = (z3.ULE, z3.UGE, lambda a, b: a <= b, lambda a, b: a >= b)
"""Candidate loop invariants relating a register to its value on entry: never above (below) it, unsigned or signed."""


def _bounds(head, start, following) -> list:
    """The BOUNDS that are inductive for a loop register: if `head` satisfies one, so does its next value.

    `following` is the next value in terms of `head` and anything else the
    iteration reads (all left free), so a proof holds in every iteration: a
    register that only shrinks (`s >>= 1`) stays below its entry value.
    """
    out = []
    for bound in BOUNDS:
        solver = budgeted_solver("QF_BV", HELPER_RLIMIT)
        solver.add(bound(head, start), z3.Not(bound(fit(following, head.size()), start)))
        if solver.check() == z3.unsat:
            out.append(bound)
    return out


def _exit_facts(counter, back_cond, valid, leaves) -> list[z3.BoolRef]:
    """What defines `leaves`, the iteration in which a monotone loop's back-edge test first fails
    (`Explorer._exit_iteration`): that test fails there and held in every iteration before (else it never fails,
    and `leaves` is 2^64 - 1); so a thread in iteration `counter` is there at the latest."""
    def at(term, value):
        return z3.substitute(term, (counter, value))

    never = z3.BitVecVal((1 << 64) - 1, 64)
    defined = z3.Or(z3.And(z3.Not(at(back_cond, leaves)), at(valid, leaves)), z3.And(leaves == never, at(back_cond, never)))
    return [defined, z3.Implies(valid, z3.ULE(counter, leaves))]


def _implies_not(cond: z3.BoolRef, test: z3.BoolRef) -> bool:
    """Whether `cond` proves `test` false (within the small questions' budget)."""
    solver = budgeted_solver(None, HELPER_RLIMIT)
    solver.add(cond, test)
    return solver.check() == z3.unsat


def _no_unsigned_wrap(start, step, counter) -> z3.BoolRef:
    """`start + counter*step`, all 64-bit, does not exceed 2^64 - 1."""
    wide = 130
    value = fit(start, wide) + fit(counter, wide) * fit(step, wide)
    return z3.ULT(value, 1 << 64)


