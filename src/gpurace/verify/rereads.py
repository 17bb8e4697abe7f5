"""A thread's two loads of the same bytes in one barrier interval read the same value, unless the object races.

A load's result is a free value per load (`explore`), so a thread that tests
`s[i] == 0` and later `s[i] != 0` looks as if it could pass both tests. In a
run without a race on the object it cannot: if another thread wrote those
bytes between the two loads, that write fell in the same barrier interval
as both loads (barriers order every access of the block, and the interval
is the same for the reading thread at both loads), so it races with them.

So, in the questions about object X only, each thread copy gets, for two
plain scalar loads of X of one size made in the same iterations of the
same loops (the load earlier in the exploration first), with no access of
the thread writing X recorded between them (the exploration records
accesses in an order every path follows, so a store that can come between
the two in a run is recorded between them), the fact: both reached, at
one offset, after as many block, warp and grid barriers, imply the same
bits. Why that is sound for X's verdict: in a run with a race on X, take
the first moment a pair of X's loads disagrees (if one does). The write
that made them disagree races with the first of the two loads, and every
pair of X's loads before that write agrees, so the run satisfies the
question about that race, facts included (loads after it take any values
the facts need: each fact's premise reads only values loaded before its
second load). A run where no pair disagrees satisfies every fact. Either
way the race is found. The facts are no use to other objects' questions:
a race on X could make a race on Y possible.

Not used when something the exploration does not record may write memory
(an access through an untraced pointer, a `discard`), when the kernel has
an `__assume`, which could constrain the values later loads take, or with
`--within-block` for global memory, whose writers in other blocks are
then not asked about.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Callable

import z3

from gpurace.verify.terms import free_symbols

if TYPE_CHECKING:  # explore imports contents, which defines Load
    from gpurace.verify.contents import Load
    from gpurace.verify.explore import Exploration


class Rereads:
    """Per object, the facts that a thread's rereads of unchanged bytes agree (`for_object`)."""

    def __init__(self, out: Exploration, rename: Callable, *, within_block: bool):
        self.rename = rename
        self.pairs: dict[str, list[tuple[Load, Load]]] = {}
        self.facts: dict[str, list[tuple[z3.BoolRef, frozenset[str], frozenset[str]]]] = {}
        self.cache: dict[int, frozenset[str]] = {}
        if out.unknown_pointers or out.discards or out.user_assumptions:
            return
        position = {id(a): i for i, a in enumerate(out.accesses)}
        writes: dict[str, list[int]] = {}
        for i, a in enumerate(out.accesses):
            if a.write:
                writes.setdefault(a.obj, []).append(i)
        loads: dict[str, list[Load]] = {}
        for load in out.loads:
            acc = load.access
            if z3.is_bool(load.value) or load.value.size() < acc.size * 8:
                continue
            if within_block and out.objects[acc.obj].kind != "shared":
                continue
            loads.setdefault(acc.obj, []).append(load)
        for obj, group in loads.items():
            group.sort(key=lambda ld: position[id(ld.access)])
            stores = writes.get(obj, [])
            for i, first in enumerate(group):
                for second in group[i + 1 :]:
                    a, b = first.access, second.access
                    if a.size != b.size or a.loops != b.loops:
                        continue
                    if _writes_between(stores, position[id(a)], position[id(b)]):
                        continue
                    if _differ(a.offset, b.offset):
                        continue
                    self.pairs.setdefault(obj, []).append((first, second))

    def for_object(self, obj: str, terms) -> list[z3.BoolRef]:
        """The facts for `obj`'s question about `terms`: those on loaded values the terms mention, and on the
        values those facts mention in turn."""
        facts = self._facts(obj)
        if not facts:
            return []
        names = set().union(*(free_symbols(t, self.cache) for t in terms))
        chosen: list[z3.BoolRef] = []
        left = list(facts)
        grew = True
        while grew:
            grew = False
            for entry in list(left):
                fact, values, mentions = entry
                if values & names:
                    chosen.append(fact)
                    names |= mentions
                    left.remove(entry)
                    grew = True
        return chosen

    def _facts(self, obj: str) -> list[tuple[z3.BoolRef, frozenset[str], frozenset[str]]]:
        """(fact, the loaded values it equates, every symbol it mentions) per thread copy and pair, made once."""
        if obj not in self.facts:
            out = []
            for first, second in self.pairs.get(obj, []):
                a, b = first.access, second.access
                bits = a.size * 8
                for t in (1, 2):
                    r = lambda term: self.rename(term, t)  # noqa: E731
                    same_place = z3.And(
                        r(a.cond), r(b.cond), r(a.offset) == r(b.offset), r(a.barriers) == r(b.barriers),
                        r(a.warp_barriers) == r(b.warp_barriers), r(a.grid_barriers) == r(b.grid_barriers),
                    )
                    va, vb = r(first.value), r(second.value)
                    fact = z3.Implies(same_place, z3.Extract(bits - 1, 0, va) == z3.Extract(bits - 1, 0, vb))
                    values = free_symbols(va, self.cache) | free_symbols(vb, self.cache)
                    out.append((fact, values, free_symbols(fact, self.cache)))
            self.facts[obj] = out
        return self.facts[obj]


def _writes_between(stores: list[int], first: int, second: int) -> bool:
    """Whether a write access is recorded after position `first` and before `second`."""
    i = bisect_right(stores, first)
    return i < len(stores) and stores[i] < second


def _differ(x: z3.BitVecRef, y: z3.BitVecRef) -> bool:
    """Whether two offsets differ by a nonzero constant, so the loads never read the same bytes."""
    delta = z3.simplify(x - y)
    return z3.is_bv_value(delta) and delta.as_long() != 0
