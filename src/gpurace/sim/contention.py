"""Contended atomics and the `flip` schedule that lets another warp win each of them.

Under every fixed schedule the same warp wins a lock: `min-pc` lets the code
laid out first and the lowest lane go first, `reverse` the highest warp, but
when the contenders wait at different pcs (an if/else on the block index) both
let the branch laid out first win. A race that needs the other winner stays
hidden, and a predictive detector cannot always reorder the critical sections
(not when they conflict with each other).

`Contention` watches one run and records, for every address that atomics
(`atom`, whose old value a thread reads: CAS and exchange locks, tickets)
of two or more warps touched, the warp that touched it first and the first
other warp that touched it, with the pc and event of each. `flip_gates` turns
that into gates, and the `flip` schedule (`FlipSchedule`) replays the launch
holding every first winner back at its first atomic on the address until the
runner-up has executed its own: the runner-up takes the lock, draws the first
ticket, claims the flag first. Each warp gets at most one gate (its earliest
won contest), so the schedule's cost is bounded by the number of warps.

Gates never stop a launch: when every runnable thread is held at a gate, the
lowest pc among them runs as under `min-pc` and its gate opens (a runner-up
that waits for the winner's work, say). Otherwise the schedule is `min-pc`'s:
lowest pc first, every thread at it in one step.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.sim.geometry import Geometry
from gpurace.sim.program import Program

Gate = tuple[int, int, int, int]
"""(winner warp, pc of its first atomic on the address, runner-up warp, pc of the runner-up's first atomic)."""


class Contention:
    """An event sink: the first and the first other warp at every address that atomics read-modify-write."""

    def __init__(self):
        self.warp_of: np.ndarray | None = None
        self.is_atom: np.ndarray | None = None
        self.addrs = np.zeros(0, dtype=np.int64)  # sorted
        self.first = np.zeros((0, 3), dtype=np.int64)  # warp, pc, seq of the first touch
        self.second = np.zeros((0, 2), dtype=np.int64)  # warp, pc of the first other warp's touch; -1: none yet

    def bind(self, ctx) -> None:
        self.warp_of = ctx.geometry.warp_of
        self.is_atom = np.array([ins.opcode == "atom" for ins in ctx.program.instructions], dtype=np.bool_)

    def on_event(self, event) -> None:
        if not isinstance(event, AccessBatch) or event.kind != AccessKind.ATOMIC or not self.is_atom[event.pc]:
            return
        addrs = np.asarray(event.addrs, dtype=np.int64)
        if not len(addrs):
            return
        warps = self.warp_of[event.threads].astype(np.int64)
        order = np.argsort(addrs, kind="stable")  # per address, lanes in the order they took effect
        a, w = addrs[order], warps[order]
        starts = np.flatnonzero(np.r_[True, a[1:] != a[:-1]])
        ua, lead = a[starts], w[starts]
        group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(a)]))
        other = w != lead[group]  # lanes of another warp than the address's first in this batch
        pos = np.where(other, np.arange(len(a)), len(a))
        first_other = np.minimum.reduceat(pos, starts)
        has_other = first_other < len(a)
        batch_second = np.where(has_other, w[np.minimum(first_other, len(a) - 1)], -1)
        pc = event.pc
        at = np.searchsorted(self.addrs, ua)
        known = at < len(self.addrs)
        known[known] = self.addrs[at[known]] == ua[known]
        # Addresses seen before, still waiting for a second warp: this batch's first other warp is it.
        k = at[known]
        waiting = self.second[k, 0] < 0
        kw = k[waiting]
        kl, ks = lead[known][waiting], batch_second[known][waiting]
        runner = np.where(kl != self.first[kw, 0], kl, ks)
        got = runner >= 0
        self.second[kw[got]] = np.stack([runner[got], np.full(got.sum(), pc)], axis=1)
        new = ~known
        if new.any():
            n = int(new.sum())
            first = np.stack([lead[new], np.full(n, pc), np.full(n, event.seq)], axis=1)
            second = np.stack([batch_second[new], np.where(batch_second[new] >= 0, pc, -1)], axis=1)
            addrs_all = np.concatenate([self.addrs, ua[new]])
            keep = np.argsort(addrs_all, kind="stable")
            self.addrs = addrs_all[keep]
            self.first = np.concatenate([self.first, first])[keep]
            self.second = np.concatenate([self.second, second])[keep]

    def contended(self) -> int:
        """How many addresses atomics of two or more warps touched."""
        return int((self.second[:, 0] >= 0).sum())

    def flip_gates(self) -> tuple[Gate, ...]:
        """One gate per warp that won a contest: its earliest won one (by event order, then address)."""
        c = np.flatnonzero(self.second[:, 0] >= 0)
        c = c[np.lexsort((self.addrs[c], self.first[c, 2]))]
        _, keep = np.unique(self.first[c, 0], return_index=True)
        c = c[np.sort(keep)]
        return tuple((int(f[0]), int(f[1]), int(s[0]), int(s[1])) for f, s in zip(self.first[c], self.second[c]))


class FlipSchedule:
    """The per-launch state of the `flip` policy: the gates still closed (module docstring)."""

    def __init__(self, program: Program, geometry: Geometry, gates: tuple[Gate, ...]):
        self.geo = geometry
        n = geometry.nwarps
        npcs = len(program.instructions)
        self.gate_pc = np.full(n, -1, dtype=np.int64)
        self.release_warp = np.zeros(n, dtype=np.int64)
        self.release_pc = np.full(n, -1, dtype=np.int64)
        self.is_gate = np.zeros(npcs, dtype=np.bool_)
        self.is_release = np.zeros(npcs, dtype=np.bool_)
        base = geometry.warp_base  # gates name the launch's warps; a wave's (`sim.waves`) count from its first
        for gate in gates:
            winner, pc, runner, runner_pc = gate
            winner, runner = winner - base, runner - base
            if geometry.wave_blocks and not (0 <= winner < n and 0 <= runner < n):
                continue  # a contest with another wave: the order of the waves decides it
            if not (0 <= winner < n and 0 <= runner < n and 0 <= pc < npcs and 0 <= runner_pc < npcs):
                raise ValueError(f"flip gate {gate} is outside this launch")
            self.gate_pc[winner], self.release_warp[winner], self.release_pc[winner] = pc, runner, runner_pc
            self.is_gate[pc] = True
            self.is_release[runner_pc] = True
        # Where the engine must ask again even when every eligible thread moved together.
        self.sync_pcs = self.is_gate | self.is_release

    def pick(self, pcs: np.ndarray, live: np.ndarray, step: int) -> tuple[int, np.ndarray]:
        """(pc, threads) to run next among the eligible threads `live` (ascending)."""
        warp_of = self.geo.warp_of
        gated = self.gate_pc[warp_of[live]] == pcs[live]
        ready = live[~gated] if gated.any() else live
        if not len(ready):
            ready = live  # every runnable thread waits at a gate: gates never stop the launch
        at = pcs[ready]
        p = int(at.min())
        group = ready[at == p]
        if self.is_release[p]:
            ran = np.zeros(len(self.gate_pc), dtype=np.bool_)
            ran[warp_of[group]] = True
            self.gate_pc[(self.release_pc == p) & ran[self.release_warp]] = -1
        if self.is_gate[p]:
            warps = warp_of[group]
            self.gate_pc[warps[self.gate_pc[warps] == p]] = -1  # a gated warp that runs anyway passes its gate
        return p, group
