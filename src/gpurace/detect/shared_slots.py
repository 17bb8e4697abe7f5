"""Dense indices of shared memory for the blocks that can be alive at once, reused as blocks come and go.

A detector's per-byte state of shared memory (the happens-before shadow, the
written-bytes map of the uninitialised-read check) is a flat array indexed
by block and offset. A block's shared memory lives only as long as the
block, and a launch run in waves (`sim.waves`) has at most one wave of
blocks alive: so the array has one slot of `stride` bytes per block of a
wave, block b takes slot b mod (blocks per wave), and a block that takes a
slot another block held starts with that slot's history cleared, as its
shared memory starts undefined. Blocks of one wave get distinct slots, and
every block of a slot's earlier owner's wave has finished before the next
wave starts, so no history is lost that a race could need. A launch that
runs whole has a slot per block and never reuses one.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.memory.layout import CANON_OFFSET_MASK, CANON_OWNER_MASK, CANON_OWNER_SHIFT, CANON_SHARED_TAG


class SharedSlots:
    """The slot of each block's shared memory (module docstring)."""

    def __init__(self, memory) -> None:
        self.stride = memory.shared.stride
        self.count = max(1, memory.nblocks)  # blocks alive at once: a wave's, or the launch's
        self.owner = np.arange(self.count, dtype=np.int64)

    def index(self, canonical: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(dense byte index, slots whose earlier history must be cleared) of shared canonical addresses.

        Called for every shared access by the detectors that keep per-byte state: each step works in place on one
        temporary, and a launch whose blocks all have slots of their own (no waves) takes no remainder."""
        c = np.asarray(canonical, dtype=np.uint64)
        block = c >> np.uint64(CANON_OWNER_SHIFT)
        block &= np.uint64(CANON_OWNER_MASK)
        block = block.view(np.int64)
        slot = block % self.count if len(block) and int(block.max()) >= self.count else block
        moved = self.owner[slot] != block
        fresh = np.zeros(0, dtype=np.int64)
        if moved.any():
            fresh, first = np.unique(slot[moved], return_index=True)
            self.owner[fresh] = block[moved][first]
        index = c & np.uint64(CANON_OFFSET_MASK)
        index = index.view(np.int64)
        index += slot * self.stride
        return index, fresh

    def bytes_of(self, slots: np.ndarray) -> np.ndarray:
        """The dense byte indices of whole `slots`."""
        return (slots[:, None] * self.stride + np.arange(self.stride, dtype=np.int64)[None, :]).reshape(-1)

    def canonical(self, index: np.ndarray) -> np.ndarray:
        """The canonical shared addresses of dense byte indices, with the block that holds each slot now."""
        index = np.asarray(index, dtype=np.int64)
        block = self.owner[index // self.stride].astype(np.uint64)
        return np.uint64(CANON_SHARED_TAG) | (block << np.uint64(CANON_OWNER_SHIFT)) | (index % self.stride).astype(np.uint64)
