"""Which pages of device memory the host may touch (`runtime.protection`), and the changes sent to the shim."""

from __future__ import annotations

import numpy as np

from gpurace.detect.bytesets import PageBits
from gpurace.detect.footprint import Footprint, Spans
from gpurace.runtime.protection import Protection, host_pages
from gpurace.runtime.protocol import PROT_NONE, PROT_READ, PROT_READ_WRITE
from gpurace.sim.memory.layout import PAGE_SIZE, Allocation, Space

BASE = 0x10_0000_0000
MANAGED = Allocation("cudaMallocManaged#1", BASE, 4 * PAGE_SIZE, Space.GLOBAL)
DEVICE = Allocation("cudaMalloc#2", BASE + 8 * PAGE_SIZE, 100, Space.GLOBAL)


def page(n: int) -> int:
    return (BASE >> 12) + n


def test_only_pages_of_host_visible_blocks_count_and_writes_win_over_reads():
    written = PageBits()
    written.add(np.array([BASE + PAGE_SIZE + 8, DEVICE.base], dtype=np.uint64), 4)
    reads = Spans(((BASE, BASE + 2 * PAGE_SIZE),))
    pages_written, pages_read = host_pages(Footprint(reads, written), [MANAGED])
    assert pages_written.tolist() == [page(1)] and pages_read.tolist() == [page(0)]


def test_pending_work_closes_pages_and_opens_them_again_when_it_is_done():
    p = Protection()
    p.pending_work([(np.array([page(1), page(2)]), np.array([page(0)]))])
    assert p.take() == [(BASE, PAGE_SIZE, PROT_READ), (BASE + PAGE_SIZE, 2 * PAGE_SIZE, PROT_NONE)]
    p.pending_work([(np.array([page(2)]), np.zeros(0, dtype=np.int64))])
    assert p.take() == [(BASE, 2 * PAGE_SIZE, PROT_READ_WRITE)]
    p.pending_work([])
    assert p.take() == [(BASE + 2 * PAGE_SIZE, PAGE_SIZE, PROT_READ_WRITE)]


def test_a_page_opened_after_a_caught_access_is_closed_again_by_the_next_change():
    p = Protection()
    p.pending_work([(np.array([page(0)]), np.zeros(0, dtype=np.int64))])
    p.take()
    p.opened(page(0))
    assert p.take() == [(BASE, PAGE_SIZE, PROT_READ_WRITE)]
    p.pending_work([(np.array([page(0)]), np.zeros(0, dtype=np.int64))])  # still pending: closed again
    assert p.take() == [(BASE, PAGE_SIZE, PROT_NONE)]


def test_a_closed_block_stays_closed_whatever_the_pending_work_does():
    p = Protection()
    p.closed(DEVICE)
    p.pending_work([(np.array([page(8)]), np.zeros(0, dtype=np.int64))])
    p.pending_work([])
    assert p.take() == [(DEVICE.base, PAGE_SIZE, PROT_NONE)]


def test_a_block_that_starts_inside_a_page_is_closed_page_by_page():
    registered = Allocation("cudaHostRegister#3", BASE + 16 * PAGE_SIZE + 16, PAGE_SIZE, Space.GLOBAL)
    p = Protection()
    p.closed(registered)
    assert p.take() == [(BASE + 16 * PAGE_SIZE, 2 * PAGE_SIZE, PROT_NONE)]


def test_no_pending_work_before_or_after_changes_nothing_and_forgets_opened_pages():
    p = Protection()
    p.opened(page(0))
    p.take()
    p.pending_work([])
    assert p.take() == []
    p.pending_work([(np.array([page(0)]), np.zeros(0, dtype=np.int64))])
    assert p.take() == [(BASE, PAGE_SIZE, PROT_NONE)]
    p.pending_work([])
    assert p.take() == [(BASE, PAGE_SIZE, PROT_READ_WRITE)]
