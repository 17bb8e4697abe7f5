"""The uninitialised-read check (`detect.initcheck`): its sparse byte sets, the device's written-memory record
across launches and schedules, and the shared-memory check through `check`."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurace.check import check
from gpurace.detect.bytesets import PageBits, Ranges
from gpurace.detect.initcheck import DeviceWrites, GlobalInitCheck
from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.sim.memory.layout import GLOBAL_BASE, PAGE_SIZE, Space

KERNELS = Path(__file__).resolve().parents[1] / "kernels" / "initcheck"


def addresses(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def written(bits: PageBits, *addrs: int) -> list[bool]:
    """Whether each byte address is flagged written in `bits`."""
    return [bool(w[0]) for w in bits.read(addresses(*addrs), 1)]


def test_page_bits_hold_bytes_of_far_apart_pages():
    bits = PageBits()
    far = GLOBAL_BASE + (40 << 30)
    bits.add(addresses(GLOBAL_BASE + 4, far + PAGE_SIZE - 8, GLOBAL_BASE + 4), 4)
    probes = (GLOBAL_BASE + 4, GLOBAL_BASE + 7, GLOBAL_BASE + 8, far + PAGE_SIZE - 5, far)
    assert written(bits, *probes) == [True, True, False, True, False]
    assert bits.nbytes == 2 * PAGE_SIZE


def test_page_bits_read_partly_written_words_byte_by_byte():
    bits = PageBits()
    bits.add(addresses(GLOBAL_BASE + 1), 1)
    (word,) = bits.read(addresses(GLOBAL_BASE), 4)
    assert word.tolist() == [0x100]
    (wide,) = bits.read(addresses(GLOBAL_BASE), 16)  # 16 bytes: two 8-byte flag words
    assert wide.tolist() == [0x100, 0]


def test_page_bits_union_runs_and_freed_pages():
    a, b = PageBits(), PageBits()
    a.add(addresses(GLOBAL_BASE), 4)
    b.add(addresses(GLOBAL_BASE + 4, GLOBAL_BASE + 12, GLOBAL_BASE + 3 * PAGE_SIZE), 4)
    a.update(b)
    probes = (GLOBAL_BASE, GLOBAL_BASE + 4, GLOBAL_BASE + 8, GLOBAL_BASE + 12, GLOBAL_BASE + 3 * PAGE_SIZE)
    assert written(a, *probes) == [True, True, False, True, True]
    starts, ends = a.take_runs(addresses(GLOBAL_BASE >> 12), 2)  # bytes 0..7 and 12..15: two runs
    assert (starts.tolist(), ends.tolist()) == ([GLOBAL_BASE, GLOBAL_BASE + 12], [GLOBAL_BASE + 8, GLOBAL_BASE + 16])
    assert written(a, GLOBAL_BASE) == [False] and a.nbytes == PAGE_SIZE
    a.discard_pages(GLOBAL_BASE + 1, GLOBAL_BASE + 4 * PAGE_SIZE)
    assert a.nbytes == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, PAGE_SIZE - 1), st.integers(1, 300)), max_size=12))
def test_page_runs_are_the_written_bytes_run_by_run(writes):
    """`take_runs` gives every maximal run of written bytes of each page (whole pages, runs touching a page's
    edges, several per page), as a byte-by-byte scan finds them."""
    bits, expected = PageBits(), np.zeros(3 * PAGE_SIZE, dtype=bool)
    for page, offset, length in writes:
        start = page * PAGE_SIZE + offset
        end = min(start + length, (page + 1) * PAGE_SIZE)
        bits.add(GLOBAL_BASE + np.arange(start, end, dtype=np.uint64), 1)
        expected[start:end] = True
    pages = np.unique(np.flatnonzero(expected) // PAGE_SIZE).astype(np.uint64) + np.uint64(GLOBAL_BASE >> 12)
    runs = []
    for page in range(3):
        row = expected[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
        at = 0
        while at < PAGE_SIZE:
            if row[at]:
                stop = at
                while stop < PAGE_SIZE and row[stop]:
                    stop += 1
                runs.append((GLOBAL_BASE + page * PAGE_SIZE + at, GLOBAL_BASE + page * PAGE_SIZE + stop))
                at = stop
            else:
                at += 1
    starts, ends = bits.take_runs(pages, PAGE_SIZE)
    assert sorted(zip(starts.tolist(), ends.tolist())) == runs
    assert bits.nbytes == 0  # every page taken


def test_ranges_merge_and_split():
    r = Ranges()
    r.add(addresses(100, 300), addresses(200, 400))
    r.add(addresses(200), addresses(300))  # touching ranges join
    assert (r.starts.tolist(), r.ends.tolist()) == ([100], [400])
    r.remove(addresses(150, 390), addresses(160, 500))
    assert (r.starts.tolist(), r.ends.tolist()) == ([100, 160], [150, 390])
    inside = r.contains(addresses(99, 100, 149, 150, 160, 389, 390)).tolist()
    assert inside == [False, True, True, False, True, True, False]


def test_ranges_tell_which_accesses_they_reach_into():
    r = Ranges()
    r.add(addresses(GLOBAL_BASE + 2, GLOBAL_BASE + 36), addresses(GLOBAL_BASE + 4, GLOBAL_BASE + 64))
    touched = r.touched(addresses(GLOBAL_BASE, GLOBAL_BASE + 8, GLOBAL_BASE + 32, GLOBAL_BASE + 64), 8)
    assert touched.tolist() == [True, False, True, False]  # a range inside an access, one from its middle on
    assert r.touched(addresses(GLOBAL_BASE + 48, GLOBAL_BASE + 40), 8).tolist() == [True, True]  # all in one range
    assert r.touched(addresses(GLOBAL_BASE + 64, GLOBAL_BASE + 8), 8) is None


def test_device_writes_forget_what_host_calls_wrote_and_freed_memory():
    writes = DeviceWrites()
    writes.allocated(GLOBAL_BASE, 1024)
    rows = GLOBAL_BASE + 256 * np.arange(4, dtype=np.uint64)  # a 2D copy: 4 rows of 16 bytes, 256 apart
    writes.host_wrote(rows, rows + np.uint64(16))
    unwritten = writes.unwritten.contains(addresses(GLOBAL_BASE, GLOBAL_BASE + 16, GLOBAL_BASE + 256 + 15))
    assert unwritten.tolist() == [False, True, False]
    writes.freed(GLOBAL_BASE, 1024)
    assert not writes.unwritten.contains(addresses(GLOBAL_BASE + 16)).any()


def test_contiguous_kernel_output_becomes_ranges_and_scattered_output_stays_flagged():
    writes = DeviceWrites()
    writes.allocated(GLOBAL_BASE, 2 * PAGE_SIZE)
    launch = PageBits()
    launch.add(GLOBAL_BASE + 4 * np.arange(PAGE_SIZE // 4, dtype=np.uint64), 4)  # all of page 0
    launch.add(GLOBAL_BASE + PAGE_SIZE + 8 * np.arange(PAGE_SIZE // 8, dtype=np.uint64), 4)  # every other word
    writes.kernel_wrote(launch)
    unwritten = writes.unwritten
    assert (unwritten.starts.tolist(), unwritten.ends.tolist()) == ([GLOBAL_BASE + PAGE_SIZE], [GLOBAL_BASE + 2 * PAGE_SIZE])
    assert writes.kernel_written.pages.tolist() == [(GLOBAL_BASE >> 12) + 1]


def batch(kind: AccessKind, *addrs: int) -> AccessBatch:
    n = len(addrs)
    return AccessBatch(
        0, 7, kind, np.arange(n), addresses(*addrs), 4, np.full(n, Space.GLOBAL, dtype=np.int8), kind == AccessKind.ATOMIC,
        "gpu" if kind == AccessKind.ATOMIC else None, None, "add" if kind == AccessKind.ATOMIC else None,
    )  # fmt: skip


def test_each_schedule_reads_against_its_own_writes_and_the_first_one_is_kept():
    writes = DeviceWrites()
    writes.allocated(GLOBAL_BASE, 64)
    sink = GlobalInitCheck(writes)
    ctx = SimpleNamespace()
    sink.bind(ctx)  # schedule 0 writes bytes 0..3, then reads them: written
    sink.on_event(batch(AccessKind.WRITE, GLOBAL_BASE))
    sink.on_event(batch(AccessKind.READ, GLOBAL_BASE))
    assert sink.reads.counts == {}
    sink.bind(ctx)  # schedule 1 reads before writing: schedule 0's write does not count
    sink.on_event(batch(AccessKind.READ, GLOBAL_BASE))
    sink.on_event(batch(AccessKind.WRITE, GLOBAL_BASE + 8))
    assert sink.reads.counts == {7: 1}
    sink.commit()
    assert writes.unwritten.contains(addresses(GLOBAL_BASE, GLOBAL_BASE + 8)).tolist() == [False, True]


def test_only_the_first_atomic_at_an_address_reads_garbage():
    writes = DeviceWrites()
    writes.allocated(GLOBAL_BASE, 64)
    sink = GlobalInitCheck(writes)
    sink.bind(SimpleNamespace())
    sink.on_event(batch(AccessKind.ATOMIC, GLOBAL_BASE, GLOBAL_BASE, GLOBAL_BASE + 4, GLOBAL_BASE))
    assert sink.reads.counts == {7: 2}
    assert sink.reads.first[7][:3] == (0, GLOBAL_BASE, 4)


def test_an_unbound_sink_only_records_writes():
    writes = DeviceWrites()
    writes.allocated(GLOBAL_BASE, 64)
    sink = GlobalInitCheck(writes)  # a launch left unchecked: `simulate` never binds its sinks
    sink.on_event(batch(AccessKind.READ, GLOBAL_BASE + 4))
    sink.on_event(batch(AccessKind.WRITE, GLOBAL_BASE))
    sink.commit()
    assert sink.finish() == []
    assert not writes.unwritten.contains(addresses(GLOBAL_BASE)).any()


def test_shared_check_counts_one_garbage_atomic_per_block():
    (finding,) = check(KERNELS / "atomic_counter.cu", grid=2, block=64, args=["buf:2"], schedules=1).findings
    assert (finding.kind, finding.space, finding.count) == ("uninitialized-read", "shared", 2)
    assert (finding.address.allocation, finding.address.offset) == ("n", 0)
    assert finding.sites[0].op == "atomic add"


def test_shared_check_names_the_unwritten_bytes_of_a_partly_written_word():
    (finding,) = check(KERNELS / "partial_word.cu", grid=1, block=32, args=["buf:32"]).findings
    assert finding.cause.startswith("reads 4 bytes, 3 of which no thread of its block had written")
    assert (finding.address.allocation, finding.address.offset, finding.count) == ("words", 0, 32)
