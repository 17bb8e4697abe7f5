"""`gpurace check`: simulate one launch with race detectors attached and build the report.

The detector is chosen per launch: `auto` takes the exact, vectorised
barrier-interval detector when the kernel synchronises only with barriers, and
the scoped happens-before detector otherwise. The simulator's own findings
(out-of-bounds, barrier divergence, deadlock, ...) and the detector's races
go into one report.
"""

from __future__ import annotations

import os
import time

from gpurace.detect.base import MODELS, DetectorContext
from gpurace.detect.findings import FindingSet
from gpurace.detect.hb import HappensBeforeDetector
from gpurace.detect.interval import IntervalDetector
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module
from gpurace.report.model import Report
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
    args: list,
    kernel: str | None = None,
    detector: str = "auto",
    model: str = "cuda",
    shared_bytes: int = 0,
    seed: int = 0,
    max_steps: int = 2_000_000,
    include_dirs=(),
    defines=(),
    arch: str = DEFAULT_ARCH,
    progress=None,
) -> Report:
    """Check one launch for races and synchronisation bugs; see `Report`."""
    if model not in MODELS:
        raise UserError(f"--model: unknown memory model {model!r} (choose from {', '.join(MODELS)})")
    if detector not in DETECTORS:
        raise UserError(f"--detector: unknown detector {detector!r} (choose from {', '.join(DETECTORS)})")
    module = source if isinstance(source, Module) else load_module(source, include_dirs=include_dirs, defines=defines, arch=arch)
    chosen: list = []

    def attach(program, geometry, memory):
        cls = choose_detector(detector, program)
        det = cls(DetectorContext(program, geometry, memory, model))
        chosen.append(det)
        return [det]

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
    return build_report(
        result,
        result.findings + det.finish(),
        model=model,
        detector=det.name,
        shared_bytes=shared_bytes,
        args=args,
        seconds=time.perf_counter() - start,
    )


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
    launch = {
        "grid": list(geo.grid),
        "block": list(geo.block),
        "shared_bytes": shared_bytes,
        "args": [a if isinstance(a, str) else _describe_arg(a) for a in args],
        "model": model,
        "detector": detector,
    }
    module = result.program.module
    return Report(
        kernel=result.kernel.name,
        mangled=result.kernel.mangled,
        source=str(module.source_path) if module.source_path else None,
        launch=launch,
        findings=merged.sorted(),
        stats=stats,
    )


def _describe_arg(a) -> str:
    shape = getattr(a, "shape", None)
    if shape is not None:
        return f"{a.dtype}[{a.size}]"
    return repr(a)
