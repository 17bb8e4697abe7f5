"""Where the program's device-only memory is addressed: far apart, so that no out-of-bounds access reaches another.

A `cudaMalloc` pointer is opaque to the host on a GPU: the program may not
dereference it, only hand it back to the runtime and to kernels. So under
`gpurace exec` its value need not be where its bytes are. The bytes of every
device-only allocation (`cudaMalloc` and its variants: pitched, 3D, stream-
ordered and pool allocations) lie in the global arena, packed a page apart
like everything else there; its address is in the device-only window
[WINDOW_BASE, WINDOW_BASE + WINDOW_BYTES), GAP_BYTES of address space after
the allocation before it. The allocation's `shift` (`sim.memory.layout.
Allocation`) is the distance between the two, as for `gpurace check`'s
automatic buffers: the simulator's accesses, the detectors (which see
canonical addresses: where the bytes are) and the runtime's own records are
unchanged, and an access that runs up to GAP_BYTES past one allocation, or
before it, lands in no allocation and is reported as out of bounds, never as
an access to a neighbour (a signed 32-bit index of elements of up to 8 bytes
reaches no farther).

The program's process reserves the window (no memory, no access: the shim
maps it `PROT_NONE`), so that none of its own memory is ever there, a
`cudaMemcpyDefault` can tell device pointers from host ones, and host code
that dereferences a `cudaMalloc` pointer faults and is reported.

The window holds WINDOW_BYTES // (GAP_BYTES + size) allocations. Its address
space is handed out once, in order; when it is used up, the addresses of the
oldest freed allocations that leave room for the new one are reused (a stale
pointer into such a range then reaches the new allocation); when none does,
the allocation is addressed where its bytes are, in the arena, a page from
its neighbours (`Spread.take` answers None).

`__device__` arrays are addressed here too (`device.Device._place_variables`).
Memory the host dereferences (managed, page-locked, registered, `__managed__`
variables) keeps the address of its bytes in the arena, which the program
maps there; so do `__device__` scalars, `__constant__` variables, graph
memory and the driver's virtual memory, whose addresses come from reserved
ranges.
"""

from __future__ import annotations

from collections import deque

from gpurace.sim.memory.layout import PAGE_SIZE, align_up

WINDOW_BASE = 0x100_0000_0000
"""1 TiB: above the arenas (`layout.GLOBAL_BASE`, at most `device.MAX_GLOBAL_ARENA_BYTES` long) and far below where
Linux puts a program's own mappings (from 0x5555_5555_0000 for its executable, from a third of the address space
up, 0x2aaa_aaaa_b000, for its libraries when its stack is unlimited)."""
WINDOW_BYTES = 40 << 40
"""40 TiB, up to 41 TiB: 2,560 allocations of up to a few pages at once."""
GAP_BYTES = 16 << 30
"""16 GiB: how far an index of a signed 32-bit int reaches with elements of up to 8 bytes (`double`, `long`)."""


class Spread:
    """The device-only window of one run: what it has handed out, and the ranges freed allocations gave back."""

    def __init__(self, base: int = WINDOW_BASE, nbytes: int = WINDOW_BYTES, gap: int = GAP_BYTES):
        self.base = base
        self.limit = base + nbytes
        self.gap = gap
        self._next = base  # the start of the address space not handed out yet
        self._freed: deque[tuple[int, int]] = deque()  # (start, end) of the ranges freed allocations held, oldest first

    def contains(self, address: int) -> bool:
        return self.base <= address < self.limit

    def take(self, nbytes: int) -> int | None:
        """The address of a new allocation of `nbytes`, GAP_BYTES after what comes before it (page-aligned), or
        None when the window has no room for it."""
        need = self.gap + align_up(max(nbytes, 1), PAGE_SIZE)
        if self._next + need <= self.limit:
            start, self._next = self._next, self._next + need
            return start + self.gap
        for i, (start, end) in enumerate(self._freed):
            if end - start >= need:
                del self._freed[i]
                return start + self.gap
        return None

    def give_back(self, address: int, nbytes: int) -> None:
        """The allocation `take` gave `address` for `nbytes` was freed: its range may be handed out again, once
        the window's fresh address space is used up."""
        self._freed.append((address - self.gap, address + align_up(max(nbytes, 1), PAGE_SIZE)))
