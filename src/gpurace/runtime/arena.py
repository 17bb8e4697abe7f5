"""An arena: device memory of one space, shared between gpurace and the program it runs.

A memory file (`memfd_create`) sized once and sparse: the operating system
commits a page only when someone writes to it, so a large arena costs
address space, not memory. gpurace maps it here and sees it as a NumPy
uint8 array (`store[0]` is the byte at `base`); the program maps the same
file at `base` itself (the shim does), so a device pointer is the same
number on both sides and nothing is ever copied between them.

The global arena also owns the device-only window (`spread`): addresses of
`cudaMalloc` memory whose bytes are elsewhere in the arena. `contains` says
whether an address is device memory at all (either); `release` takes where
bytes are, in the arena (an allocation's `canonical_base`), and `view` either.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

from gpurace.runtime.spread import Spread
from gpurace.sim.memory.layout import PAGE_SIZE, AllocationTable, Space


class Arena:
    """The memory file, its mapping in this process, and the table of what is allocated in it."""

    def __init__(self, space: Space, base: int, nbytes: int, spread: Spread | None = None):
        self.space = space
        self.base = base
        self.nbytes = nbytes
        self.spread = spread
        self.fd = os.memfd_create(f"gpurace-{space.name.lower()}")
        try:
            os.ftruncate(self.fd, nbytes)
            self._map = mmap.mmap(self.fd, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError:
            os.close(self.fd)
            raise
        self.store = np.frombuffer(self._map, dtype=np.uint8)
        self.table = AllocationTable(base, base + nbytes, space)

    def contains(self, address: int) -> bool:
        """Whether `address` is in the arena or in its device-only window."""
        return self.base <= address < self.base + self.nbytes or (self.spread is not None and self.spread.contains(address))

    def canonical(self, address: int) -> int:
        """Where the byte the program knows as `address` is in the arena: itself, but for an address of an
        allocation in the device-only window."""
        if self.base <= address < self.base + self.nbytes:
            return address
        alloc = self.table.find(address)
        return address - alloc.shift if alloc is not None else address

    def view(self, address: int, nbytes: int) -> np.ndarray:
        """The bytes [address, address + nbytes) of the arena, as a writable view; `address` where they are, or as
        the program knows them (`canonical`)."""
        start = self.canonical(address) - self.base
        return self.store[start : start + nbytes]

    def release(self, address: int, nbytes: int) -> None:
        """Give the whole pages of [address, address + nbytes) back to the system; they read as zeros afterwards."""
        start = -(-(address - self.base) // PAGE_SIZE) * PAGE_SIZE
        end = (address - self.base + nbytes) // PAGE_SIZE * PAGE_SIZE
        if end > start:
            self._map.madvise(mmap.MADV_REMOVE, start, end - start)

    def close(self) -> None:
        """Close the memory file; the mapping goes when the last view of it does."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
