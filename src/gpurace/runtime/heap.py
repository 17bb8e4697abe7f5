"""The program's own allocations (`cudaMalloc`, `cudaMallocManaged`, `cudaMallocHost`) and what became of them.

Each is placed in the global arena after everything before it, with a red
zone, at the start of a page, so that no two share a page (the host's access
to each is then controlled page by page: `protection.py`), and its address
is never handed out again: a copy or a kernel access
through a stale pointer lands in a freed block, which is reported as a use
after free, never in a newer allocation. A freed block's pages go back to
the system (they read as zeros), so a program that allocates and frees in
a loop uses address space, not memory; the arena is large enough for
ordinary programs, and one that runs out gets `cudaErrorMemoryAllocation`.

`protection` says which of their pages the program's host code may touch
(`protection.py`). `written` records which bytes of `cudaMalloc` memory hold a value (copies,
memsets and kernels write them), for the uninitialised-read check
(`detect.initcheck`). Managed and page-locked host memory count as written
from the start: the host may write them directly, which gpurace cannot see.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurace.detect.initcheck import DeviceWrites
from gpurace.runtime.arena import Arena
from gpurace.runtime.protection import Protection
from gpurace.runtime.protocol import MemoryKind, WireSite
from gpurace.sim.memory.layout import PAGE_SIZE, Allocation

ALLOCATING_CALL = {
    MemoryKind.DEVICE: "cudaMalloc",
    MemoryKind.MANAGED: "cudaMallocManaged",
    MemoryKind.HOST: "cudaMallocHost",
}


@dataclass
class Block:
    """One allocation of the program: where it is, its kind, and where it was allocated and freed."""

    allocation: Allocation
    kind: MemoryKind
    allocated_at: WireSite
    freed_at: WireSite | None = None

    @property
    def host_visible(self) -> bool:
        """Managed and page-locked host memory is host memory too; `cudaMalloc` memory is not."""
        return self.kind is not MemoryKind.DEVICE


class Heap:
    """The blocks of one run, by base address."""

    def __init__(self, arena: Arena):
        self.arena = arena
        self.blocks: dict[int, Block] = {}
        self.host_visible: dict[int, Block] = {}  # the live blocks the host may touch (managed, page-locked), by base
        self.written = DeviceWrites()
        self.protection = Protection()

    def allocate(self, size: int, kind: MemoryKind, site: WireSite) -> Block | None:
        """A new block of `size` bytes, or None when the arena has no room for it."""
        name = f"{ALLOCATING_CALL[kind]}#{len(self.blocks) + 1}"
        try:
            alloc = self.arena.table.place(name, size, PAGE_SIZE)
        except MemoryError:
            return None
        block = Block(alloc, kind, site)
        self.blocks[alloc.base] = block
        if kind is MemoryKind.DEVICE:
            self.written.allocated(alloc.base, alloc.size)
            self.protection.closed(alloc)
        else:
            self.host_visible[alloc.base] = block
        return block

    def block_at(self, address: int) -> Block | None:
        """The block whose bytes include `address`, freed or not."""
        alloc = self.arena.table.find(address)
        return self.blocks.get(alloc.base) if alloc is not None else None

    def freed(self, allocation: Allocation) -> bool:
        block = self.blocks.get(allocation.base)
        return block is not None and block.freed_at is not None

    def free(self, block: Block, site: WireSite) -> None:
        block.freed_at = site
        self.host_visible.pop(block.allocation.base, None)
        self.protection.closed(block.allocation)
        self.arena.release(block.allocation.base, block.allocation.size)
        self.written.freed(block.allocation.base, block.allocation.size)

    def live(self) -> list[Block]:
        return [b for b in self.blocks.values() if b.freed_at is None]

    def free_all(self, site: WireSite) -> None:
        for block in self.live():
            self.free(block, site)
