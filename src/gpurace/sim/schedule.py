"""The seeded `random` scheduling policy (which warps run first, which are held back, where they are
preempted) and its fixed counterpart `reverse`.

The default `min-pc` policy always runs the lowest pc, every thread at it in
one step, and settles every race for a lock or a flag the same way (at an
atomic, lanes apply in thread order, so block 0 always wins; a branch laid out
first always runs first). A race that only another order shows stays hidden.
A seeded schedule varies exactly those orders and keeps min-pc's fused,
vectorised steps everywhere else:

- priority: a random permutation ranks the warps (and so the blocks). At a
  synchronisation point (atomics, fences, barriers, strong loads and stores:
  `synchronises`) the highest-ranked warp there runs first, alone, and the
  other threads at that pc follow together in the next step; so the ranking
  decides which warp takes a lock, draws the first ticket or reads a flag first;
- holds: some warps start held back for a few steps, and at a synchronisation
  point the warp about to run it is sometimes preempted, held back before or
  after it, so that other warps run ahead (a block whose code comes later
  reads a flag before the block that sets it, say).

The `reverse` policy is the same machinery with the ranking fixed to the
highest warp first and no holds: every race for a lock or a flag goes the
other way from `min-pc` (the last block takes the lock first), which is the
one other order most predictable races need.

Otherwise the lowest pc among the threads not held back runs, as under
`min-pc`, so a warp released from a hold catches up and fuses with the others
again. A held-back warp is still runnable: it waits only while some other
thread can run, and it keeps its turn in the round (the engine's yields at
backward branches), so spin locks and flags set by other blocks make progress
exactly as under `min-pc`. Holds are rare in large launches (about
HOLDS_PER_POINT warps per synchronisation point), which bounds their cost.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from gpurace.frontend.ptx.ir import Addr, Instruction, Negated, ParamList, PredPair, Reg, Vec
from gpurace.sim.geometry import Geometry
from gpurace.sim.program import Program

PREEMPT_PROBABILITY = 0.25
"""Largest chance that a warp is held back at the start, or before or after a synchronisation point."""

HOLDS_PER_POINT = 2
"""In launches of many warps the chance falls so that about this many warps are held at each such point."""

MAX_DELAY = 64
"""Longest hold, in scheduler steps."""

_ORDERING_SEMANTICS = frozenset({"volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "mmio"})


def synchronises(ins: Instruction) -> bool:
    """Whether the order in which warps execute `ins` can change what other threads observe or race with."""
    if ins.opcode in ("atom", "red", "membar", "fence", "bar", "barrier", "mbarrier"):
        return True
    return ins.opcode in ("ld", "st", "ldu") and ins.semantics in _ORDERING_SEMANTICS


ORDER_FREE_REDUCTIONS = frozenset({"add", "min", "max", "and", "or", "xor"})
"""Reductions whose result is the same in every order: on integers, associative and commutative."""


def order_free(ins: Instruction, function: str, uses: Counter) -> bool:
    """Whether `ins` is a reduction no order of the threads can make observable: a `red`, or an `atom` whose
    result register nothing else names (`uses`: occurrences per function and register), that adds, takes the
    minimum or maximum, or ands, ors or xors integers, with no ordering semantics.

    Another schedule then runs the same path: no register depends on the order of the reductions, the memory
    they leave is the same in every order, and a plain access of their location that a barrier does not order
    is a race the first schedule reports. (A float add rounds differently in another order, `inc`/`dec` wrap,
    and an acquire or release orders other accesses: those keep their schedules.)
    """
    if ins.opcode == "atom":
        dest = ins.operands[0] if ins.operands else None
        if not isinstance(dest, Reg) or uses[(function, dest.name)] != 1:
            return False
    elif ins.opcode != "red":
        return False
    if ins.semantics not in (None, "relaxed") or any(m in ("v2", "v4", "v8") for m in ins.modifiers):
        return False
    ops = [m for m in ins.modifiers if m in ORDER_FREE_REDUCTIONS]
    return len(ops) == 1 and all(t[0] in "usb" for t in ins.types)


def register_uses(program) -> Counter:
    """How many times each register (function, name) is named by the program's operands and guards."""
    uses: Counter = Counter()

    def walk(function: str, op) -> None:
        if isinstance(op, Reg):
            uses[(function, op.name)] += 1
        elif isinstance(op, Addr) and isinstance(op.base, Reg):
            uses[(function, op.base.name)] += 1
        elif isinstance(op, Negated):
            walk(function, op.reg)
        elif isinstance(op, PredPair):
            walk(function, op.first)
            walk(function, op.second)
        elif isinstance(op, (Vec, ParamList)):
            for item in op.elems if isinstance(op, Vec) else op.items:
                walk(function, item)

    for ins, function in zip(program.instructions, program.owner):
        for op in ins.operands:
            walk(function, op)
        if ins.guard is not None:
            walk(function, ins.guard.reg)
    return uses


class SeededSchedule:
    """The per-launch state of the `random` policy: warp ranks, holds, and the random stream that sets them."""

    def __init__(self, program: Program, geometry: Geometry, seed: int, reverse: bool = False):
        self.rng = np.random.default_rng(seed)
        self.geo = geometry
        self.rank = np.arange(geometry.nwarps)[::-1].copy() if reverse else self.rng.permutation(geometry.nwarps)
        self.sync_pcs = np.array([synchronises(ins) for ins in program.instructions], dtype=np.bool_)
        self.hold_chance = 0.0 if reverse else min(PREEMPT_PROBABILITY, HOLDS_PER_POINT / geometry.nwarps)
        held = self.rng.random(geometry.nwarps) < self.hold_chance
        self.held_until = np.where(held, self.rng.integers(1, MAX_DELAY + 1, geometry.nwarps), 0)
        self.rest_at: int | None = None  # a synchronisation pc whose first warp ran: the others there follow fused

    def pick(self, pcs: np.ndarray, live: np.ndarray, step: int) -> tuple[int, np.ndarray]:
        """(pc, threads) to run next among the eligible threads `live` (ascending; see the module docstring)."""
        warp_of = self.geo.warp_of
        ready = live[self.held_until[warp_of[live]] <= step]
        if not len(ready):
            ready = live  # every runnable warp is held back: holds never stop the launch
        while True:
            at = pcs[ready]
            p = int(at.min())
            group = ready[at == p]
            if not self.sync_pcs[p]:
                return p, group
            if p == self.rest_at:
                self.rest_at = None
                return p, group
            warps = warp_of[group]
            w = warps[np.argmin(self.rank[warps])]
            if self.rng.random() < self.hold_chance:
                others = ready[warp_of[ready] != w]
                if len(others):
                    self._hold(w, step)  # preempted before the synchronisation point
                    ready = others
                    continue
            if self.rng.random() < self.hold_chance:
                self._hold(w, step + 1)  # preempted after it
            if (warps != w).any():
                self.rest_at = p
            return p, group[warps == w]

    def priority(self, idx: np.ndarray) -> np.ndarray:
        """A sort key over threads `idx`, lowest first: the warp ranking that decides who goes first at a
        synchronisation point, then thread order (which parked waiter of a lock wakes first, `sim.parking`)."""
        return self.rank[self.geo.warp_of[idx]].astype(np.int64) * self.geo.nthreads + idx

    def _hold(self, warp: int, step: int) -> None:
        self.held_until[warp] = step + int(self.rng.integers(1, MAX_DELAY + 1))
