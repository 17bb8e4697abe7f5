"""`gpurace check`: simulate one launch with race detectors attached and build the report.

The detector is chosen per launch: `auto` takes the exact, vectorised
barrier-interval detector when the kernel synchronises only with barriers, and
the scoped happens-before detector otherwise. The simulator's own findings
(out-of-bounds, barrier divergence, deadlock, ...) and the detector's races
go into one report; on request the redundant-barrier detector consumes the
same event stream and its performance notes join them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from gpurace.detect.barriers import RedundantBarrierDetector
from gpurace.detect.base import MODELS, DetectorContext
from gpurace.detect.findings import FindingSet
from gpurace.detect.hb import HappensBeforeDetector
from gpurace.detect.interval import IntervalDetector
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module
from gpurace.report.model import Report
from gpurace.sim.events import EventSink
from gpurace.sim.launch import RunResult, simulate
from gpurace.sim.program import Program

DETECTORS = ("auto", "interval", "hb")


def choose_detector(name: str, program: Program) -> type:
    if name == "hb":
        return HappensBeforeDetector
    if name == "interval":
        if not IntervalDetector.applies(program):
            raise UserError(
                "--detector interval handles kernels whose only synchronisation is barriers; "
                "this kernel uses fences, warp syncs or strong (volatile/relaxed/acquire/release) accesses: use --detector hb"
            )
        return IntervalDetector
    if name == "auto":
        return IntervalDetector if IntervalDetector.applies(program) else HappensBeforeDetector
    raise UserError(f"--detector: unknown detector {name!r} (choose from {', '.join(DETECTORS)})")


def check(
    source: str | os.PathLike | Module,
    *,
    grid,
    block,
    args: list | None = None,
    kernel: str | None = None,
    detector: str = "auto",
    model: str = "cuda",
    redundant_barriers: bool = False,
    shared_bytes: int = 0,
    seed: int = 0,
    max_steps: int = 2_000_000,
    include_dirs=(),
    defines=(),
    arch: str = DEFAULT_ARCH,
    progress=None,
    sinks: Sequence[EventSink] = (),
) -> Report:
    """Check one launch for races and synchronisation bugs; see `Report`.

    `args` as for `simulate`: one value per parameter, any of them "auto"; None means "auto" for all.
    `redundant_barriers` also reports barriers that order no conflicting accesses
    (`detect.barriers`); the report's stats then list the pcs of the barriers
    executed and needed (`stats["barriers"]`), for unions over several runs.
    `sinks` are extra event sinks that watch the same launch (the input search
    measures its fitness this way); a sink with a `bind(context)` method gets
    the launch's `DetectorContext` once memory is laid out, before any event.
    """
    if model not in MODELS:
        raise UserError(f"--model: unknown memory model {model!r} (choose from {', '.join(MODELS)})")
    if detector not in DETECTORS:
        raise UserError(f"--detector: unknown detector {detector!r} (choose from {', '.join(DETECTORS)})")
    module = source if isinstance(source, Module) else load_module(source, include_dirs=include_dirs, defines=defines, arch=arch)
    chosen: list = []
    barrier_checks: list[RedundantBarrierDetector] = []

    def attach(program, geometry, memory):
        cls = choose_detector(detector, program)
        ctx = DetectorContext(program, geometry, memory, model)
        det = cls(ctx)
        chosen.append(det)
        if redundant_barriers:
            barrier_checks.append(RedundantBarrierDetector(ctx))
        for sink in sinks:
            bind = getattr(sink, "bind", None)
            if bind is not None:
                bind(ctx)
        return [det, *barrier_checks, *sinks]

    start = time.perf_counter()
    result = simulate(
        module,
        grid=grid,
        block=block,
        args=args,
        kernel=kernel,
        shared_bytes=shared_bytes,
        seed=seed,
        max_steps=max_steps,
        sink_factory=attach,
        progress=progress,
    )
    det = chosen[0]
    extra = [f for b in barrier_checks for f in b.finish()]
    report = build_report(
        result,
        result.findings + det.finish() + extra,
        model=model,
        detector=det.name,
        shared_bytes=shared_bytes,
        args=args,
        seconds=time.perf_counter() - start,
    )
    for b in barrier_checks:
        report.stats["barriers"] = {"executed": sorted(b.executed), "needed": sorted(b.needed)}
    return report


def build_report(result: RunResult, findings: list, *, model, detector, shared_bytes, args, seconds) -> Report:
    """A Report for one simulated launch (used by `check`, and by `run` to show the simulator's findings)."""
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
    if args is None:
        args = ["auto"] * len(result.kernel.params)
    launch = {
        "grid": list(geo.grid),
        "block": list(geo.block),
        "shared_bytes": shared_bytes,
        "args": [a if isinstance(a, str) else describe_arg(a) for a in args],
        "model": model,
        "detector": detector,
    }
    if result.auto_scalars:
        launch["auto_scalars"] = [{"name": a.name, "value": a.value} for a in result.auto_scalars]
    module = result.program.module
    return Report(
        kernel=result.kernel.name,
        mangled=result.kernel.mangled,
        source=str(module.source_path) if module.source_path else None,
        launch=launch,
        findings=merged.sorted(),
        stats=stats,
    )


def describe_arg(a) -> str:
    """How a report shows an argument given as a Python value (strings are shown as given): `int32[512]`, `7`."""
    shape = getattr(a, "shape", None)
    if shape is not None:
        return f"{a.dtype}[{a.size}]"
    return repr(a)
