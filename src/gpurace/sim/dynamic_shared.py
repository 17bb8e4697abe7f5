"""Automatic dynamic shared memory: the size of `extern __shared__` arrays when the launch does not give one.

A kernel that declares `extern __shared__ float buf[];` gets its size from
the launch (`<<<grid, block, bytes>>>`, `--shared-bytes`). Without one, 0
bytes would make every access to the array out of bounds, which says nothing
about the kernel. So when `--shared-bytes` is not given and the kernel has
such an array, a first run (the same launch, without detectors) gives every
block AUTO_SHARED_TOTAL bytes of shared memory in all, the most a launch gets
without opting in to more (`cudaFuncSetAttribute`), and `SharedUsageTracker`
records one past the highest byte of the dynamic area that any block touched.
The checked launch then gets exactly that many bytes: what the kernel's
indexing needs, and what `--shared-bytes` would have to be.

Why not simply check the launch with the generous size: the race detectors
keep a dense history per byte of shared memory (tens of bytes per byte, for
every block), so 48 KiB per block that the kernel mostly never touches would
cost gigabytes on a large grid; the first run costs one simulation without
detectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.sim.events import AccessBatch, Event
from gpurace.sim.memory import Space
from gpurace.sim.memory.layout import CANON_OFFSET_MASK, MAX_STATIC_SHARED_BYTES, SharedLayout

AUTO_SHARED_TOTAL = MAX_STATIC_SHARED_BYTES
"""Shared memory per block (static and dynamic) of a launch whose dynamic size is automatic: 48 KiB, what every
GPU gives a launch that does not opt in to more."""


def has_extern_shared(shared_vars) -> bool:
    """Whether the kernel declares an `extern __shared__` array (a `.shared` variable of size 0 in PTX)."""
    return any(v.size == 0 for v in shared_vars)


def automatic_dynamic_bytes(shared_vars) -> int:
    """The dynamic shared memory of a launch that gives none: what is left of AUTO_SHARED_TOTAL after the static
    variables (laid out as the simulator lays them out), 0 when they take it all."""
    static = SharedLayout([(v.name, v.size, v.align or v.elem_size) for v in shared_vars], 0).dynamic_base
    return max(AUTO_SHARED_TOTAL - static, 0)


@dataclass(frozen=True)
class SharedUsage:
    """Automatic dynamic shared memory: `name` of its extern arrays, the `bytes` per block the launch got (what the
    first run used), and the `first_run_bytes` per block of that first run."""

    name: str
    bytes: int
    first_run_bytes: int

    def as_dict(self) -> dict:
        return {"name": self.name, "bytes": self.bytes, "first_run_bytes": self.first_run_bytes}


class SharedUsageTracker:
    """Event sink: the extent of the dynamic shared area that accesses reached, over every block."""

    def __init__(self, layout: SharedLayout):
        self.layout = layout
        self.extent = 0

    def on_event(self, event: Event) -> None:
        if not isinstance(event, AccessBatch):
            return
        shared = event.space == Space.SHARED
        if not shared.any():
            return
        offsets = (event.addrs[shared] & np.uint64(CANON_OFFSET_MASK)).astype(np.int64)
        top = int(offsets.max()) + event.size - self.layout.dynamic_base
        self.extent = max(self.extent, top)

    def usage(self) -> SharedUsage:
        """What the run used, as the size of the next launch."""
        return SharedUsage(self.layout.dynamic.name, self.extent, self.layout.dynamic.size)
