"""ThreadSanitizer's shadow state: a few cells per aligned 8-byte word, each holding one access.

ThreadSanitizer (and the AMD GPU prototype built on it) does not remember
every byte's history as `shadow.Shadow` does: each aligned 8-byte word of
application memory owns N shadow cells (N = 2, 4 or 8), and each cell
describes one earlier access to that word: its thread, clock and barrier phase
(what happens-before needs), its pc (for the report), its flags word (write,
atomic, volatile and scope bits, as `hb` keeps them), and which bytes of the
word it touched (offset 0-7 and size), and for a store the bytes it wrote (so
that a write-write race of equal bytes is told apart). The detector decides which access a
full word forgets (`detect/tsan.py`); this module only holds the cells.

The cells are 2-D NumPy arrays (word x cell), indexed by dense word numbers
(`hb`'s dense byte index // 8: shared memory block by block, global memory
through the page table), so a batch reads all cells of its words with one
gather per field and writes its new cells with one scatter. A cell costs 33
bytes; an empty cell has thread -1.
"""

from __future__ import annotations

import numpy as np

WORD = 8
"""Bytes of application memory per shadow word."""

WORD_SHIFT = 3


class ShadowCells:
    """The shadow cells of one memory space: `cells` cells for each of `words` 8-byte words."""

    FIELDS = {
        "t": np.int32,  # thread, -1 for an empty cell
        "c": np.int64,  # the thread's clock at the access
        "ph": np.int32,  # its barrier phase
        "pc": np.int32,
        "fl": np.int16,  # flags word (hb's F_WRITE, F_ATOMIC, F_VOLATILE and scope bits)
        "off": np.int8,  # first byte inside the word, 0-7
        "size": np.int8,  # bytes, 1-8
        "v": np.uint64,  # the bytes a store wrote, its first byte lowest (`written_values`)
        "vk": np.bool_,  # whether `v` is known: a store (`st`) of at most 8 bytes
    }

    def __init__(self, words: int, cells: int):
        self.words = words
        self.cells = cells
        self.t = np.full((words, cells), -1, dtype=np.int32)
        self.c = np.zeros((words, cells), dtype=np.int64)
        self.ph = np.zeros((words, cells), dtype=np.int32)
        self.pc = np.zeros((words, cells), dtype=np.int32)
        self.fl = np.zeros((words, cells), dtype=np.int16)
        self.off = np.zeros((words, cells), dtype=np.int8)
        self.size = np.zeros((words, cells), dtype=np.int8)
        self.v = np.zeros((words, cells), dtype=np.uint64)
        self.vk = np.zeros((words, cells), dtype=np.bool_)

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in self.FIELDS)

    def clear(self, words: np.ndarray) -> None:
        """Empty every cell of `words` (those past the end have none)."""
        self.t[words[words < self.words]] = -1

    def grow(self, words: int) -> None:
        if words <= self.words:
            return
        for name, dtype in self.FIELDS.items():
            new = np.full((words, self.cells), -1 if name == "t" else 0, dtype=dtype)
            new[: self.words] = getattr(self, name)
            setattr(self, name, new)
        self.words = words

    def put(self, word, slot, t, c, ph, pc, fl, off, size, v=None) -> None:
        """Store one access per (word, slot) pair (the pairs are distinct); `v` the bytes each stored, if known."""
        self.t[word, slot] = t
        self.c[word, slot] = c
        self.ph[word, slot] = ph
        self.pc[word, slot] = pc
        self.fl[word, slot] = fl
        self.off[word, slot] = off
        self.size[word, slot] = size
        self.vk[word, slot] = v is not None
        if v is not None:
            self.v[word, slot] = v
