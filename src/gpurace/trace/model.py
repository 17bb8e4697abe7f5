"""The trace's data types: what a detector needs of one launch, with no simulator behind it.

The events are the simulator's own types (`sim.events`), so a replayed trace
drives the detectors exactly as a simulation does. Around them a trace keeps
what the `DetectorContext` would otherwise provide: the launch geometry, the
instructions (pc -> opcode, modifiers, source location) that turn event pcs
into report sites and tell `--detector auto` which detector applies, and the
named memory (variables with their addresses) that turns canonical addresses
into `name+offset` in reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpurace.frontend.ptx.ir import Instruction
from gpurace.sim.events import Event


@dataclass(frozen=True)
class TraceVariable:
    """A named memory range: `space` is "shared" (base: offset in each block's shared memory) or "global" (base: address)."""

    name: str
    space: str
    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclass
class Trace:
    """One launch as the detectors see it (see the module docstring).

    `instructions[pc]` and `owner[pc]` (the function holding it) for every pc
    an event names; `shared_stride` is the bytes of shared memory per block in
    canonical shared addresses (`1 << 62 | block << 32 | offset`).
    """

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    kernel: str
    variables: list[TraceVariable]
    shared_stride: int
    instructions: list[Instruction]
    owner: list[str]
    events: list[Event] = field(default_factory=list)
    mangled: str = ""
    source: str | None = None
