"""How far the threads of a launch came from failing an `__assert`: the input search's guide on kernels whose
assertions are about values, not memory.

`--search` scores a candidate input by how much its threads collide in memory (`search.fitness`). A kernel
that asserts on its parameters before it touches memory (`__assert(a + b != c)`) gives every candidate the
same score, and the search is blind: it needs `c` to be exactly `a + b`. Search-based testing's *branch
distance* gives it a direction: for each comparison (`setp`) on the assertion's source line, how far the
operands were from the other outcome (|x - y| to make `!=` false, y - x to make `<` false, 1 to make `==`
false). Each thread keeps the least distance of those comparisons since its last assertion; the assertion
hands the least distance over the threads it let pass to the observer (the search's fitness sink) and forgets
them. The distance is a heuristic (an assertion of several comparisons may need more than one of them
flipped): it orders the search's candidates and changes nothing a check reports.

Installed only when a sink asks for it (`assertion_distance`), so a plain check pays nothing.
"""

from __future__ import annotations

import numpy as np

from gpurace.frontend.ptx.ir import Instruction, Sym
from gpurace.sim.alu.rawtypes import int_view, is_int
from gpurace.sim.program import call_parts
from gpurace.sim.state import operand_reader

ASSERT = "__gpurace_assert"
_UNSIGNED_ORDER = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_UNORDERED = {"equ": "eq", "neu": "ne", "ltu": "lt", "leu": "le", "gtu": "gt", "geu": "ge"}
_MEASURED = frozenset({"eq", "ne", "lt", "le", "gt", "ge", *_UNSIGNED_ORDER, *_UNORDERED})
"""The comparisons with a distance (`num` and `nan` have none)."""
_FLOATS = {"f32": np.float32, "f64": np.float64}


class AssertDistance:
    """Per thread, the least branch distance of the assertion comparisons it ran since its last assertion."""

    def __init__(self, nthreads: int, observers: list):
        self.pending = np.full(nthreads, np.inf)
        self._observers = observers

    def passed(self, idx: np.ndarray) -> None:
        """`idx` passed an assertion: report their least distance and start afresh."""
        if len(idx) == 0:
            return
        least = float(self.pending[idx].min())
        self.pending[idx] = np.inf
        if np.isfinite(least):
            for observer in self._observers:
                observer.assertion_distance(least)


def watching(sinks, nthreads: int) -> AssertDistance | None:
    """The distances to keep for a launch with these sinks and `nthreads` threads, or None when no sink asks."""
    observers = [s for s in sinks if hasattr(s, "assertion_distance")]
    return AssertDistance(nthreads, observers) if observers else None


def install(eng, handlers: list) -> None:
    """Wrap the handler of every comparison on an assertion's line (in place) so that it records distances."""
    if eng.assert_distance is None:
        return
    program = eng.program
    for pc in _assertion_comparisons(program):
        distance = _distance(eng.state, program.owner[pc], program.instructions[pc])
        if distance is not None:
            handlers[pc] = _recording(eng.assert_distance.pending, distance, handlers[pc])


def _assertion_comparisons(program) -> list[int]:
    """The pcs of `setp`s before an `__assert` call, in its function and on its source line."""
    found: set[int] = set()
    for pc, ins in enumerate(program.instructions):
        if ins.opcode != "call" or ins.loc is None:
            continue
        _, callee, _ = call_parts(ins)
        if callee != ASSERT:
            continue
        fn, line = program.owner[pc], (ins.loc.file, ins.loc.line)
        earlier = pc - 1
        while earlier >= 0 and program.owner[earlier] == fn:
            other = program.instructions[earlier]
            if other.opcode == "setp" and other.loc is not None and (other.loc.file, other.loc.line) == line:
                found.add(earlier)
            earlier -= 1
    return sorted(found)


def _distance(state, fn: str, ins: Instruction):
    """idx -> each thread's distance from the comparison's other outcome, or None for a form not measured."""
    op = next((m for m in ins.modifiers if m in _MEASURED), None)
    t = ins.types[0] if ins.types else None
    sources = ins.operands[1:3]
    if op is None or t is None or len(sources) != 2 or any(isinstance(s, Sym) for s in sources):
        return None
    if not (t in _FLOATS or is_int(t)):
        return None
    as_typed = op not in _UNSIGNED_ORDER  # `lo`, `ls`, `hi`, `hs` compare unsigned whatever the type
    op = _UNSIGNED_ORDER.get(op, _UNORDERED.get(op, op))
    readers = [operand_reader(state, fn, ins, s, t) for s in sources]
    step = 0.0 if t in _FLOATS else 1.0  # the least change that flips a strict comparison

    def values(idx, reader):
        raw = reader(idx)
        if t in _FLOATS:
            return raw.view(_FLOATS[t]).astype(np.float64)
        return (int_view(raw, t) if as_typed else raw).astype(np.float64)

    def distance(idx):
        x, y = values(idx, readers[0]), values(idx, readers[1])
        with np.errstate(invalid="ignore", over="ignore"):
            if op == "eq":
                d = np.where(x == y, 1.0, np.abs(x - y))
            elif op == "ne":
                d = np.where(x != y, np.abs(x - y), 1.0)
            elif op in ("lt", "ge"):  # x < y  or its negation
                d = np.where(x < y, y - x, x - y + step)
            else:  # le, gt: x <= y or its negation
                d = np.where(x <= y, y - x + step, x - y)
        return np.where(np.isnan(d), np.inf, d)

    return distance


def _recording(pending: np.ndarray, distance, body):
    def record(idx):  # a handler's threads are distinct
        pending[idx] = np.minimum(pending[idx], distance(idx))
        return body(idx)

    return record
