"""The handler of a compiled run, and when it may stand in for the interpreter's handlers.

A fused handler is installed at a run's first pc p (the run is p..e-1) and
keeps the interpreter's handler of p to fall back on. Taking the compiled path
for a group must be indistinguishable from the interpreter running p, p+1,
..., e-1 one step each, so it is taken only when:

- under a schedule object (`reverse` and `flip`, which pick among pcs
  themselves), the group is every eligible thread. The engine then steps it
  on without asking the schedule, except at the schedule's synchronisation
  pcs, which are never inside a run (atomics, fences, barriers and strong
  accesses are not compiled, and a volatile one in (p, e) sends the group to
  the interpreter, below), or after a step that set pcs itself (a partly
  guarded instruction): asked then, both pick the lowest pc, all threads at
  it, as `min-pc` does (`reverse` holds no warp back; `flip`'s gates are at
  atomics). The `random` policy's holds end at step counts, so it could pick
  part of the group there: no run is built under it;
- no other eligible thread has a pc in (p, e). Under min-pc scheduling the
  group is every eligible thread at the smallest pc; stepping alone, it would
  meet such a thread inside the run and go on merged with it, in fewer steps
  than the two take separately. Eligible threads elsewhere (at pcs >= e) are
  not reached before e, and nothing inside a run (register-only instructions,
  plain and volatile loads and stores: no wait ends at one) can make a
  waiting or yielded thread eligible, so with none in (p, e) the group runs
  p..e-1 alone and in order, as the compiled function does;
- for a run with loads or stores (`memory_steps`): no thread is watched for
  parking (the interpreter's step records its accesses), and no pc in (p, e)
  is one where the scheduler must pick again (`Engine.repick_at`: the fork
  point of schedules sharing a prefix may be a volatile access);
- the step counters would not cross anything the engine checks after each
  step: the step budget (`--max-steps`) and the every-256-steps progress and
  time-limit checks. The handler adds the k-1 extra steps and thread-
  instructions the interpreter would have counted (the engine counts one), so
  statistics, budgets and %clock read the same.

Runs end before labels, so a branch always enters a run at p. A thread is
inside a run only after the interpreter's step at p stood in for the run (one
of the conditions above failed); it runs the interpreter's handlers to e, as
only p holds the fused handler.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from gpurace.sim.engine import RUN
from gpurace.sim.native.memory_steps import Scratch, call_buffers, hand_back
from gpurace.sim.schedule import SeededSchedule


class CompiledModule:
    """The runs' functions, compiled on the first call that needs one (so a launch that never reaches a run pays nothing)."""

    def __init__(self, ir_text: str, names: list[str]):
        self.ir_text = ir_text
        self.names = names
        self.functions: dict[str, Callable] | None = None

    def function(self, name: str) -> Callable:
        if self.functions is None:
            from gpurace.sim.native.jit import load

            self.functions = load(self.ir_text, self.names)
        return self.functions[name]


def fused_handler(eng, run, table: list[np.ndarray], module: CompiledModule, interpreted: Callable) -> Callable:
    p, e = run.start, run.end
    k = e - p
    stats = eng.stats
    pcs = eng.pc
    dirty = eng.state.dirty
    written = np.array(run.written, dtype=np.int64)
    guarded = [(j, np.array(slots, dtype=np.int64)) for j, slots in run.guarded_writes]
    addresses = np.array([0 if a is None else a.ctypes.data for a in table], dtype=np.uint64)
    per_call = [(i, key) for i, (key, a) in enumerate(zip(run.operands, table)) if a is None]
    flags = np.zeros(max(len(guarded), 1), dtype=np.uint8)
    regs = eng.state.regs
    scratch = Scratch()

    def others_inside(idx: np.ndarray) -> bool:
        live = getattr(eng, "_live", None)  # the eligible threads the group was picked from (a superset is safe)
        if live is not None and len(live) == len(idx):
            return False  # the group is every eligible thread
        if live is None:
            live = np.flatnonzero((eng.status == RUN) & ~eng.yielded)
        at = pcs[live]
        return bool(((at > p) & (at < e)).any())

    def memory_unsafe() -> bool:
        """Whether a load or store of the run must go through the interpreter's step: threads watched for parking
        record their accesses there, and a pc the scheduler must pick again at splits the run."""
        repick = eng.repick_at
        return eng.watching or (repick is not None and bool(repick[p + 1 : e].any()))

    def scheduled_apart(idx: np.ndarray) -> bool:
        """Whether a schedule object could pick differently from the run (module docstring)."""
        if eng.schedule is None:
            return False
        if isinstance(eng.schedule, SeededSchedule) and eng.schedule.hold_chance:
            return True
        live = eng._live
        return live is None or len(live) != len(idx)

    def fused(idx):
        steps = stats.steps
        last = steps + k - 1  # the count before the engine adds the run's final step
        if last >= eng.max_steps or last // 256 != steps // 256 or others_inside(idx) or scheduled_apart(idx):
            return interpreted(idx)
        if run.memory and memory_unsafe():
            return interpreted(idx)
        ids = idx if idx.dtype == np.int64 and idx.flags.c_contiguous else np.ascontiguousarray(idx, dtype=np.int64)
        buffers = None
        if per_call:
            buffers = call_buffers(eng, run, len(ids), scratch)
            for i, key in per_call:
                addresses[i] = buffers[key].ctypes.data
        done = module.function(run.name)(ids.ctypes.data, len(ids), addresses.ctypes.data, flags.ctypes.data)
        if done < len(ids):  # an access the interpreter reports: put the finished threads' registers back
            for slot in run.undo:
                regs[slot][ids[:done]] = buffers[("undo", slot)][:done]
            return interpreted(idx)
        if run.memory:
            hand_back(eng, run, idx, buffers)
        if len(written):
            dirty[written] = True
        for j, slots in guarded:
            if flags[j]:
                dirty[slots] = True
        stats.steps = last
        stats.thread_instructions += (k - 1) * len(idx)
        return e

    fused.operands = table  # the addresses above point into these arrays: keep them alive
    return fused
