"""Loop registers doubled or halved in every iteration: `s <<= 1`, `s *= 4`, `s >>= 1` in closed form.

An induction variable adds the same step in every iteration; a register
shifted by a constant in every iteration is as exact: after `k` iterations
it holds its entry value shifted by `k` times the amount. Written with
PTX's shifts (a shift by the register's width or more gives 0, or the sign
for an arithmetic right shift), the closed form is exact for every `k`,
wrap-around included, so a loop such as `for (off = 1; off < n; off *= 2)`
keeps exact iterations and two threads in the same iteration agree on
`off`. Other registers stay as `explore` classifies them.
"""

from __future__ import annotations

import z3

from gpurace.verify.terms import HELPER_RLIMIT, budgeted_solver, free_symbols

MAX_BITS = 4
"""The largest constant shift recognised (`s *= 16`)."""

SATURATED = 4096
"""A shift amount past every register's width: `k` times the step is taken as this once `k` reaches it."""


def closed_form(
    head: z3.BitVecRef, after: z3.BitVecRef, start: z3.BitVecRef, counter: z3.BitVecRef, *, signed: bool
) -> tuple[z3.BitVecRef, z3.BoolRef | None] | None:
    """The register's value in iteration `counter` when its next value `after` is `head` shifted by a constant
    (`start`: its value on entry, as wide as `head`), and for a left shift of a register the loop compares as
    signed (`signed`), the assumption that it does not overflow (C++ leaves signed overflow undefined, as for
    an induction variable); None otherwise."""
    shape = _shift(after, head)
    if shape is None:
        return None
    kind, step = shape
    width = head.size()
    k = z3.If(z3.ULT(counter, SATURATED), counter, z3.BitVecVal(SATURATED, 64))
    amount = k * step  # at most SATURATED * 64: never wraps in 64 bits
    if kind == "left":
        wide = z3.ZeroExt(64 - width, start) << amount if width < 64 else start << amount
    elif kind == "logical":
        wide = z3.LShR(z3.ZeroExt(64 - width, start) if width < 64 else start, amount)
    else:
        wide = (z3.SignExt(64 - width, start) if width < 64 else start) >> amount
    value = z3.Extract(width - 1, 0, wide) if width < 64 else wide
    if kind != "left" or not signed:
        return value, None
    # no bit, the sign included, is shifted out: shifting back gives the entry value
    back = z3.Extract(width - 1, 0, (z3.SignExt(64 - width, value) if width < 64 else value) >> amount)
    return value, z3.And(z3.ULT(amount, width), back == start)


def _shift(term: z3.BitVecRef, head: z3.BitVecRef) -> tuple[str, int] | None:
    """("left" | "logical" | "arithmetic", bits) when `term` equals `head` shifted by a constant number of bits.

    Asked of the solver, for shifts by up to MAX_BITS bits: the same shift
    comes as `h << 1`, `h * 2`, `h + h` or a concatenation, as the PTX and
    z3's simplifier write it.
    """
    if free_symbols(term) != {str(head)}:
        return None
    width = head.size()
    for bits in range(1, min(MAX_BITS, width - 1) + 1):
        for kind, shifted in (("left", head << bits), ("logical", z3.LShR(head, bits)), ("arithmetic", head >> bits)):
            solver = budgeted_solver("QF_BV", HELPER_RLIMIT)
            solver.add(term != shifted)
            if solver.check() == z3.unsat:
                return kind, bits
    return None
