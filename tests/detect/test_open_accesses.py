"""The interval detector's buffer of open accesses: order, chunks of address ranges, what is kept after a close."""

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
    chunks = []
    buf.close(closing, np.arange(16) // BLOCK, most, lambda records: chunks.append(rows(records)))
    return chunks


def test_one_chunk_gives_every_access_of_the_closing_blocks_in_event_order():
    buf, batches = filled()
    (chunk,) = close(buf, {1, 3}, most=100)
    assert chunk == expected(batches, {1, 3})
    assert buf.n == 24 - len(chunk)


def test_chunks_are_ascending_address_ranges_in_event_order():
    buf, batches = filled()
    chunks = close(buf, {0, 1, 2, 3}, most=6)
    assert len(chunks) > 1
    ranges = [(min(r[1] for r in c), max(r[1] for r in c)) for c in chunks]
    assert all(hi < lo for (_, hi), (lo, _) in zip(ranges, ranges[1:]))  # disjoint, ascending
    everything = expected(batches, {0, 1, 2, 3})
    assert sorted(row for c in chunks for row in c) == sorted(everything)
    for c in chunks:
        assert c == [row for row in everything if row in c]  # event order within each
    assert buf.n == 0 and buf.batches == 0


def test_a_chunk_keeps_every_access_to_its_addresses(monkeypatch):
    monkeypatch.setattr(open_accesses, "CUT_SAMPLE", 2)  # a coarse sample: cuts fall anywhere
    buf = OpenAccesses(nthreads=16)
    threads = np.arange(16)
    for seq in range(6):  # every thread hits one of three words, again and again
        addrs = np.uint64(0x1000) + (threads % 3).astype(np.uint64) * np.uint64(0x100)
        buf.append(AccessBatch(seq, 0, AccessKind.READ, threads, addrs, 4, np.zeros(16, np.int8), False, None, None))
    chunks = close(buf, {0, 1, 2, 3}, most=10)
    owners = {}
    for k, c in enumerate(chunks):
        for _, addr, *_ in c:
            assert owners.setdefault(addr, k) == k
    assert sum(len(c) for c in chunks) == 96


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


def test_accesses_of_unwanted_instructions_close_unchecked():
    buf, batches = filled()
    wanted = np.array([False, True, True])  # pc 0's accesses need no check
    closing = np.array([True, True, False, False])
    chunks = []
    buf.close(closing, np.arange(16) // BLOCK, 100, lambda records: chunks.append(rows(records)), wanted)
    assert chunks == [expected(batches[1:], {0, 1})]
    (rest,) = close(buf, {2, 3}, most=100)
    assert rest == expected(batches, {2, 3})  # what stays open is kept whatever its instruction


def test_the_batches_bounds_give_each_instructions_range():
    buf, _ = filled()
    r = buf.ranges(3)
    assert list(r.present) == [0, 1, 2]
    assert (int(r.lo[1]), int(r.hi[1])) == (0x1100 + 12, 0x1100 + 60)  # threads 3 and 14 of pc 1
    assert r.apart.all()
