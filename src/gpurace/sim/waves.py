"""Large launches in waves of blocks: memory for the threads that run at once, not for the whole grid.

A GPU does not hold a large grid at once: it runs as many blocks as fit,
and starts the next ones as those finish. gpurace does the same for a launch
of more than `--resident-threads` threads (`Limits.resident_threads`): the
grid runs in waves of whole blocks, in block order, each wave an `Engine` of
its own on the same memory and the same detectors, starting when the wave
before it has finished. Registers, local and shared memory and the
scheduler's state are then those of one wave (`Geometry.wave`,
`Memory.enter_wave`); the events carry the launch's thread, block and warp
ids (`engine.in_launch`), so the detectors see one launch whose blocks ran
in that order, which is an execution a GPU can have. Findings and
statistics add up over the waves; `--max-steps` bounds each wave.

What waves change, and what does not run in them:

* Cooperative launches (a grid barrier needs every block resident) and
  launches with clusters run whole.
* A block that waits for a block of a later wave cannot be helped: its wave
  never finishes and the run ends in a livelock (or timeout) finding whose
  cause says that the launch ran in waves (a GPU gives no such block a
  guarantee either, but it starts blocks one by one, not wave by wave);
  `--resident-threads` as large as the launch runs it whole.
* Schedules reorder warps within a wave: the `random` policy draws each
  wave's order from its own seed, and the `flip` schedule flips contests
  between warps of one wave (a contest between waves is decided by their
  order).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpurace.detect.findings import Finding, FindingSet
from gpurace.limits import Limits
from gpurace.sim.engine import Engine, Policy, RunStats
from gpurace.sim.events import EventSink
from gpurace.sim.geometry import Geometry
from gpurace.sim.memory import Memory
from gpurace.sim.program import Program
from gpurace.sim.shared_prefix import SharedPrefix
from gpurace.words import plural

STUCK = ("livelock", "timeout")
"""The findings that end a wave whose threads may be waiting for a block of a later one."""


def resident_blocks(grid, block, cluster, limits: Limits, *, cooperative: bool) -> int:
    """How many blocks of a launch run at once: all of them when it is small enough, cooperative (a grid
    barrier needs every block resident) or has clusters; else a wave's."""
    nblocks, block_size = grid[0] * grid[1] * grid[2], block[0] * block[1] * block[2]
    if cooperative or tuple(cluster) != (1, 1, 1) or nblocks * block_size <= limits.resident_threads:
        return nblocks
    return max(1, limits.resident_threads // block_size)


def wave_policy(policy: Policy, first_block: int) -> Policy:
    """The policy of the wave starting at `first_block`: a `random` one with a seed of its own."""
    if policy.kind != "random" or not first_block:
        return policy
    seed = int(np.random.SeedSequence([policy.seed, first_block]).generate_state(1)[0])
    return Policy("random", seed)


def run_waves(
    program: Program,
    geometry: Geometry,
    mem: Memory,
    sinks: list[EventSink],
    per_wave: int,
    *,
    policy: Policy,
    max_steps: int,
    progress: Callable[[RunStats], None] | None,
    limits: Limits,
    prefix: SharedPrefix | None = None,
) -> tuple[list[Finding], RunStats]:
    """Run the launch of `geometry` wave by wave on `mem` (created for `per_wave` blocks); its findings and
    statistics. With a `prefix` (`sim.shared_prefix`), a worker that took over in one wave keeps its policy in
    the waves after it."""
    findings = FindingSet()
    stats = RunStats()
    nblocks = geometry.nblocks
    for first in range(0, nblocks, per_wave):
        count = min(per_wave, nblocks - first)
        if first:
            mem.enter_wave(first, count)  # the first wave's stores are those `mem` was made with
        if prefix is not None:
            prefix.steps_before = stats.steps
        engine = Engine(
            program,
            geometry.wave(first, count),
            mem,
            sinks,
            policy=wave_policy(prefix.policy if prefix is not None and prefix.policy is not None else policy, first),
            max_steps=max_steps,
            progress=None if progress is None else _progress_after(stats, progress),
            limits=limits,
            first_seq=stats.events,
            prefix=prefix,
        )
        engine.run()
        _add_stats(stats, engine.stats)
        wave = engine.findings.sorted()
        if engine.stopped is not None and first + count < nblocks:
            wave = [_in_waves(f, first, count, nblocks, limits) if f.kind in STUCK else f for f in wave]
        findings.extend(wave)
        if engine.stopped is not None:
            break
        del engine  # its per-thread state goes before the next wave's is made
    return findings.sorted(), stats


def _add_stats(total: RunStats, wave: RunStats) -> None:
    total.steps += wave.steps
    total.thread_instructions += wave.thread_instructions
    total.rounds += wave.rounds
    total.events += wave.events


def _progress_after(done: RunStats, progress: Callable[[RunStats], None]) -> Callable[[RunStats], None]:
    """A progress callback for one wave that reports the statistics of the waves before it included."""

    def report(wave: RunStats) -> None:
        total = RunStats(done.steps, done.thread_instructions, done.rounds, done.events)
        _add_stats(total, wave)
        progress(total)

    return report


def _in_waves(finding: Finding, first: int, count: int, nblocks: int, limits: Limits) -> Finding:
    """`finding` (threads stuck in a wave with blocks still to come) with a cause that says so."""
    finding.cause += (
        f"; the launch ran in waves of {plural(count, 'block')} (--resident-threads {limits.resident_threads:,}), "
        f"and blocks {first + count:,} to {nblocks - 1:,} had not started: run it with --resident-threads "
        "covering the whole launch if these threads wait for one of them"
    )
    return finding
