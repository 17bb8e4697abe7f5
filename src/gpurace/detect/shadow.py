"""Shadow memory for the happens-before detector, and the page table that keeps it sparse.

The detector keeps, per byte, the last write and the last two reads by
different threads (`Shadow`), in flat NumPy arrays indexed by a dense byte
index, so a whole access batch is checked and updated with a few gathers and
scatters. Shared memory is dense already (a slot of the block's shared size
per block alive at once, `detect.shared_slots`).
Global memory is not: buffers lie far apart in the address space (automatic
buffers reserve 64 MiB each and are touched at a few pages), and the shadow
costs about 80 bytes per byte. So global addresses go through a `PageTable`
first, which gives each PAGE_SIZE page a compact slot on its first touch:
shadow memory grows with the pages a kernel touches, not with the span of
addresses it could touch.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.segments import sorted_unique
from gpurace.sim.memory import PAGE_SIZE

PAGE_SHIFT = PAGE_SIZE.bit_length() - 1
PAGE_MASK = PAGE_SIZE - 1


GROWTH = 1.25
"""How much a shadow grows past what an access needs: at 80 bytes per byte of memory, doubling would leave
most of a large shadow unused, and growing copies it while both copies are alive."""


def grown_size(size: int, need: int) -> int:
    """The size a shadow of `size` entries grows to when an access needs `need`."""
    return max(need, int(size * GROWTH))


class Shadow:
    """Per-byte access history of one memory space: last write and last two reads by different threads."""

    FIELDS = ("t", "c", "ph", "pc", "fl")

    def __init__(self, size: int):
        self.size = size
        self.w = self._slots(size)
        self.r1 = self._slots(size)
        self.r2 = self._slots(size)

    @staticmethod
    def _slots(size: int) -> dict[str, np.ndarray]:
        return {
            "t": np.full(size, -1, dtype=np.int64),
            "c": np.zeros(size, dtype=np.int64),
            "ph": np.zeros(size, dtype=np.int32),
            "pc": np.zeros(size, dtype=np.int32),
            "fl": np.zeros(size, dtype=np.int16),
        }

    def clear(self, index: np.ndarray) -> None:
        """Forget the history of the bytes at dense `index` (those past the shadow's size have none)."""
        index = index[index < self.size]
        for slots in (self.w, self.r1, self.r2):
            self._reset(slots, index)

    @staticmethod
    def _reset(slots: dict[str, np.ndarray], index: np.ndarray) -> None:
        for k, v in slots.items():
            v[index] = -1 if k == "t" else 0

    def grow(self, size: int) -> None:
        if size <= self.size:
            return
        for slots in (self.w, self.r1, self.r2):
            for k, v in slots.items():
                new = np.full(size, -1 if k == "t" else 0, dtype=v.dtype)
                new[: self.size] = v
                slots[k] = new
        self.size = size


class PageTable:
    """Byte offsets of a sparse address range to dense shadow indices, one PAGE_SIZE page per slot.

    `slot_of_page` is a direct map from page number to slot (-1: not yet
    touched), 4 bytes per page of address range, so translating a batch is one
    gather; `page_of_slot` maps back, for reports. Slots are handed out in
    order of first touch. Performed accesses are naturally aligned and so
    never straddle a page: translating an access's first byte translates all
    of its bytes.
    """

    def __init__(self) -> None:
        self.slot_of_page = np.full(0, -1, dtype=np.int32)
        self.page_of_slot = np.zeros(0, dtype=np.int64)

    @property
    def pages(self) -> int:
        """How many pages have been touched (the shadow needs `pages * PAGE_SIZE` bytes)."""
        return len(self.page_of_slot)

    def index(self, offsets: np.ndarray) -> np.ndarray:
        """Dense indices (int64) of byte `offsets` (non-negative int64), giving new pages slots on first touch."""
        page = offsets >> PAGE_SHIFT
        if len(page) == 0:
            return page
        top = int(page.max()) + 1
        if top > len(self.slot_of_page):
            grown = np.full(max(top, 2 * len(self.slot_of_page)), -1, dtype=np.int32)
            grown[: len(self.slot_of_page)] = self.slot_of_page
            self.slot_of_page = grown
        slot = self.slot_of_page[page]
        fresh = slot < 0
        if fresh.any():
            new_pages = sorted_unique(page[fresh])
            self.slot_of_page[new_pages] = np.arange(self.pages, self.pages + len(new_pages), dtype=np.int32)
            self.page_of_slot = np.concatenate([self.page_of_slot, new_pages])
            slot = self.slot_of_page[page]
        return (slot.astype(np.int64) << PAGE_SHIFT) | (offsets & PAGE_MASK)

    def offset(self, index: int) -> int:
        """The byte offset whose dense index is `index` (the inverse of `index`)."""
        return (int(self.page_of_slot[index >> PAGE_SHIFT]) << PAGE_SHIFT) | (index & PAGE_MASK)
