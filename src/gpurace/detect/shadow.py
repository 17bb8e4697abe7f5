"""Shadow memory for the happens-before detector, and the page table that keeps it sparse.

The detector keeps, per byte, the last write and the last two reads by
different threads (`Shadow`), in flat NumPy arrays indexed by a dense byte
index, so a whole access batch is checked and updated with a few gathers and
scatters. Shared memory is dense already (a slot of the block's shared size
per block alive at once, `detect.shared_slots`).
Global memory is not: buffers lie far apart in the address space (automatic
buffers reserve 64 MiB each and are touched at a few pages), and the shadow
costs 78 bytes per entry. So global addresses go through a `PageTable`
first, which gives each PAGE_SIZE page a compact slot on its first touch:
shadow memory grows with the pages a kernel touches, not with the span of
addresses it could touch; and a page accessed in whole 4-byte words only has
one entry per word, not per byte.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.segments import sorted_unique
from gpurace.sim.memory import PAGE_SIZE

PAGE_SHIFT = PAGE_SIZE.bit_length() - 1
PAGE_MASK = PAGE_SIZE - 1
WORD = 4
WORD_SHIFT = 2


GROWTH = 1.25
"""How much a shadow grows past what an access needs: at 80 bytes per byte of memory, doubling would leave
most of a large shadow unused, and growing copies it while both copies are alive."""


def grown_size(size: int, need: int) -> int:
    """The size a shadow of `size` entries grows to when an access needs `need`."""
    return max(need, int(size * GROWTH))


class Shadow:
    """Per-unit (byte or word) access history of one memory space: last write and last two reads by different threads."""

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

    def widen(self, old: np.ndarray, new: np.ndarray) -> None:
        """Copy the history of each word of the word runs starting at `old` to its four bytes in the byte runs
        starting at `new` (`PageTable.index`); the shadow must already hold the byte runs."""
        within = np.arange(PAGE_SIZE, dtype=np.int64)
        target = (new[:, None] + within).reshape(-1)
        source = (old[:, None] + (within >> WORD_SHIFT)).reshape(-1)
        for slots in self._histories():
            for v in slots.values():
                v[target] = v[source]

    def _histories(self) -> list[dict[str, np.ndarray]]:
        return [self.w, self.r1, self.r2]

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
    """Byte offsets of a sparse address range to dense shadow units, one run of units per PAGE_SIZE page.

    `slot_of_page` is a direct map from page number to slot (-1: not yet
    touched), 4 bytes per page of address range, so translating a batch is one
    gather; `page_of_slot` maps back, for reports. Slots are handed out in
    order of first touch.

    A slot's units are the page's 4-byte words while every access to the page
    has been to whole aligned words (`WORD_SHIFT`): the four bytes of such a
    word always share one history, so one unit holds it and the shadow needs a
    quarter of the memory (the 64 MB input of a histogram: 1.3 GB instead of
    5 GB). The first access that splits a word (fewer than 4 bytes, or not
    4-aligned) widens the page to byte units: it gets a new run of PAGE_SIZE
    units, into which the owner copies each word's history four times
    (`index` returns what to copy), and its word run is left unused. Performed
    accesses are naturally aligned and so never straddle a page: translating
    an access's first byte translates all of its bytes. A page table made with
    `words=False` hands out byte units only.
    """

    def __init__(self, words: bool = True) -> None:
        self.words = words
        self.slot_of_page = np.full(0, -1, dtype=np.int32)
        self.page_of_slot = np.zeros(0, dtype=np.int64)
        self.base = np.zeros(0, dtype=np.int64)  # first unit of each slot's run
        self.shift = np.zeros(0, dtype=np.int8)  # WORD_SHIFT: word units, 0: byte units
        self.units = 0  # units handed out
        self.run_start = np.zeros(0, dtype=np.int64)  # every run ever handed out, ascending, and its slot
        self.run_slot = np.zeros(0, dtype=np.int64)

    @property
    def pages(self) -> int:
        """How many pages have been touched."""
        return len(self.page_of_slot)

    def index(self, offsets: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """(first unit, unit shift) of each access of `size` bytes at byte `offsets` (non-negative int64), and the
        pages widened to byte units by these accesses as (old word runs' first units, new byte runs' first units):
        the caller copies each word's history to its four bytes before using the units."""
        page = offsets >> PAGE_SHIFT
        none = np.zeros(0, dtype=np.int64)
        if len(page) == 0:
            return page, np.zeros(0, dtype=np.int8), (none, none)
        top = int(page.max()) + 1
        if top > len(self.slot_of_page):
            grown = np.full(max(top, 2 * len(self.slot_of_page)), -1, dtype=np.int32)
            grown[: len(self.slot_of_page)] = self.slot_of_page
            self.slot_of_page = grown
        whole_words = self.words and size >= WORD and not (offsets & (WORD - 1)).any()
        slot = self.slot_of_page[page]
        fresh = slot < 0
        if fresh.any():
            self._add(sorted_unique(page[fresh]), WORD_SHIFT if whole_words else 0)
            slot = self.slot_of_page[page]
        widened = (none, none)
        if not whole_words:
            in_words = self.shift[slot] != 0
            if in_words.any():
                split = sorted_unique(slot[in_words])
                widened = (self.base[split], self._runs(split, 0))
        shift = self.shift[slot]
        return self.base[slot] + ((offsets & PAGE_MASK) >> shift), shift, widened

    def _add(self, pages: np.ndarray, shift: int) -> None:
        slots = np.arange(self.pages, self.pages + len(pages), dtype=np.int64)
        self.slot_of_page[pages] = slots
        self.page_of_slot = np.concatenate([self.page_of_slot, pages])
        self.base = np.concatenate([self.base, np.zeros(len(pages), dtype=np.int64)])
        self.shift = np.concatenate([self.shift, np.zeros(len(pages), dtype=np.int8)])
        self._runs(slots, shift)

    def _runs(self, slots: np.ndarray, shift: int) -> np.ndarray:
        """Give `slots` new runs of units of `shift`; returns their first units."""
        length = PAGE_SIZE >> shift
        first = self.units + length * np.arange(len(slots), dtype=np.int64)
        self.base[slots] = first
        self.shift[slots] = shift
        self.units += length * len(slots)
        self.run_start = np.concatenate([self.run_start, first])
        self.run_slot = np.concatenate([self.run_slot, slots])
        return first

    def offsets(self, units: np.ndarray) -> np.ndarray:
        """The byte offset of each unit's first byte (the inverse of `index`)."""
        units = np.asarray(units, dtype=np.int64)
        slot = self.run_slot[np.searchsorted(self.run_start, units, "right") - 1]
        return (self.page_of_slot[slot] << PAGE_SHIFT) | ((units - self.base[slot]) << self.shift[slot].astype(np.int64))
