"""Replaying a trace: the detectors run over its events as they would over a simulation's.

The detectors need a `DetectorContext`; a trace has no PTX module, simulator
memory or launch behind it, so this module builds stand-ins holding just what
the detectors read: `TraceProgram` (the trace's instructions, to turn pcs into
sites and to pick the detector), a `Geometry` from the declared grid and block,
and `TraceMemory` (the declared variables, to name addresses). `analyze` is
`gpurace analyze`: read a trace in either format, run one detector, build the
same kind of `Report` that `check` builds.
"""

from __future__ import annotations

import bisect
import os
import time
from dataclasses import dataclass

from gpurace.check import DETECTORS, choose_detector
from gpurace.detect.base import MODELS, DetectorContext
from gpurace.detect.findings import FindingSet
from gpurace.detect.tsan import validate_shadow_cells
from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Instruction
from gpurace.limits import LimitExceeded, Limits
from gpurace.report.model import Report
from gpurace.sim.geometry import Geometry
from gpurace.sim.memory.layout import CANON_OFFSET_MASK, CANON_SHARED_TAG, CANON_TAG_MASK, Location, Space
from gpurace.trace import binary, text
from gpurace.trace.bounds import check_shadow
from gpurace.trace.model import Trace, TraceVariable


@dataclass(frozen=True)
class TraceProgram:
    """The part of `sim.program.Program` the detectors use: instructions by pc and the function owning each."""

    instructions: list[Instruction]
    owner: list[str]

    def where(self, pc: int) -> str:
        return self.instructions[pc].where()


class _SharedNames:
    """The part of `SharedLayout` the detectors use: the per-block stride and the variable at an offset."""

    def __init__(self, variables: list[TraceVariable], stride: int) -> None:
        self.variables = sorted(variables, key=lambda v: v.base)
        self.stride = stride

    def find(self, offset: int) -> TraceVariable | None:
        return _find(self.variables, offset)


class TraceMemory:
    """The part of `sim.memory.Memory` the detectors use: `shared.stride`, `nblocks` and `describe` (canonical
    address -> name, offset)."""

    def __init__(self, variables: list[TraceVariable], shared_stride: int, nblocks: int) -> None:
        self.shared = _SharedNames([v for v in variables if v.space == "shared"], shared_stride)
        self.nblocks = nblocks  # every block of a trace's launch is alive at once (`detect.shared_slots`)
        self.globals = sorted((v for v in variables if v.space == "global"), key=lambda v: v.base)

    def describe(self, canonical: int) -> Location:
        c = int(canonical)
        if c & CANON_TAG_MASK == CANON_SHARED_TAG:
            offset = c & CANON_OFFSET_MASK
            v = self.shared.find(offset)
            return Location(Space.SHARED, v.name, offset - v.base) if v else Location(Space.SHARED, None, offset)
        v = _find(self.globals, c)
        return Location(Space.GLOBAL, v.name, c - v.base) if v else Location(Space.GLOBAL, None, c)


def _find(variables: list[TraceVariable], address: int) -> TraceVariable | None:
    i = bisect.bisect_right(variables, address, key=lambda v: v.base) - 1
    return variables[i] if i >= 0 and address < variables[i].end else None


def context_of(trace: Trace, model: str, *, shadow_cells: int = 4, seed: int = 0) -> DetectorContext:
    """The DetectorContext of a trace (see the module docstring)."""
    program = TraceProgram(trace.instructions, trace.owner)
    geometry = Geometry.create(trace.grid, trace.block)
    memory = TraceMemory(trace.variables, trace.shared_stride, geometry.nblocks)
    return DetectorContext(program, geometry, memory, model, shadow_cells=shadow_cells, seed=seed)


def read_trace(path: str | os.PathLike, limits: Limits | None = None) -> Trace:
    """A trace file in either format, told apart by content: binary traces start with the zip magic, text traces are text.

    Both readers check everything they read (a malformed trace is a UserError
    naming the file and the field or line) against `limits` (default: `Limits()`).
    """
    try:
        with open(path, "rb") as f:
            head = f.read(len(binary.MAGIC))
    except OSError as e:
        raise UserError(f"{path}: cannot read trace: {e.strerror}") from None
    if head == binary.MAGIC:
        return binary.read(path, limits)
    return text.read(path, limits)


def analyze(
    path: str | os.PathLike, *, detector: str = "auto", model: str = "cuda", shadow_cells: int = 4, limits: Limits | None = None
) -> Report:
    """Run one detector over the trace in `path`; the report is what `check` gives for the same events
    (`shadow_cells`: the `tsan` detector's cells per 8-byte word; its evictions use seed 0). A trace whose
    detector state would not fit the memory budget of `limits` is refused before the detector starts, and one
    whose analysis outlasts the time budget stops with a LimitExceeded."""
    if model not in MODELS:
        raise UserError(f"--model: unknown memory model {model!r} (choose from {', '.join(MODELS)})")
    if detector not in DETECTORS:
        raise UserError(f"--detector: unknown detector {detector!r} (choose from {', '.join(DETECTORS)})")
    validate_shadow_cells(shadow_cells)
    start = time.perf_counter()
    limits = limits or Limits()
    trace = read_trace(path, limits)
    check_shadow(trace.events, trace.shared_stride, limits, str(path))
    ctx = context_of(trace, model, shadow_cells=shadow_cells)
    det = choose_detector(detector, ctx.program)(ctx)
    limits = limits.started()
    for i, event in enumerate(trace.events):
        if i % 1024 == 0 and limits.expired():
            raise LimitExceeded(
                f"{path}: the analysis exceeded its wall-clock budget of {limits.timeout:g} s (--timeout) "
                f"after {i:,} of {len(trace.events):,} events"
            )
        det.on_event(event)
    findings = FindingSet()
    findings.extend(det.finish())
    return Report(
        kernel=trace.kernel,
        mangled=trace.mangled,
        source=trace.source,
        launch={
            "grid": list(trace.grid),
            "block": list(trace.block),
            "args": [],
            "model": model,
            "detector": det.name,
            "trace": str(path),
        },
        findings=findings.sorted(),
        stats={
            "threads": ctx.geometry.nthreads,
            "events": len(trace.events),
            "seconds": round(time.perf_counter() - start, 4),
        },
    )
