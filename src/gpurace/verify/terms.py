"""The symbolic values the verifier computes with: z3 terms, and what each free symbol stands for.

A register holds a `Value`: a z3 term (a bit-vector of the register's width,
or a Boolean for predicates) and, for a pointer, the memory object it points
into. A pointer's term is its byte offset from the start of that object, so
two accesses overlap exactly when their offsets do; the objects themselves
(pointer parameters, shared arrays, `__device__` variables) are taken not to
overlap each other, as GPUVerify and Faial take them.

Every free symbol is registered in a `Symbols` table with its kind:
`thread` symbols (thread and block indices, loop counters, approximated
values) take a separate copy for each of the two threads of a race query,
`uniform` ones (parameters, launch dimensions) are shared by both. An
approximated value also carries the reason it is approximated ("loaded from
memory at k.cu:12"), which is what the report's labels name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import z3


@dataclass(frozen=True)
class Value:
    """A register's content: `term`, and for a pointer the object (`base`) whose offset `term` is."""

    term: z3.ExprRef
    base: str | None = None


@dataclass
class Symbol:
    """A free symbol: `kind` is "thread" or "uniform"; `reason` is set for approximated values."""

    term: z3.ExprRef
    kind: str
    reason: str | None = None
    loop: int | None = None


@dataclass
class Symbols:
    """All free symbols of one kernel's analysis, by name."""

    table: dict[str, Symbol] = field(default_factory=dict)
    _serial: int = 0

    def fresh(self, stem: str, width: int | None, kind: str, reason: str | None = None, loop: int | None = None):
        """A new symbol (a Boolean when `width` is None) named after `stem`, unique in this table."""
        self._serial += 1
        name = f"{stem}#{self._serial}"
        term = z3.Bool(name) if width is None else z3.BitVec(name, width)
        self.table[name] = Symbol(term, kind, reason, loop)
        return term

    def function(self, stem: str, width: int, reason: str, loop: int) -> z3.FuncDeclRef:
        """A new uniform function of a loop counter: a value every thread has at the same iteration."""
        self._serial += 1
        name = f"{stem}#{self._serial}"
        decl = z3.Function(name, z3.BitVecSort(64), z3.BitVecSort(width))
        self.table[name] = Symbol(decl(z3.BitVecVal(0, 64)), "uniform", reason, loop)
        return decl

    def determined(self, stem: str, args: list[z3.ExprRef], loop: int) -> z3.ExprRef:
        """A 64-bit value that every thread computes alike from `args` (an uninterpreted function of them, applied):
        not approximated, just left for the solver to relate through the facts that define it."""
        self._serial += 1
        name = f"{stem}#{self._serial}"
        decl = z3.Function(name, *[a.sort() for a in args], z3.BitVecSort(64))
        self.table[name] = Symbol(decl(*args), "uniform", None, loop)
        return decl(*args)

    def named(self, name: str, width: int, kind: str):
        """The symbol called `name` (a launch dimension, a parameter), made on first use."""
        if name not in self.table:
            self.table[name] = Symbol(z3.BitVec(name, width), kind)
        return self.table[name].term

    def of(self, term: z3.ExprRef) -> Symbol | None:
        return self.table.get(term.decl().name())

    def thread_copies(self, suffix: str) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """Substitution pairs giving every thread symbol its copy for the thread `suffix` names."""
        out = []
        for name, sym in self.table.items():
            if sym.kind == "thread":
                copy = z3.Bool(name + suffix) if z3.is_bool(sym.term) else z3.BitVec(name + suffix, sym.term.size())
                out.append((sym.term, copy))
        return out


def free_symbols(term: z3.ExprRef, cache: dict[int, frozenset[str]] | None = None) -> frozenset[str]:
    """Names of the uninterpreted constants and functions in `term` (memoised: ite-merging makes large DAGs)."""
    cache = {} if cache is None else cache
    stack = [term]
    while stack:
        t = stack[-1]
        key = t.get_id()
        if key in cache:
            stack.pop()
            continue
        if z3.is_const(t):
            cache[key] = frozenset() if z3.is_bv_value(t) or z3.is_true(t) or z3.is_false(t) else frozenset({t.decl().name()})
            stack.pop()
            continue
        kids = t.children()
        own = frozenset({t.decl().name()}) if t.decl().kind() == z3.Z3_OP_UNINTERPRETED else frozenset()
        pending = [c for c in kids if c.get_id() not in cache]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        out = own
        for c in kids:
            out |= cache[c.get_id()]
        cache[key] = out
    return cache[term.get_id()]


HELPER_RLIMIT = 5_000_000
"""The resource budget of the small questions asked while exploring (a loop's bounds, its monotony): a few seconds."""


def budgeted_solver(logic: str | None, rlimit: int) -> z3.Solver:
    """A z3 solver for `logic` (None: z3's default, which handles quantifiers) that gives up after `rlimit` units
    of work.

    A resource limit, unlike a time limit, ends at the same point on every
    machine and under any load, so that what verify proves does not depend
    on how busy the machine was.
    """
    solver = z3.SolverFor(logic) if logic is not None else z3.Solver()
    solver.set("rlimit", rlimit)
    return solver


def constants(term: z3.ExprRef) -> list[z3.ExprRef]:
    """The uninterpreted constants of `term`."""
    out, seen, stack = [], set(), [term]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(t)
        stack.extend(t.children())
    return out


def fit(term: z3.ExprRef, width: int, signed: bool = False) -> z3.ExprRef:
    """`term` made `width` bits wide: truncated, or extended (sign-extended when `signed`)."""
    have = term.size()
    if have == width:
        return term
    if have > width:
        return z3.Extract(width - 1, 0, term)
    return z3.SignExt(width - have, term) if signed else z3.ZeroExt(width - have, term)


def merge(conds: list[z3.BoolRef], values: list[Value], havoc, choose=None) -> Value:
    """The value that is `values[i]` where `conds[i]` holds (the first condition's value where none does).

    Values of different widths cannot be merged into one term, and neither
    can pointers into different objects unless `choose` makes them one
    pointer that selects its object (it is given each object with the
    condition under which the merged value is that object's pointer, and
    returns the name of the selection, or None to refuse): otherwise
    `havoc()` makes the approximation that stands for them.
    """
    first = values[0]
    if all(v.term.eq(first.term) and v.base == first.base for v in values[1:]):
        return first
    bases = [v.base for v in values]
    kinds = {(z3.is_bool(v.term), None if z3.is_bool(v.term) else v.term.size()) for v in values}
    if len(kinds) != 1:
        return havoc()
    base = first.base
    if len(set(bases)) != 1:
        if choose is None or None in bases or z3.is_bool(first.term):
            return havoc()
        base = choose(list(zip(_selectors(conds), bases)))
        if base is None:
            return havoc()
    term = values[0].term
    for cond, v in zip(conds[1:], values[1:]):
        term = z3.If(cond, v.term, term)
    return Value(term, base)


def _selectors(conds: list[z3.BoolRef]) -> list[z3.BoolRef]:
    """For each value `merge` combines, the condition under which its term is the merged one (later ones win)."""
    out = []
    for i, cond in enumerate(conds):
        later = [z3.Not(c) for c in conds[i + 1 :]]
        own = [] if i == 0 else [cond]
        out.append(z3.And(*own, *later) if own or later else z3.BoolVal(True))
    return out
