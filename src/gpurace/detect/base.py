"""What every detector gets and implements.

A detector is an event sink: the simulator feeds it the event stream of one
launch in execution order (`on_event`), then `finish` returns its findings.
Detectors see only events plus this context (never PTX text): the program to
turn pcs into sites, the geometry to turn thread ids into coordinates, the
memory to name allocations, and the memory-model preset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gpurace.detect.findings import Finding
from gpurace.sim.events import Event
from gpurace.sim.geometry import Geometry
from gpurace.sim.memory import Memory
from gpurace.sim.program import Program

MODELS = ("cuda", "ptx", "scord")


@dataclass(frozen=True)
class DetectorContext:
    program: Program
    geometry: Geometry
    memory: Memory
    model: str = "cuda"
    shadow_cells: int = 4
    """Shadow cells per 8-byte word (2, 4 or 8) for the `tsan` detector."""
    seed: int = 0
    """Seed of every random choice a detector makes (`tsan`'s evictions), so that a run is reproducible."""


class Detector(Protocol):
    name: str

    def on_event(self, event: Event) -> None: ...

    def finish(self) -> list[Finding]: ...
