"""Recording a simulation: an event sink that keeps the event stream and what is needed to replay it.

`gpurace check --record TRACE` attaches a `TraceRecorder` next to the
detector (`check(..., sinks=[recorder])`): `bind` receives the launch's
`DetectorContext` once memory is laid out, `on_event` every event the
detector sees. The recorder keeps the geometry, the program's instructions
(for sites and for `--detector auto`), and the names and addresses of every
global allocation and shared variable, so that a replay reports the same
findings at the same source lines, naming the same memory.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.errors import UserError
from gpurace.sim.events import AccessBatch, Event, SyncEvent
from gpurace.trace.binary import VALUE_FIELDS
from gpurace.trace.model import Trace, TraceVariable


class TraceRecorder:
    """An event sink that records one launch (see the module docstring); `trace` returns what it recorded."""

    def __init__(self) -> None:
        self.ctx: DetectorContext | None = None
        self.events: list[Event] = []

    def bind(self, ctx: DetectorContext) -> None:
        if self.ctx is not None:
            raise UserError("a trace records one launch")
        self.ctx = ctx

    def on_event(self, event: Event) -> None:
        # Copies: the simulator may reuse the arrays it hands out once the event is consumed.
        if isinstance(event, AccessBatch):
            arrays = {f: getattr(event, f) for f in ("threads", "addrs", "space", *VALUE_FIELDS)}
            event = replace(event, **{f: None if a is None else np.array(a) for f, a in arrays.items()})
        elif isinstance(event, SyncEvent):
            event = replace(event, threads=np.array(event.threads), groups=np.array(event.groups), pcs=np.array(event.pcs))
        else:
            event = replace(event, threads=np.array(event.threads))
        self.events.append(event)

    def trace(self, *, kernel: str, mangled: str = "", source: str | None = None) -> Trace:
        """The recorded launch as a Trace (the kernel's names come from the report)."""
        if self.ctx is None:
            raise RuntimeError("TraceRecorder.trace() before the launch bound it")
        program, memory, geo = self.ctx.program, self.ctx.memory, self.ctx.geometry
        variables = [TraceVariable(a.name, "global", a.canonical_base, a.size) for a in memory.global_allocations()]
        variables += [TraceVariable(a.name, "shared", a.base, a.size) for a in memory.shared.allocations()]
        return Trace(
            grid=geo.grid,
            block=geo.block,
            kernel=kernel,
            variables=variables,
            shared_stride=memory.shared.stride,
            instructions=list(program.instructions),
            owner=list(program.owner),
            events=self.events,
            mangled=mangled,
            source=source,
        )
