"""The bytes stores wrote, so that a write-write race between two stores of equal bytes can be told apart.

GPUVerify calls a write-write conflict benign when both threads store the
same value; the PTX memory model still calls it a race. gpurace keeps
reporting it, as a warning with its own cause (`findings.SAME_VALUE`), so the
detectors need the bytes of both stores where they overlap:

- the later store's bytes are in its event (`AccessBatch.stored`);
- the earlier store's bytes are in the same event when both are lanes of one
  instruction; otherwise a detector that knows the earlier store is still the
  last write of a byte reads it from memory, since a store's event arrives
  before the store takes effect (`Memory.bytes_at`); a detector whose history
  cannot tell that keeps the bytes itself (`tsan`'s cells, `interval`'s
  buffered accesses).

Only stores (`st`, plain or volatile) are compared: read-modify-writes are
atomics, and a store whose bytes are not known here (vector stores of more
than 8 bytes, 16-byte elements, `cp.async` copies) never counts as same-value;
a vector store of up to 8 bytes carries its lanes' bytes as one word.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.sim.memory.floats import UINT_OF_SIZE

BYTE = np.uint64(0xFF)


def stored_words(ev: AccessBatch) -> np.ndarray | None:
    """Each lane's stored bytes as a little-endian uint64 (converted as `Memory.store` converts them), or None
    when the batch is not a store whose bytes are known."""
    if ev.kind != AccessKind.WRITE or ev.stored is None or ev.size not in UINT_OF_SIZE or ev.size > 8:
        return None
    stored = np.asarray(ev.stored)
    if stored.ndim != 1:
        return None
    return stored.astype(UINT_OF_SIZE[ev.size], copy=False).astype(np.uint64)


def byte_at(words: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """The byte at `offset` (0-7) of each little-endian word, as int16."""
    shift = (np.asarray(offset, dtype=np.uint64) * np.uint64(8)) & np.uint64(63)
    return ((np.asarray(words, dtype=np.uint64) >> shift) & BYTE).astype(np.int16)


def span(words: np.ndarray, start: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The bytes [lo, hi) of words whose first byte lies at address `start`, shifted down to bit 0 (uint64).

    `lo >= start` and `hi - lo <= 8`; used to compare two stores on the bytes they share.
    """
    shift = (np.asarray(lo, dtype=np.uint64) - np.asarray(start, dtype=np.uint64)) * np.uint64(8)
    width = (np.asarray(hi, dtype=np.uint64) - np.asarray(lo, dtype=np.uint64)) * np.uint64(8)
    shifted = np.where(shift >= np.uint64(64), np.uint64(0), np.asarray(words, dtype=np.uint64) >> (shift & np.uint64(63)))
    full = width >= np.uint64(64)
    mask = np.where(full, ~np.uint64(0), (np.uint64(1) << (width & np.uint64(63))) - np.uint64(1))
    return shifted & mask
