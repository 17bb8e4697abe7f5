"""The driver's virtual memory management: `cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`, `cuMemUnmap`,
`cuMemRelease`, `cuMemAddressFree`.

A reservation is address space of the global arena that no allocation holds (`AllocationTable.reserve`): a
kernel or a copy touching it is out of bounds, as a GPU faults there. A physical allocation (`cuMemCreate`)
is a handle with a size. A mapping is reachable once `cuMemSetAccess` grants access to it, as on a GPU: then
a device block is placed at the mapped address (`Heap.map`), so that kernels, copies and the detectors see it
as they see `cudaMalloc` memory, and unmapping takes the block out again; before, an access is out of bounds. The arena holds bytes at one address only, so an allocation's contents live where it is mapped and
are kept with the handle while it is not (a later mapping, at the same address or another, finds them
again); an allocation mapped at two addresses at once would need two addresses to share their bytes, and
stops the program. The bytes of an allocation count as written once it has been mapped before (the
uninitialised-read check sees its first mapping only).

`cuMemRelease` of a mapped allocation frees it when its mapping ends, as the driver does. At exit
(`--leak-check`), allocations never released and ranges still mapped are leaks.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from gpurace.runtime.heap import Block, Heap
from gpurace.runtime.protocol import CudaError, WireSite

GRANULARITY = 2 << 20
"""The granularity of sizes, mapped addresses and reservation alignment (`cuMemGetAllocationGranularity`, both
minimum and recommended): 2 MiB, as GPUs report it. The driver library states the same number."""


class VirtualAction(IntEnum):
    """What a VIRTUAL_MEMORY request asks (its first field; shim/cuda_driver.c numbers them alike)."""

    RESERVE = 0  # size, alignment -> address
    ADDRESS_FREE = 1  # address, size
    CREATE = 2  # size -> handle
    RELEASE = 3  # handle
    MAP = 4  # address, size, offset, handle
    UNMAP = 5  # address, size
    SET_ACCESS = 6  # address, size (read-write access from device 0: the driver refuses any other)


class Refused(Exception):
    """A use of virtual memory that gpurace cannot simulate: the program stops, saying why."""


@dataclass
class Physical:
    """One `cuMemCreate` allocation: its size, where it was created, its bytes while unmapped, and its mapping:
    where, by which call, and its block once access to it was set."""

    size: int
    created_at: WireSite
    contents: np.ndarray | None = None  # None until it was first unmapped
    address: int | None = None
    mapped_at: WireSite | None = None
    block: Block | None = None
    accessed: bool = False  # it had a block before: its bytes hold values
    released: bool = False


class VirtualMemory:
    """The reservations, physical allocations and mappings of one run, in `heap`."""

    def __init__(self, heap: Heap):
        self.heap = heap
        self.reservations: dict[int, int] = {}  # base -> size
        self.handles: dict[int, Physical] = {}
        self.mappings: dict[int, Physical] = {}  # mapped address -> allocation
        self._next_handle = 0

    def request(self, action: VirtualAction, a: int, b: int, c: int, d: int, site: WireSite) -> tuple[CudaError, int]:
        """Carry out one request; its status and the address or handle it gives back (0 when none)."""
        if action is VirtualAction.RESERVE:
            return self.reserve(a, b)
        if action is VirtualAction.ADDRESS_FREE:
            return self.address_free(a, b), 0
        if action is VirtualAction.CREATE:
            return self.create(a, site)
        if action is VirtualAction.RELEASE:
            return self.release(a), 0
        if action is VirtualAction.MAP:
            return self.map(a, b, c, d, site), 0
        if action is VirtualAction.SET_ACCESS:
            return self.set_access(a, b), 0
        return self.unmap(a, b), 0

    def reserve(self, size: int, alignment: int) -> tuple[CudaError, int]:
        if size == 0 or size % GRANULARITY or (alignment & (alignment - 1)):
            return CudaError.INVALID_VALUE, 0
        try:
            base = self.heap.arena.table.reserve(size, max(alignment, GRANULARITY))
        except MemoryError:
            return CudaError.MEMORY_ALLOCATION, 0
        self.reservations[base] = size
        return CudaError.SUCCESS, base

    def address_free(self, base: int, size: int) -> CudaError:
        """Only a whole reservation with nothing mapped in it can be freed, as the driver requires."""
        if self.reservations.get(base) != size or any(base <= a < base + size for a in self.mappings):
            return CudaError.INVALID_VALUE
        del self.reservations[base]
        return CudaError.SUCCESS

    def create(self, size: int, site: WireSite) -> tuple[CudaError, int]:
        if size == 0 or size % GRANULARITY:
            return CudaError.INVALID_VALUE, 0
        if size > self.heap.arena.nbytes - self.heap.live_bytes:
            return CudaError.MEMORY_ALLOCATION, 0
        self._next_handle += 1
        self.handles[self._next_handle] = Physical(size, site)
        return CudaError.SUCCESS, self._next_handle

    def release(self, handle: int) -> CudaError:
        physical = self.handles.get(handle)
        if physical is None or physical.released:
            return CudaError.INVALID_RESOURCE_HANDLE
        physical.released = True
        if physical.address is None:
            del self.handles[handle]
        return CudaError.SUCCESS

    def map(self, address: int, size: int, offset: int, handle: int, site: WireSite) -> CudaError:
        physical = self.handles.get(handle)
        if physical is None or physical.released:
            return CudaError.INVALID_RESOURCE_HANDLE
        if offset or size != physical.size:
            raise Refused("mapping part of a physical allocation (gpurace maps a whole allocation, at offset 0)")
        if physical.address is not None:
            raise Refused("mapping a physical allocation that is already mapped at another address")
        if not self._reserved(address, size) or any(
            a < address + size and address < a + p.size for a, p in self.mappings.items()
        ):
            return CudaError.INVALID_VALUE
        if physical.contents is not None:
            self.heap.arena.view(address, size)[:] = physical.contents
            physical.contents = None
        physical.address, physical.mapped_at = address, site
        self.mappings[address] = physical
        return CudaError.SUCCESS

    def set_access(self, address: int, size: int) -> CudaError:
        """Make the mappings that make up [address, address + size) exactly reachable."""
        inside = self._covering(address, size)
        if inside is None:
            return CudaError.INVALID_VALUE
        for physical in inside:
            if physical.block is None:
                physical.block = self.heap.map(physical.address, physical.size, physical.mapped_at, physical.accessed)
                physical.accessed = True
        return CudaError.SUCCESS

    def unmap(self, address: int, size: int) -> CudaError:
        """Unmap the mappings that make up [address, address + size) exactly."""
        inside = self._covering(address, size)
        if inside is None:
            return CudaError.INVALID_VALUE
        for physical in inside:
            del self.mappings[physical.address]
            if not physical.released:
                physical.contents = self.heap.arena.view(physical.address, physical.size).copy()
            if physical.block is not None:
                self.heap.unmap(physical.block)
            else:
                self.heap.arena.release(physical.address, physical.size)
            physical.address = physical.mapped_at = physical.block = None
            if physical.released:
                self.handles = {h: p for h, p in self.handles.items() if p is not physical}
        return CudaError.SUCCESS

    def _covering(self, address: int, size: int) -> list[Physical] | None:
        """The mappings that make up [address, address + size) exactly, in address order, or None."""
        inside = [self.mappings[a] for a in sorted(a for a in self.mappings if address <= a < address + size)]
        if not inside or inside[0].address != address or sum(p.size for p in inside) != size:
            return None
        return inside

    def unreleased(self) -> list[Physical]:
        """The allocations the program did not release, but those left reachable (a block left is a leak of its own)."""
        return [p for p in self.handles.values() if not p.released and p.block is None]

    def _reserved(self, address: int, size: int) -> bool:
        return any(base <= address and address + size <= base + n for base, n in self.reservations.items())
