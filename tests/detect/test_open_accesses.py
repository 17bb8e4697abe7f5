"""The interval detector's buffer of open accesses: order, chunks of whole blocks, what is kept after a close."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.detect import open_accesses
from gpurace.detect.open_accesses import OpenAccesses
from gpurace.sim.events import AccessBatch, AccessKind

BLOCK = 4  # threads per block


def batch(seq: int, pc: int, threads, write: bool = False) -> AccessBatch:
    threads = np.asarray(threads, dtype=np.int64)
    addrs = np.uint64(0x1000) + threads.astype(np.uint64) * np.uint64(4) + np.uint64(pc * 0x100)
    kind = AccessKind.WRITE if write else AccessKind.READ
    stored = (threads * 10 + pc).astype(np.uint32) if write else None
    return AccessBatch(seq, pc, kind, threads, addrs, 4, np.zeros(len(threads), np.int8), False, None, None, stored=stored)


@pytest.fixture(autouse=True)
def small_segments(monkeypatch):
    monkeypatch.setattr(open_accesses, "SEGMENT", 5)  # every batch below spans segments


def filled() -> tuple[OpenAccesses, list[AccessBatch]]:
    buf = OpenAccesses(nthreads=16)
    batches = [batch(1, 0, range(16)), batch(2, 1, [3, 9, 14], write=True), batch(3, 2, [0, 5, 6, 7, 12])]
    for b in batches:
        buf.append(b)
    return buf, batches


def expected(batches, blocks) -> list[tuple]:
    """(thread, addr, size, pc, seq, val, known) of every access of `blocks`, in event order."""
    out = []
    for b in batches:
        for lane, t in enumerate(b.threads):
            if t // BLOCK in blocks:
                val = int(b.stored[lane]) if b.stored is not None else 0
                out.append((int(t), int(b.addrs[lane]), 4, b.pc, b.seq, val, b.stored is not None))
    return out


def rows(records) -> list[tuple]:
    return [tuple(v.item() for v in row) for row in zip(*records)]


def close(buf, blocks, most) -> list[list[tuple]]:
    closing = np.zeros(4, dtype=np.bool_)
    closing[list(blocks)] = True
    chunks, finals = [], []
    buf.close(closing, np.arange(16) // BLOCK, most, lambda records, final: (chunks.append(rows(records)), finals.append(final)))
    assert finals == [False] * (len(chunks) - 1) + [True]
    return chunks


def test_one_chunk_gives_every_access_of_the_closing_blocks_in_event_order():
    buf, batches = filled()
    (chunk,) = close(buf, {1, 3}, most=100)
    assert chunk == expected(batches, {1, 3})
    assert buf.n == 24 - len(chunk)


def test_chunks_are_whole_blocks_in_block_order():
    buf, batches = filled()
    chunks = close(buf, {0, 1, 2, 3}, most=6)
    assert [sorted({t // BLOCK for t, *_ in c}) for c in chunks] == [[0], [1], [2], [3]]
    assert [row for c in chunks for row in c] != expected(batches, {0, 1, 2, 3})  # reordered by block ...
    for b, c in enumerate(chunks):
        assert c == expected(batches, {b})  # ... and in event order within each
    assert buf.n == 0 and buf.batches == 0


def test_what_stays_keeps_its_order_values_and_batches_after_a_close():
    buf, batches = filled()
    close(buf, {0, 2}, most=100)
    assert buf.batches == 3
    later = batch(4, 3, [1, 4, 8], write=True)  # block 0 starts its next interval; blocks 1 and 2 go on
    buf.append(later)
    (chunk,) = close(buf, {0, 1, 3}, most=100)
    assert chunk == expected(batches, {1, 3}) + expected([later], {0, 1})
    assert buf.batches == 1
    (rest,) = close(buf, {2}, most=100)
    assert rest == expected([later], {2})


def test_batches_with_no_access_left_are_forgotten():
    buf, _ = filled()
    close(buf, {0, 3}, most=100)  # batch 2 (threads 3, 9, 14) keeps thread 9
    assert buf.batches == 3
    close(buf, {1}, most=100)  # batch 3 (threads 0, 5, 6, 7, 12) keeps nothing
    assert (buf.batches, buf.n) == (2, 5)
