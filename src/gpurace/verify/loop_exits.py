"""Loops left when a counter hits a value: their back-edge condition put in a form that stays false once false.

Optimised code counts loops down to zero: `for (r = n - n % 4; r != 0; r -= 4)`
(an unrolled loop) or `for (r = n & 3; r != 0; r--)` (its remainder). The
back-edge condition `r0 - 4(k + 1) != 0` holds again after it first fails
(the counter wraps around), so nothing says that a thread leaves such a loop
in one iteration only, and a barrier after it looks divergent.

The thread leaves at the *first* iteration where the condition fails, and
an iteration after that one is never reached. So a conjunct `a + b·k != 0`
of the back-edge condition, with `b = ±2^m` and `k` the loop's counter, can
be replaced by `k < K`, with `K` the first solution of `a + b·K = 0` (none
when `2^m` does not divide `a`: the conjunct always holds): the two agree
in every iteration up to `K`, and the loop never gets past `K` through that
back-edge. `k < K` fails for good once it fails, so the loop can be proved
monotone (`LoopFacts.monotone`).
"""

from __future__ import annotations

import z3

from gpurace.verify.terms import HELPER_RLIMIT, budgeted_solver


def first_exit_form(back_cond: z3.BoolRef, counter: z3.BitVecRef) -> z3.BoolRef:
    """`back_cond` with each `!=` conjunct on a counted value replaced by `counter < K` (see the module)."""
    while z3.is_or(back_cond) and back_cond.num_args() == 1:  # one back-edge: `Or` of one condition
        back_cond = back_cond.arg(0)
    if not z3.is_and(back_cond):
        return back_cond
    parts = [_first_exit(p, counter) for p in _conjuncts(back_cond)]
    if all(new is None for new in parts):
        return back_cond
    return z3.And(*[new if new is not None else old for new, old in zip(parts, _conjuncts(back_cond))])


def _conjuncts(term: z3.BoolRef) -> list[z3.BoolRef]:
    if z3.is_and(term):
        return [c for kid in term.children() for c in _conjuncts(kid)]
    return [term]


def _first_exit(atom: z3.BoolRef, counter: z3.BitVecRef) -> z3.BoolRef | None:
    """`counter < K` for an atom `x != y` with `x - y = a + b·counter`, `b = ±2^m`; None for any other atom."""
    if z3.is_distinct(atom) and len(atom.children()) == 2:
        x, y = atom.children()
    elif z3.is_not(atom) and z3.is_eq(atom.arg(0)):
        x, y = atom.arg(0).children()
    else:
        return None
    if not z3.is_bv(x):
        return None
    t = x - y
    width = t.size()
    at = lambda k: z3.simplify(z3.substitute(t, (counter, z3.BitVecVal(k, counter.size()))))  # noqa: E731
    a = at(0)
    b = z3.simplify(at(1) - a)
    if not z3.is_bv_value(b) or a.eq(at(1)):
        return None
    step = b.as_long()
    if step & (step - 1) == 0:
        target = z3.simplify(-a)  # b·K = -a
    elif (-step) % (1 << width) & ((-step) % (1 << width) - 1) == 0:
        step, target = (-step) % (1 << width), a  # -b·K = a
    else:
        return None
    solver = budgeted_solver("QF_BV", HELPER_RLIMIT)
    solver.add(t != a + b * _low(counter, width))
    if solver.check() != z3.unsat:  # not linear in the counter after all
        return None
    shift = step.bit_length() - 1
    first = z3.ULT(counter, _wide(z3.LShR(target, shift), counter.size()))
    if shift == 0:
        return first
    divides = z3.Extract(shift - 1, 0, target) == 0
    return z3.If(divides, first, z3.BoolVal(True))


def _low(counter: z3.BitVecRef, width: int) -> z3.BitVecRef:
    return counter if counter.size() == width else z3.Extract(width - 1, 0, counter)


def _wide(term: z3.BitVecRef, width: int) -> z3.BitVecRef:
    return term if term.size() >= width else z3.ZeroExt(width - term.size(), term)
