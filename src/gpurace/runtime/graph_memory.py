"""Graph memory nodes: the allocations of `cudaGraphAddMemAllocNode`, and of `cudaMallocAsync` during a stream capture;
and the conditions of conditional nodes.

CUDA fixes a graph allocation's virtual address when its node is made and keeps it for the graph's life; the
memory is valid from the allocation node to the free that ends it (a free node of any graph, `cudaFreeAsync` or
`cudaFree`), and each launch of the graph allocates it at that address again. The shim reserves the address
(RESERVE) when it makes the node; the node's replay places a device block there (ALLOCATE), as an operation of
the node's stream that writes the whole allocation, so that a node not ordered after the allocation node races
with it (or, replayed before it, touches unmapped address space: out of bounds). A free is `cudaFreeAsync`'s
(the server's `_free_async`): after it the block is freed memory, unmapped as every freed block is (`heap`), and
a node ordered after the free node that touches it faults, a use after free. The next allocation at the address replaces the freed block.

One reservation may serve several allocation nodes of a graph, as on a GPU: the shim gives a new node the
address of an earlier allocation of the same graph when that allocation, and every other that reused its address,
was freed by a node the new one comes after (shim/graph_memory.h).

The usage attributes (`cudaDeviceGetGraphMemAttribute`) count the physical memory associated with graphs, as
NVIDIA defines them: chunks, each made for an allocation of its size. A freed allocation's chunk stays with the
graphs, and a later allocation takes it when it fits and the free comes before the allocation in stream order
(so graphs launched one after the other on a stream share memory, and graphs running at the same time on
different streams do not); `cudaDeviceGraphMemTrim` gives back the chunks no live allocation holds. Used and
reserved memory are the same figure here: a GPU's also depend on its granularity and its allocator's choices.

A conditional handle (`cudaGraphConditionalHandleCreate`) is the address of the 4 bytes that hold its
condition (HANDLE): address space of their own, an allocation of the table but no block of the heap, as they
are the runtime's, not the program's (never leaked, never freed). Kernels set it with device-side
`cudaGraphSetConditional` (`sim.graph_conditionals`); a conditional node reads it on its stream (CONDITION), as
an operation that reads the 4 bytes, and a launch assigns the default (ASSIGN).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from gpurace.runtime.heap import Heap
from gpurace.runtime.protocol import CudaError, WireSite
from gpurace.runtime.streams import Clock
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


@dataclass
class Chunk:
    """Physical memory associated with graphs: its size, the address of the live allocation it holds (None when
    it is free), and, when free, the clock of the free (`streams.Clock`; empty: before everything)."""

    size: int
    holder: int | None
    freed: Clock


class GraphMemory:
    """The addresses reserved for graph allocations in `heap`, the physical memory behind them, and the conditions
    of conditional nodes."""

    def __init__(self, heap: Heap):
        self.heap = heap
        self.reservations: dict[int, int] = {}  # address -> bytes
        self.chunks: list[Chunk] = []
        self.high = 0  # the high-water mark of the chunks' bytes (used and reserved alike)
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

    def freed(self, address: int, clock: Clock) -> None:
        """The allocation at `address` was freed at `clock` (and its address space unmapped, as every free's is:
        `heap`): if it is a graph allocation, its chunk is free from then on."""
        chunk = next((c for c in self.chunks if c.holder == address), None) if address in self.reservations else None
        if chunk is not None:
            chunk.holder, chunk.freed = None, clock

    def live(self, address: int) -> bool:
        block = self.heap.blocks.get(address)
        return block is not None and block.freed_at is None

    def allocate(self, address: int, size: int, site: WireSite, after: Callable[[Clock], bool]) -> CudaError:
        """The allocation node's memory, at its address, in a free chunk whose free comes `after` it (a new one if
        none): INVALID_VALUE while the last allocation there is live (the shim checks before a launch, so only a
        graph that allocates twice at one address meets it)."""
        if size > self.reservations.get(address, 0) or self.live(address):
            return CudaError.INVALID_VALUE
        if size > self.heap.arena.nbytes - self.heap.live_bytes:
            return CudaError.MEMORY_ALLOCATION
        self.heap.place(address, size, site)
        chunk = next((c for c in self.chunks if c.holder is None and c.size >= size and after(c.freed)), None)
        if chunk is None:
            chunk = Chunk(size, None, {})
            self.chunks.append(chunk)
        chunk.holder = address
        self.high = max(self.high, self.footprint())
        return CudaError.SUCCESS

    def footprint(self) -> int:
        return sum(c.size for c in self.chunks)

    def trim(self) -> None:
        self.chunks = [c for c in self.chunks if c.holder is not None]

    def attribute(self, attribute: Attribute) -> int:
        high = attribute in (Attribute.USED_HIGH, Attribute.RESERVED_HIGH)
        return self.high if high else self.footprint()

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
        if attribute not in (Attribute.USED_HIGH, Attribute.RESERVED_HIGH):
            return CudaError.INVALID_VALUE
        self.high = self.footprint()
        return CudaError.SUCCESS
