"""`gpurace check`: simulate one launch with race detectors attached and build the report.

The detector is chosen per launch: `auto` takes the exact, vectorised
barrier-interval detector when the kernel synchronises only with barriers, and
the predictive `gwcp` detector otherwise (scoped happens-before, plus the races
another lock order would show; it reports nothing happens-before would not
call a race in some schedule of the same path). The simulator's own findings
(out-of-bounds, barrier divergence, deadlock, ...), the detector's races and
the reads of shared memory no thread of the block wrote (`detect.initcheck`,
always on) go into one report; on request the redundant-barrier detector
consumes the same event stream and its performance notes join them.

With `schedules` N > 1 the launch runs N times, on the same input, under
schedule 0 (the default `min-pc` policy), schedule 1 (`reverse`: the last warp
first wherever order matters) and N-2 seeded `random` schedules
(`sim.schedule`: other warp and block orders, holds, preemption around
synchronisation points), each a complete check; the report is the union of
their findings (`search.union.FindingUnion`), each with the schedule that
first exposed it. By default (`schedules=None`) a kernel without atomics,
fences or strong accesses runs once (nothing in it lets the order of warps
change what a thread reads, so every schedule runs the same path, and the
interval detector is exact for it), and so does one whose only atomics are
integer reductions whose result it never reads (`order_free`); any other
kernel runs
`DEFAULT_SCHEDULES` schedules, and then, when schedule 0 saw warps contend for
an atomic's address (a lock, a ticket), the `flip` schedule in which the other
contender wins each contest (`sim.contention`): the default combination of
detectors and schedules.
`reverse` and `flip` pick as schedule 0 does until it first runs an instruction
whose order matters, so they fork from schedule 0's run there instead of
running from the start (`sim.shared_prefix`). When every access of schedule 0 sat inside a critical section
of one lock and no value another lock order lets a thread read can change its path or addresses, no other
schedule can show anything more, and schedule 0 is the only one (`_orders_covered`).

With `prove`, verify first judges the kernel for the launch's grid and block
(`verify.launch_proof`); a kernel proved race-free with uniform barriers then
needs one schedule, since no other can show a race, and the report carries
the proof section.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence

import numpy as np

from gpurace.detect.barriers import RedundantBarrierDetector
from gpurace.detect.base import MODELS, DetectorContext
from gpurace.detect.findings import FindingSet
from gpurace.detect.gwcp import GwcpDetector
from gpurace.detect.hb import HappensBeforeDetector
from gpurace.detect.initcheck import SharedInitCheck
from gpurace.detect.interval import IntervalDetector
from gpurace.detect.lockset import LocksetDetector
from gpurace.detect.tsan import TsanDetector, validate_shadow_cells
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.hip import report_notes
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module
from gpurace.limits import Limits
from gpurace.report.model import Report
from gpurace.sim.args import copy_arg
from gpurace.sim.contention import Contention
from gpurace.sim.cooperative import reads_grid_workspace
from gpurace.sim.engine import Policy
from gpurace.sim.events import EventSink
from gpurace.sim.launch import DeviceArgs, RunResult, select_kernel, simulate
from gpurace.sim.order_paths import order_independent_paths
from gpurace.sim.program import Program, build_program
from gpurace.sim.schedule import order_free, register_uses, synchronises
from gpurace.sim.shared_prefix import FORKED_POLICIES, SharedPrefix, shareable
from gpurace.words import plural

DEFAULT_SCHEDULES = 3
"""Schedules of the default check of a kernel that synchronises beyond barriers: min-pc, reverse and one random
(and `flip` after them when schedule 0 had contended atomics)."""
MAX_SCHEDULES = 1024
"""The most schedules one check explores (each is a complete simulation)."""

DETECTORS = ("auto", "interval", "hb", "gwcp", "tsan", "lockset")


def choose_detector(name: str, program: Program) -> type:
    if name == "hb":
        return HappensBeforeDetector
    if name == "gwcp":
        return GwcpDetector
    if name == "tsan":
        return TsanDetector
    if name == "lockset":
        return LocksetDetector
    if name == "interval":
        if not IntervalDetector.applies(program):
            raise UserError(
                "--detector interval handles kernels whose only synchronisation is barriers; "
                "this kernel uses fences, warp syncs, asynchronous copies, mbarriers, cluster barriers, distributed shared memory or acquire/release operations: use --detector hb"
            )
        return IntervalDetector
    if name == "auto":
        return IntervalDetector if IntervalDetector.applies(program) else GwcpDetector
    raise UserError(f"--detector: unknown detector {name!r} (choose from {', '.join(DETECTORS)})")


def check(
    source: str | os.PathLike | Module,
    *,
    grid,
    block,
    args: list | None = None,
    global_vars: Mapping[str, object] | None = None,
    kernel: str | None = None,
    detector: str = "auto",
    model: str = "cuda",
    redundant_barriers: bool = False,
    shared_bytes: int | None = None,
    seed: int = 0,
    shadow_cells: int = 4,
    schedules: int | None = None,
    max_steps: int = 2_000_000,
    include_dirs=(),
    defines=(),
    arch: str = DEFAULT_ARCH,
    progress=None,
    sinks: Sequence[EventSink] = (),
    limits: Limits | None = None,
    cooperative: bool | None = None,
    prove: bool = False,
    cluster=None,
    share_prefix: bool = True,
    benign_same_value: bool = False,
) -> Report:
    """Check one launch for races and synchronisation bugs; see `Report`.

    `args` as for `simulate`: one value per parameter, any of them "auto"; None means "auto" for all.
    `global_vars` as for `simulate`: values of `__device__` variables by name.
    `shared_bytes` None: automatic dynamic shared memory for a kernel with an `extern __shared__` array (`simulate`).
    `redundant_barriers` also reports barriers that order no conflicting accesses
    (`detect.barriers`); the report's stats then list the pcs of the barriers
    executed and needed (`stats["barriers"]`), for unions over several runs.
    `sinks` are extra event sinks that watch the same launch (the input search
    measures its fitness this way); a sink with a `bind(context)` method gets
    the launch's `DetectorContext` once memory is laid out, before any event.
    `schedules` > 1 checks that many schedules of the launch, None the default number (module docstring);
    the findings then carry `schedule`, `stats["schedules"]` lists the runs, the
    simulation counters in `stats` are their totals, and `sinks` watch every run.
    `shadow_cells` (2, 4 or 8) is the `tsan` detector's cells per 8-byte word; `seed` also seeds its evictions.
    `limits` bound the whole check (every schedule together); a schedule that runs out of time ends with a
    `timeout` finding and no later schedule runs.
    `cooperative` launches as `cudaLaunchCooperativeKernel` does (`simulate`, `sim.cooperative`); None (the
    default) launches so exactly the kernels that use `cooperative_groups::this_grid()`, the one launch in which
    their grid group is valid (`sim.cooperative.reads_grid_workspace`).
    `cluster` launches with thread-block clusters of that shape (`simulate`, `sim.clusters`).
    `prove` first verifies the kernel for this grid and block (`verify.launch_proof`): the report gains its proof
    section, and a kernel proved race-free with uniform barriers runs one schedule unless `schedules` says otherwise.
    `benign_same_value` proves with GPUVerify's convention (two stores of the same value do not race: `verify`),
    for a check whose same-value races are then left out of its report (`--benign-same-value`).
    `share_prefix` False runs every schedule from the start instead of forking `reverse` and `flip` from schedule
    0's run (`sim.shared_prefix`; the same runs and report, for comparing their cost).
    """
    if model not in MODELS:
        raise UserError(f"--model: unknown memory model {model!r} (choose from {', '.join(MODELS)})")
    if detector not in DETECTORS:
        raise UserError(f"--detector: unknown detector {detector!r} (choose from {', '.join(DETECTORS)})")
    if schedules is not None and not 1 <= schedules <= MAX_SCHEDULES:
        raise UserError(f"--schedules must be from 1 to {MAX_SCHEDULES}, got {schedules}")
    if seed < 0:
        raise UserError(f"--seed must not be negative, got {seed}")
    validate_shadow_cells(shadow_cells)
    limits = (limits or Limits()).started()
    module = source if isinstance(source, Module) else load_module(source, include_dirs=include_dirs, defines=defines, arch=arch, limits=limits)
    program = build_program(module, select_kernel(module, kernel))
    if cooperative is None:
        cooperative = reads_grid_workspace(program)
    options = dict(
        grid=grid,
        block=block,
        kernel=kernel,
        detector=detector,
        model=model,
        redundant_barriers=redundant_barriers,
        shared_bytes=shared_bytes,
        seed=seed,
        shadow_cells=shadow_cells,
        max_steps=max_steps,
        progress=progress,
        sinks=sinks,
        limits=limits,
        cooperative=cooperative,
        cluster=cluster,
    )
    asked = schedules is not None
    proof = None
    if prove:
        from gpurace.verify.launch_proof import attach_proof, prove_launch  # gpurace.verify runs checks itself

        proof = prove_launch(
            module, kernel=kernel, grid=grid, block=block, model=model, benign_same_value=benign_same_value, deadline=limits.deadline
        )
        if not asked and proof.proved:
            schedules = 1
    chosen = schedules is None
    if chosen:
        schedules = default_schedules(program)
    if schedules == 1:
        report = _check_schedule(module, Policy(), args=args, global_vars=global_vars, **options)
    else:
        report = _check_schedules(module, schedules, args=args, global_vars=global_vars, stop_at_livelock=chosen, share_prefix=share_prefix, **options)
    if proof is not None:
        attach_proof(report, proof, asked=asked)
    return report


def default_schedules(program: Program) -> int:
    """How many schedules `check` runs when not told: one when no instruction's order between warps
    matters beyond barriers (no atomics, fences or strong accesses; `order_free` reductions allowed),
    DEFAULT_SCHEDULES otherwise."""
    uses = register_uses(program)
    ordered = any(
        synchronises(ins) and ins.opcode not in ("bar", "barrier") and not order_free(ins, program.owner[pc], uses)
        for pc, ins in enumerate(program.instructions)
    )
    return DEFAULT_SCHEDULES if ordered else 1


def schedule_policy(seed: int, index: int) -> Policy:
    """The policy of schedule `index` of a check with `seed`: 0 is `min-pc`, 1 `reverse`, the others `random` with their own seed."""
    if index == 0:
        return Policy()
    if index == 1:
        return Policy("reverse")
    return Policy("random", int(np.random.SeedSequence([seed, index]).generate_state(1)[0]))


def describe_schedule(index: int, policy: Policy) -> dict:
    """What a finding records as the schedule that exposed it (`Finding.schedule`); `flip` records no gates (a
    function of schedule 0's run)."""
    return {"index": index, "policy": policy.kind, "seed": policy.seed if policy.kind == "random" else None}


def _check_schedules(
    module: Module, schedules: int, *, args, global_vars, seed, redundant_barriers, kernel, stop_at_livelock=False,
    share_prefix=True, **options,
) -> Report:
    """The union of `schedules` checks of one launch, every one on the input `args` describes.

    With `stop_at_livelock` (the default number of schedules, not one asked for), schedule 0 is watched for
    contended atomics (`sim.contention`) and, when it had any, a `flip` schedule follows the others, in
    which the runner-up of each contest wins it; and a schedule that ends in a
    livelock ends the exploration: the run spent its whole step budget, and so would the next ones; so does a
    schedule 0 that no other order can add to (`_orders_covered`: every access inside a critical section of
    one lock, on a path no lock order changes). A schedule that ends in a timeout always ends it: the time
    budget is the whole check's."""
    from gpurace.search.union import FindingUnion  # gpurace.search imports this module

    start = time.perf_counter()
    union = FindingUnion()
    # Every schedule starts from the same memory: copies of the arguments, or of a program's device memory,
    # which afterwards holds what schedule 0 left, as if only it had run.
    device = args.memory if isinstance(args, DeviceArgs) else None
    initial = device.snapshot() if device is not None else None
    left_by_first = None
    pristine = None if args is None or device is not None else [copy_arg(a) for a in args]
    pristine_vars = copy_arg(dict(global_vars or {}))
    first: Report | None = None
    ended_by = None  # what stopped the exploration before its last schedule
    runs = []
    totals = {"steps": 0, "thread_instructions": 0, "events": 0}
    watch = Contention() if stop_at_livelock else None  # the default check learns schedule 0's lock winners
    detectors: list = []  # schedule 0's race detector, asked whether other orders can race (`_orders_covered`)

    def policies():
        for index in range(schedules):
            yield index, schedule_policy(seed, index)
        if watch is not None and watch.contended():
            yield schedules, Policy("flip", gates=watch.flip_gates())

    # `reverse` and `flip` fork from schedule 0's run where their orders first differ (`sim.shared_prefix`).
    prefix = SharedPrefix() if share_prefix and shareable(options["sinks"]) else None
    try:
        for index, policy in policies():
            follows = index > 0 and policy.kind in FORKED_POLICIES
            if follows and prefix is not None and prefix.state != "declined":
                # still pending: schedule 0 ran no instruction whose order matters, so this schedule is its run
                report = first if prefix.pending else prefix.run(policy, options["sinks"])
                min_pc_steps = prefix.min_pc_steps(report.stats["steps"])
            else:
                if device is not None and index > 0:
                    left_by_first = left_by_first or device.snapshot()
                    device.restore(initial)
                run_args = args if index == 0 or pristine is None else [copy_arg(a) for a in pristine]
                run_vars = global_vars if index == 0 else copy_arg(pristine_vars)
                run_options = {**options, "sinks": [*options["sinks"], watch]} if index == 0 and watch is not None else options
                # a follower runs as the forked worker would: min-pc up to the fork point, then its policy
                run_prefix = SharedPrefix(follow=policy) if follows else prefix if index == 0 else None
                try:
                    report = _check_schedule(
                        module, Policy() if follows else policy, args=run_args, global_vars=run_vars, seed=seed,
                        redundant_barriers=redundant_barriers, kernel=kernel, prefix=run_prefix,
                        detectors=detectors if index == 0 else None, **run_options,
                    )  # fmt: skip
                except BaseException as error:
                    if prefix is not None and prefix.role == "worker":
                        prefix.finish(error=error)
                    raise
                if prefix is not None and prefix.role == "worker":
                    prefix.finish(report, options["sinks"])
                min_pc_steps = run_prefix.min_pc_steps(report.stats["steps"]) if follows else None
            if first is None:
                first = report
            schedule = describe_schedule(index, policy)
            new = union.add(report, schedule=schedule)
            run = {**schedule, "steps": report.stats["steps"], "findings": len(report.findings), "new": new}
            if follows:
                run["min_pc_steps"] = min_pc_steps
            runs.append(run)
            for key in totals:
                totals[key] += report.stats[key]
            if options["limits"].expired():
                ended_by = "timeout"
            elif stop_at_livelock and any(f.kind == "livelock" for f in report.findings):
                ended_by = "livelock"
            elif stop_at_livelock and index == 0 and not redundant_barriers and _orders_covered(detectors, options["sinks"]):
                ended_by = "locks"
            if ended_by is not None:
                break
    finally:
        if prefix is not None:
            prefix.close()
    if left_by_first is not None:
        device.restore(left_by_first)
    program = build_program(module, select_kernel(module, kernel)) if redundant_barriers else None
    stats = {**first.stats, **totals, "seconds": round(time.perf_counter() - start, 4), "schedules": runs}
    stats.pop("barriers", None)
    barriers = union.barriers()
    if barriers is not None:
        stats["barriers"] = barriers
    return Report(
        kernel=first.kernel,
        mangled=first.mangled,
        source=first.source,
        launch={**first.launch, "schedules": {"count": len(runs), "seed": seed, **({"planned": schedules, "ended_by": ended_by} if ended_by else {})}},
        findings=union.findings(program),
        stats=stats,
    )


def _orders_covered(detectors: list, sinks) -> bool:
    """Whether schedule 0's run shows what every other schedule would: every access sat inside a critical
    section of one lock (`detect.lock_confinement`, asked of `gwcp`), and no value another lock order lets a
    thread read can change its path or addresses (`sim.order_paths`). Event sinks that watch every schedule
    (`sim.shared_prefix.shareable`) keep their schedules (under `exec`, the uninitialised-read check of device
    memory), and so does `--redundant-barriers` (a barrier is redundant when no schedule needed it)."""
    if len(detectors) != 1 or not isinstance(detectors[0], GwcpDetector) or not detectors[0].confined():
        return False
    if not all(getattr(s, "first_run_only", False) for s in sinks):
        return False
    return order_independent_paths(detectors[0].ctx.program)


def _check_schedule(
    module: Module,
    policy: Policy,
    *,
    grid,
    block,
    args,
    global_vars,
    kernel,
    detector,
    model,
    redundant_barriers,
    shared_bytes,
    seed,
    shadow_cells,
    max_steps,
    progress,
    sinks,
    limits,
    cooperative,
    cluster=None,
    prefix=None,
    detectors: list | None = None,
) -> Report:
    """One simulated launch under `policy` with the detectors attached (the uninitialised-read check of shared
    memory always: it costs little beside a race detector); `detectors`, when given, receives the race detectors."""
    chosen: list = []
    barrier_checks: list[RedundantBarrierDetector] = []
    init_checks: list[SharedInitCheck] = []

    def attach(program, geometry, memory):
        cls = choose_detector(detector, program)
        ctx = DetectorContext(program, geometry, memory, model, shadow_cells=shadow_cells, seed=seed)
        det = cls(ctx)
        chosen.append(det)
        if memory.shared.size:
            init_checks.append(SharedInitCheck(ctx, limits))
        if redundant_barriers:
            barrier_checks.append(RedundantBarrierDetector(ctx))
        for sink in sinks:
            bind = getattr(sink, "bind", None)
            if bind is not None:
                bind(ctx)
        return [det, *init_checks, *barrier_checks, *sinks]

    start = time.perf_counter()
    result = simulate(
        module,
        grid=grid,
        block=block,
        args=args,
        global_vars=global_vars,
        kernel=kernel,
        shared_bytes=shared_bytes,
        seed=seed,
        policy=policy,
        max_steps=max_steps,
        sink_factory=attach,
        progress=progress,
        limits=limits,
        cooperative=cooperative,
        cluster=cluster,
        prefix=prefix,
    )
    det = chosen[0]
    if detectors is not None:
        detectors.extend(chosen)
    extra = [f for b in [*barrier_checks, *init_checks] for f in b.finish()]
    report = build_report(
        result,
        result.findings + det.finish() + extra,
        model=model,
        detector=det.name,
        args=args,
        global_vars=global_vars,
        seconds=time.perf_counter() - start,
    )
    for b in barrier_checks:
        report.stats["barriers"] = {"executed": sorted(b.executed), "needed": sorted(b.needed)}
    if cooperative:
        report.launch["cooperative"] = True
    if result.geometry.explicit_cluster:
        report.launch["cluster"] = list(result.geometry.cluster)
    return report


def build_report(result: RunResult, findings: list, *, model, detector, args, seconds, global_vars=None) -> Report:
    """A Report for one simulated launch (used by `check`, and by `run` to show the simulator's findings);
    `global_vars` are the `__device__` variables the launch was given, shown like `args`."""
    merged = FindingSet()
    merged.extend(findings)
    geo = result.geometry
    stats = {
        "threads": geo.nthreads,
        "steps": result.stats.steps,
        "thread_instructions": result.stats.thread_instructions,
        "events": result.stats.events,
        "seconds": round(seconds, 4),
    }
    if result.buffers:
        stats["buffers"] = [u.as_dict() for u in result.buffers]
    if result.dynamic_shared is not None:
        stats["dynamic_shared"] = result.dynamic_shared.as_dict()
    if args is None:
        args = ["auto"] * len(result.kernel.params)
    launch = {
        "grid": list(geo.grid),
        "block": list(geo.block),
        "shared_bytes": result.shared_bytes,
        "args": describe_args(args),
        "model": model,
        "detector": detector,
    }
    if global_vars:
        launch["global_vars"] = {name: describe_args([value])[0] for name, value in global_vars.items()}
    if result.auto_scalars:
        launch["auto_scalars"] = [
            {"name": a.name, "value": a.value, **({"note": a.note} if a.note else {})} for a in result.auto_scalars
        ]
    module = result.program.module
    notes = report_notes([module])
    if notes:
        launch["notes"] = notes
    return Report(
        kernel=result.kernel.name,
        mangled=result.kernel.mangled,
        source=str(module.source_path) if module.source_path else None,
        launch=launch,
        findings=merged.sorted(),
        stats=stats,
    )


def describe_args(args) -> list[str]:
    """The arguments as a report shows them: specs as given, Python values described, a program's parameter bytes."""
    if isinstance(args, DeviceArgs):
        return [f"{plural(len(args.params), 'byte')} of parameters from the host program"]
    return [a if isinstance(a, str) else describe_arg(a) for a in args]


def describe_arg(a) -> str:
    """How a report shows an argument given as a Python value (strings are shown as given): `int32[512]`, `7`."""
    shape = getattr(a, "shape", None)
    if shape is not None:
        return f"{a.dtype}[{a.size}]"
    if isinstance(a, dict):  # a struct's fields
        return "{" + ", ".join(f"{k}: {v if isinstance(v, str) else describe_arg(v)}" for k, v in a.items()) + "}"
    return repr(a)
