"""Tickets: what the atomic additions to a counter return differs between threads.

`j = atomicAdd(&count, 1)` hands each thread its own `j` (a ticket, a slot
of a queue) as long as nothing else writes the counter: the additions to
one location are atomic, so they happen one after another, each reading
what the one before wrote, and the k-th returns `v0 + k*c`. These values
are distinct while `k*c` does not come back around 2^w, that is while the
number of additions times 2^(trailing zeros of c) is at most 2^w.

So, for an object every access of which is an integer `atom.add`/`red.add`
of one width, of one constant `c` other than 0, with a scope that covers
the whole grid, none of them in a loop (each is made at most once per
thread and call), and no access of the kernel through a pointer verify
cannot trace: two distinct threads whose additions hit the same location
get different results, in every launch with at most 2^w / 2^tz(c) additions
in all (the number of addition sites times the number of threads). Each
fact is an implication, so a launch too large for it simply has none. And
since every result is the first value plus a multiple of c, any two results
at one location agree in c's trailing zero bits, in every launch.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3


@dataclass
class Addition:
    """One atomic addition of the generic thread to `obj` at `offset` (an `atom`'s `result`, None for `red`)."""

    obj: str
    offset: z3.BitVecRef
    size: int
    addend: int | None
    scope: str
    cond: z3.BoolRef
    result: z3.BitVecRef | None
    in_loop: bool


def counters(additions: list[Addition], accesses, untraced: bool) -> dict[str, list[Addition]]:
    """The objects whose every access is a ticket-giving addition (see the module's docstring), with them."""
    if untraced:
        return {}
    by_obj: dict[str, list[Addition]] = {}
    for add in additions:
        by_obj.setdefault(add.obj, []).append(add)
    out = {}
    for obj, adds in by_obj.items():
        first = adds[0]
        if sum(a.obj == obj for a in accesses) != len(adds):
            continue  # the object has other accesses: a plain store, another kind of atomic
        if any(a.in_loop or a.addend is None or a.scope not in ("gpu", "sys") for a in adds):
            continue
        if any(a.size != first.size or a.addend != first.addend for a in adds):
            continue
        if first.addend % (1 << (8 * first.size)) == 0:
            continue
        out[obj] = adds
    return out


def ticket_facts(additions, accesses, untraced: bool, rename, distinct: z3.BoolRef, threads: z3.BitVecRef) -> list[z3.BoolRef]:
    """For each pair of additions to one counter by threads 1 and 2: same location implies different results.

    `rename(term, t)` gives thread t's copy of a term, `distinct` says the two
    threads differ, `threads` is the launch's thread count (128 bits wide).
    """
    facts = []
    for adds in counters(additions, accesses, untraced).values():
        width = 8 * adds[0].size
        addend = adds[0].addend % (1 << width)
        zeros = (addend & -addend).bit_length() - 1
        fits = z3.ULE(threads * len(adds) * (1 << zeros), z3.BitVecVal(1 << width, 128))
        with_result = [a for a in adds if a.result is not None]
        for a in with_result:
            for b in with_result:
                same = rename(a.offset, 1) == rename(b.offset, 2)
                reached = z3.And(rename(a.cond, 1), rename(b.cond, 2))
                one, two = rename(a.result, 1), rename(b.result, 2)
                facts.append(z3.Implies(z3.And(distinct, reached, same, fits), one != two))
                if zeros:  # every result is v0 plus a multiple of c: they agree in c's trailing zero bits
                    low = min(zeros, one.size())
                    facts.append(z3.Implies(z3.And(reached, same), z3.Extract(low - 1, 0, one) == z3.Extract(low - 1, 0, two)))
    return facts
