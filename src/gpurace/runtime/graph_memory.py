"""Graph memory nodes: the allocations of `cudaGraphAddMemAllocNode`, and of `cudaMallocAsync` during a stream capture;
and the conditions of conditional nodes.

CUDA fixes a graph allocation's virtual address when its node is made and keeps it for the graph's life; the
memory is valid from the allocation node to the free that ends it (a free node of any graph, `cudaFreeAsync` or
`cudaFree`), and each launch of the graph allocates it at that address again. The shim reserves the address
(RESERVE) when it makes the node; the node's replay places a device block there (ALLOCATE), as an operation of
the node's stream that writes the whole allocation, so that a node not ordered after the allocation node races
with it (or, replayed before it, touches unmapped address space: out of bounds). A free is `cudaFreeAsync`'s
(the server's `_free_async`): after it the block is freed memory, and a node ordered after the free node that
touches it is a use after free. The next allocation at the address replaces the freed block.

One reservation may serve several allocation nodes of a graph, as on a GPU: the shim gives a new node the
address of an earlier allocation of the same graph when that allocation, and every other that reused its address,
was freed by a node the new one comes after (shim/graph_memory.h).

The usage attributes (`cudaDeviceGetGraphMemAttribute`): used memory is the bytes of live graph allocations;
reserved memory is what the device keeps for them, which grows with use and shrinks only when
`cudaDeviceGraphMemTrim` gives back what no live allocation holds, as NVIDIA documents. A GPU's figures also
depend on its pool's granularity and on how it shares physical memory between graphs, which are not modelled.

A conditional handle (`cudaGraphConditionalHandleCreate`) is the address of the 4 bytes that hold its
condition (HANDLE): address space of their own, an allocation of the table but no block of the heap, as they
are the runtime's, not the program's (never leaked, never freed). Kernels set it with device-side
`cudaGraphSetConditional` (`sim.graph_conditionals`); a conditional node reads it on its stream (CONDITION), as
an operation that reads the 4 bytes, and a launch assigns the default (ASSIGN).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from gpurace.runtime.heap import Heap
from gpurace.runtime.protocol import CudaError, WireSite
from gpurace.sim.graph_conditionals import CONDITION_BYTES
from gpurace.sim.memory.layout import PAGE_SIZE


class GraphMemoryAction(IntEnum):
    """What a GRAPH_MEMORY request asks (its first field; shim/graph_memory.h numbers them alike)."""

    RESERVE = 0  # size -> address
    ALLOCATE = 1  # address, size, stream
    LIVE = 2  # address -> 1 when the allocation there was not freed yet
    TRIM = 3
    GET_ATTRIBUTE = 4  # attribute -> value
    RESET_HIGH = 5  # attribute (a high-water mark, set back to the current figure)
    HANDLE = 6  # default value -> the address of a new condition
    CONDITION = 7  # address, stream -> the condition's value
    ASSIGN = 8  # address, value


class Attribute(IntEnum):
    """`cudaGraphMemAttributeType`."""

    USED_CURRENT = 0
    USED_HIGH = 1
    RESERVED_CURRENT = 2
    RESERVED_HIGH = 3


class GraphMemory:
    """The addresses reserved for graph allocations in `heap`, and the usage figures."""

    def __init__(self, heap: Heap):
        self.heap = heap
        self.reservations: dict[int, int] = {}  # address -> bytes
        self.reserved = 0
        self.reserved_high = 0
        self.used_high = 0
        self.conditions: set[int] = set()  # the addresses of conditional handles

    def reserve(self, size: int) -> tuple[CudaError, int]:
        if size == 0:
            return CudaError.INVALID_VALUE, 0
        try:
            address = self.heap.arena.table.reserve(size, PAGE_SIZE)
        except MemoryError:
            return CudaError.MEMORY_ALLOCATION, 0
        self.reservations[address] = size
        return CudaError.SUCCESS, address

    def freed(self, address: int) -> None:
        """The allocation at `address` was freed: if it is a graph allocation, its address space is unmapped, so that
        a kernel touching it faults (out of bounds), as on a GPU. Its block stays known, freed, to the host checks."""
        block = self.heap.blocks.get(address)
        if address in self.reservations and block is not None and self.heap.arena.table.find(address) is block.allocation:
            self.heap.arena.table.remove(block.allocation)

    def live(self, address: int) -> bool:
        block = self.heap.blocks.get(address)
        return block is not None and block.freed_at is None

    def allocate(self, address: int, size: int, site: WireSite) -> CudaError:
        """The allocation node's memory, at its address: INVALID_VALUE while the last allocation there is live
        (the shim checks before a launch, so only a graph that allocates twice at one address meets it)."""
        if size > self.reservations.get(address, 0) or self.live(address):
            return CudaError.INVALID_VALUE
        if size > self.heap.arena.nbytes - self.heap.live_bytes:
            return CudaError.MEMORY_ALLOCATION
        self.heap.place(address, size, site)
        used = self.used()
        self.used_high = max(self.used_high, used)
        self.reserved = max(self.reserved, used)
        self.reserved_high = max(self.reserved_high, self.reserved)
        return CudaError.SUCCESS

    def used(self) -> int:
        return sum(self.heap.blocks[a].allocation.size for a in self.reservations if self.live(a))

    def trim(self) -> None:
        self.reserved = self.used()

    def attribute(self, attribute: Attribute) -> int:
        return {
            Attribute.USED_CURRENT: self.used(),
            Attribute.USED_HIGH: self.used_high,
            Attribute.RESERVED_CURRENT: self.reserved,
            Attribute.RESERVED_HIGH: self.reserved_high,
        }[attribute]

    def condition_handle(self, default: int, site: WireSite) -> int:
        """The address of a new condition, holding `default`."""
        table = self.heap.arena.table
        address = table.reserve(CONDITION_BYTES, PAGE_SIZE)
        table.insert(f"{site.call}#{len(self.conditions) + 1}", address, CONDITION_BYTES)
        self.conditions.add(address)
        self.assign(address, default)
        return address

    def condition(self, address: int) -> int | None:
        """The value of the condition at `address`; None when it is no condition's address."""
        return int(self._condition(address)[0]) if address in self.conditions else None

    def assign(self, address: int, value: int) -> CudaError:
        if address not in self.conditions:
            return CudaError.INVALID_VALUE
        self._condition(address)[0] = value
        return CudaError.SUCCESS

    def _condition(self, address: int) -> np.ndarray:
        return self.heap.arena.view(address, CONDITION_BYTES).view("<u4")

    def reset_high(self, attribute: Attribute) -> CudaError:
        if attribute is Attribute.USED_HIGH:
            self.used_high = self.used()
        elif attribute is Attribute.RESERVED_HIGH:
            self.reserved_high = self.reserved
        else:
            return CudaError.INVALID_VALUE
        return CudaError.SUCCESS
