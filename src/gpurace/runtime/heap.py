"""The program's own allocations (`cudaMalloc`, `cudaMallocManaged`, `cudaMallocHost`), the host memory it
registers (`cudaHostRegister`), and what became of them.

Each is placed in the global arena after everything before it, with a red
zone, at the start of a page (registered memory: see below), so that no two share a page (the host's access
to each is then controlled page by page: `protection.py`). `cudaMalloc` memory, which the host never
dereferences, is addressed in the device-only window instead, far from every other allocation
(`spread.py`); its `Allocation.shift` says where its bytes are in the arena, and every record here of
bytes (`written`, `protection`, the pages given back) is of those, the arena's. An address
is never handed out again (but in a window used up: `spread.py`): a copy or a kernel access
through a stale pointer lands in a freed block, which is reported as a use
after free, never in a newer allocation. A freed block's pages go back to
the system (they read as zeros), so a program that allocates and frees in
a loop uses address space, not memory; the arena is large enough for
ordinary programs, and one that runs out gets `cudaErrorMemoryAllocation`.

A free also unmaps the block's address space, as a GPU's driver unmaps a freed allocation's pages: its
allocation leaves the arena's table, so a kernel that touches it faults (out of bounds, and
`cudaErrorIllegalAddress`), and the block stays known, freed, in `_freed` (by address), for the findings
that name it (`freed_block_at`) and the host checks (`block_at`). Only graph allocations and mappings of the
driver's virtual memory management come back at an address once used (`place`, `map`), replacing what was
freed there.

`protection` says which of their pages the program's host code may touch
(`protection.py`). `written` records which bytes of `cudaMalloc` memory hold a value (copies,
memsets and kernels write them), for the uninitialised-read check
(`detect.initcheck`). Managed, page-locked and registered host memory count as written
from the start: the host may write them directly, which gpurace cannot see.

Registered host memory is the program's own (`malloc`, the stack, ...):
its block is where the device sees it, and the shim makes the program's
pages the block's (see "Registered host memory" in `shim/cudart.c`). The
block keeps the offset the host address has in its page, so that both
share their whole pages, and its bounds are exactly the range registered:
a kernel access past it is out of bounds, as a GPU's would fault. Live
registrations never overlap (`registered_at` finds the one holding a host
address), and a registration ends with `cudaHostUnregister`, like a free.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace

import numpy as np

from gpurace.detect.initcheck import DeviceWrites
from gpurace.limits import shift_address_limit
from gpurace.runtime.arena import Arena
from gpurace.runtime.protection import Protection
from gpurace.runtime.protocol import MemoryKind, WireSite
from gpurace.sim.memory.layout import PAGE_SIZE, Allocation

ALLOCATING_CALL = {
    MemoryKind.DEVICE: "cudaMalloc",
    MemoryKind.MANAGED: "cudaMallocManaged",
    MemoryKind.HOST: "cudaMallocHost",
    MemoryKind.REGISTERED: "cudaHostRegister",
}


def allocating_call(kind: MemoryKind, site: WireSite) -> str:
    """The call that allocates memory of `kind`, as findings name it: the runtime's (`cudaMalloc` for `cudaMalloc`
    and its variants), or the driver's that `site` made (`cuMemAlloc`), for a program of the driver API."""
    return site.call if site.call.startswith("cu") and not site.call.startswith("cuda") else ALLOCATING_CALL[kind]


@dataclass
class Block:
    """One allocation of the program: where it is, its kind, and where it was allocated and freed; `flags` are
    those cudaHostAlloc or cudaHostRegister was given, and `host` is where registered memory is in the program."""

    allocation: Allocation
    kind: MemoryKind
    allocated_at: WireSite
    freed_at: WireSite | None = None
    flags: int = 0
    host: int | None = None

    @property
    def allocating_call(self) -> str:
        return allocating_call(self.kind, self.allocated_at)

    @property
    def host_visible(self) -> bool:
        """Managed, page-locked and registered host memory is host memory too; `cudaMalloc` memory is not."""
        return self.kind is not MemoryKind.DEVICE


class Heap:
    """The blocks of one run, by base address."""

    def __init__(self, arena: Arena):
        self.arena = arena
        self.blocks: dict[int, Block] = {}
        self.host_visible: dict[int, Block] = {}  # the live blocks the host may touch (managed, page-locked), by base
        self._registered: list[Block] = []  # the live registrations, by host address
        self.unregistered: dict[int, Block] = {}  # the latest ended registration of each host address
        self._freed: list[Block] = []  # the freed blocks whose addresses nothing holds again, by address
        self.written = DeviceWrites()
        self.protection = Protection()
        self.made = 0  # blocks made so far: each is named after the call and its number (`cudaMalloc#3`)
        self.frees = 0  # blocks freed so far: a launch repeats an earlier one only if none was (`runtime.repeats`)
        self.live_bytes = 0  # of the blocks not freed: the memory budget counts them (`limits.shift_address_limit`)

    def allocate(self, size: int, kind: MemoryKind, site: WireSite, flags: int = 0) -> Block | None:
        """A new block of `size` bytes, or None when the arena has no room for it."""
        if kind is MemoryKind.DEVICE:
            alloc = self._place_apart(size, allocating_call(kind, site))
        else:
            alloc = self._place(size, allocating_call(kind, site))
        if alloc is None:
            return None
        block = Block(alloc, kind, site, flags=flags)
        self.blocks[alloc.base] = block
        if kind is MemoryKind.DEVICE:
            self.written.allocated(alloc.canonical_base, alloc.size)
            self.protection.closed(in_arena(alloc))
        else:
            self.host_visible[alloc.base] = block
        return block

    def _place_apart(self, size: int, call: str) -> Allocation | None:
        """A device-only allocation: its bytes in the arena, its address in the device-only window when that has
        room (`spread.py`), else where its bytes are."""
        table, spread = self.arena.table, self.arena.spread
        try:
            canonical = table.reserve(size, PAGE_SIZE)
        except MemoryError:
            return None
        address = spread.take(size) if spread is not None else None
        if address is None:
            address = canonical
        self._forget(address)  # a freed block whose addresses the window hands out again
        alloc = table.insert(self._name(call), address, size, shift=address - canonical)
        self.live_bytes += alloc.size
        shift_address_limit(-alloc.size)
        return alloc

    def register(self, host: int, size: int, flags: int, site: WireSite) -> Block | None:
        """The block of the `size` bytes of host memory at `host`, which no live registration overlaps
        (`registered_at`), or None when the arena has no room for it."""
        alloc = self._place(size, allocating_call(MemoryKind.REGISTERED, site), offset=host % PAGE_SIZE)
        if alloc is None:
            return None
        block = Block(alloc, MemoryKind.REGISTERED, site, flags=flags, host=host)
        self.blocks[alloc.base] = block
        self.host_visible[alloc.base] = block
        bisect.insort(self._registered, block, key=_host_start)
        return block

    def registered_at(self, host: int, size: int = 1) -> Block | None:
        """The live registration that overlaps [host, host + size), if any."""
        i = bisect.bisect_left(self._registered, host + size, key=_host_start) - 1
        if i >= 0 and _host_start(self._registered[i]) + self._registered[i].allocation.size > host:
            return self._registered[i]
        return None

    def _place(self, size: int, call: str, offset: int = 0) -> Allocation | None:
        name = self._name(call)
        try:
            alloc = self.arena.table.place(name, size, PAGE_SIZE, offset=offset)
        except MemoryError:
            return None
        self.live_bytes += alloc.size
        shift_address_limit(-alloc.size)
        return alloc

    def _forget(self, address: int) -> None:
        """Forget the freed block at `address`, if any: a new one takes its place."""
        old = self.blocks.get(address)
        if old is None or old.freed_at is None:
            return
        del self.blocks[address]
        del self._freed[bisect.bisect_left(self._freed, address, key=_base)]

    def _name(self, call: str) -> str:
        self.made += 1
        return f"{call}#{self.made}"

    def map(self, address: int, size: int, site: WireSite, initialised: bool) -> Block:
        """A device block at `address`, in address space reserved for it (`virtual_memory`): a physical allocation
        mapped there. `initialised`: its bytes hold values already (it was mapped before)."""
        block = self._insert(address, size, site)
        if initialised:
            self.written.host_wrote(np.array([address], dtype=np.uint64), np.array([address + size], dtype=np.uint64))
        return block

    def place(self, address: int, size: int, site: WireSite) -> Block:
        """A new allocation at `address`, in address space reserved for it (`graph_memory`), counted and freed as
        `cudaMalloc` memory is; the freed block that was there before, if any, is forgotten."""
        self._forget(address)
        self.live_bytes += size
        shift_address_limit(-size)
        return self._insert(address, size, site)

    def _insert(self, address: int, size: int, site: WireSite) -> Block:
        alloc = self.arena.table.insert(self._name(site.call), address, size)
        block = Block(alloc, MemoryKind.DEVICE, site)
        self.blocks[address] = block
        self.written.allocated(address, size)
        self.protection.closed(alloc)
        return block

    def unmap(self, block: Block) -> None:
        """End `block`'s mapping: its addresses are in no block again, and an access there is out of bounds."""
        alloc = block.allocation
        if block.freed_at is not None:  # freed with cudaFree, which unmapped it already
            self._forget(alloc.base)
            return
        del self.blocks[alloc.base]
        self.arena.table.remove(alloc)
        self.arena.release(alloc.canonical_base, alloc.size)
        self.written.freed(alloc.canonical_base, alloc.size)

    def block_of_canonical(self, canonical: int) -> Block | None:
        """The live block whose bytes in the arena include `canonical` (what the detectors and launch footprints
        name)."""
        alloc = self.arena.table.find_canonical(canonical)
        return self.blocks.get(alloc.base) if alloc is not None else None

    def block_at(self, address: int) -> Block | None:
        """The block whose bytes include `address`, freed or not."""
        alloc = self.arena.table.find(address)
        return self.blocks.get(alloc.base) if alloc is not None else self.freed_block_at(address)

    def freed_block_at(self, address: int) -> Block | None:
        """The freed block whose bytes include `address` (its address space unmapped), if any."""
        i = bisect.bisect_right(self._freed, address, key=_base) - 1
        if i >= 0 and address < self._freed[i].allocation.end:
            return self._freed[i]
        return None

    def free(self, block: Block, site: WireSite) -> None:
        """Free `block` (or end its registration) at `site`."""
        block.freed_at = site
        self.frees += 1
        self.live_bytes -= block.allocation.size
        shift_address_limit(block.allocation.size)
        if block.host is not None:
            self._registered.remove(block)
            self.unregistered[block.host] = block
        alloc = block.allocation
        self.host_visible.pop(alloc.base, None)
        self.protection.closed(in_arena(alloc))
        self.arena.table.remove(alloc)
        bisect.insort(self._freed, block, key=_base)
        self.arena.release(alloc.canonical_base, alloc.size)
        self.written.freed(alloc.canonical_base, alloc.size)
        if alloc.shift and self.arena.spread is not None:
            self.arena.spread.give_back(alloc.base, alloc.size)

    def live(self) -> list[Block]:
        return [b for b in self.blocks.values() if b.freed_at is None]

    def free_all(self, site: WireSite) -> None:
        for block in self.live():
            self.free(block, site)


def in_arena(alloc: Allocation) -> Allocation:
    """`alloc` where its bytes are in the arena (itself, but for device-only memory: `spread.py`)."""
    return replace(alloc, base=alloc.canonical_base, shift=0) if alloc.shift else alloc


def _host_start(block: Block) -> int:
    return block.host


def _base(block: Block) -> int:
    return block.allocation.base
