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


class Detector(Protocol):
    name: str

    def on_event(self, event: Event) -> None: ...

    def finish(self) -> list[Finding]: ...
