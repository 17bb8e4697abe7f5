"""Memory no thread writes: two loads of the same bytes read the same value.

A load's result is a free value per thread (`explore`), so two threads that
store what they loaded are never known to store the same thing. But when no
access of the kernel writes an object (no store, no atomic, and no access
through a pointer verify cannot trace, which might reach it) and no
`discard` makes cached bytes unspecified, its contents do not change during
the launch: every load of the same bytes returns the same bits. For global
and constant memory that holds across the grid; for shared memory, within
one block (each block has its own, holding whatever it held at the start). So each such load's value is `contents(offset)`, one
uninterpreted function per object and width shared by all threads (for
shared memory, a function of the block's indices too).

That lets `--benign-same-value` excuse `p[0] = A[0]` in every thread, and
lets an index loaded from a table nobody writes (`s[base[0] + tid]`) mean
the same thing in two threads. Plain and non-coherent loads only: a
volatile or atomic load says the program expects the memory to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import z3

from gpurace.verify.terms import fit, free_symbols

if TYPE_CHECKING:  # explore imports this module
    from gpurace.verify.explore import Access


@dataclass
class Load:
    """A plain scalar load of the generic thread (`access`) and the free value it gave (`value`, register-wide)."""

    access: Access
    value: z3.BitVecRef
    signed: bool
    shared: bool


class ContentFacts:
    """Per thread copy, the fact `value == contents(offset)` of each load from an object nothing writes.

    The facts are handed out by the symbols they pin down (`for_terms`), so
    a question pays only for the loads whose values it mentions.
    """

    def __init__(
        self, loads: list[Load], accesses, unsure: bool, rename: Callable, block: Callable[[int], list[z3.BitVecRef]]
    ):
        """`unsure`: something may change memory that no access records (an access through an untraced
        pointer, which may write any object; a `discard`): then no fact holds."""
        self.by_value: dict[str, tuple[z3.BoolRef, frozenset[str]]] = {}
        self.cache: dict[int, frozenset[str]] = {}
        if unsure:
            return
        written = {a.obj for a in accesses if a.write}
        for load in loads:
            acc = load.access
            if acc.obj in written or z3.is_bool(load.value) or load.value.size() < acc.size * 8:
                continue
            width = load.value.size()
            domain = [z3.BitVecSort(32)] * 3 if load.shared else []
            contents = z3.Function(f"contents of {acc.obj} ({acc.size} bytes)", *domain, z3.BitVecSort(64), z3.BitVecSort(acc.size * 8))
            for t in (1, 2):
                where = [*block(t), rename(acc.offset, t)] if load.shared else [rename(acc.offset, t)]
                value = rename(load.value, t)
                fact = value == fit(contents(*where), width, load.signed)
                self.by_value[value.decl().name()] = (fact, free_symbols(fact, self.cache))

    def for_terms(self, terms) -> list[z3.BoolRef]:
        """The facts on the loaded values `terms` mention, and on those the facts' offsets mention in turn."""
        if not self.by_value:
            return []
        names = set().union(*(free_symbols(t, self.cache) for t in terms))
        chosen: dict[str, z3.BoolRef] = {}
        pending = [n for n in names if n in self.by_value]
        while pending:
            name = pending.pop()
            if name in chosen:
                continue
            fact, mentions = self.by_value[name]
            chosen[name] = fact
            pending += [n for n in mentions if n in self.by_value and n not in chosen]
        return list(chosen.values())
