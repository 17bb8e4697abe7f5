"""The happens-before of streams and events (`runtime.streams.Timeline`), rule by rule, on operations that all
write the same bytes: a race is reported exactly when CUDA's rules leave two of them unordered."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.detect.bytesets import PageBits
from gpurace.detect.findings import Address, Site
from gpurace.detect.footprint import Footprint, Spans
from gpurace.runtime.streams import LEGACY_HANDLES, PER_THREAD_HANDLE, Operation, Timeline
from gpurace.sim.memory.layout import PAGE_SIZE

A, B, QUIET = 0x1000, 0x2000, 0x3000  # stream handles
EVENT = 0x4000


def site(name: str) -> Site:
    return Site(-1, None, None, -1, -1, name, None, None, name, "main")


def op(name: str, lo: int = 0, hi: int = 16, writes: bool = True) -> Operation:
    touched = Spans(((lo, hi),))
    footprint = Footprint(Spans(), touched) if writes else Footprint(touched, Spans())
    return Operation(name, footprint, lambda _address, _write: site(name))


@pytest.fixture
def timeline() -> Timeline:
    t = Timeline(lambda address: (Address("buf", address, address), "global"), budget=1 << 20)
    t.create_stream(A, non_blocking=False)
    t.create_stream(B, non_blocking=False)
    t.create_stream(QUIET, non_blocking=True)
    return t


def races(timeline: Timeline, *issued: tuple[int, Operation]) -> list[tuple[str, str]]:
    found = []
    for stream, operation in issued:
        for f in timeline.issue(stream, operation, blocking=False):
            assert f.kind == "data-race" and f.space == "global" and f.address.offset == 0
            found.append(tuple(s.op for s in f.sites))
    return found


def test_the_same_stream_is_ordered(timeline):
    assert races(timeline, (A, op("first")), (A, op("second"))) == []


def test_two_created_streams_are_not(timeline):
    assert races(timeline, (A, op("first")), (B, op("second"))) == [("first", "second")]


def test_reads_do_not_race_with_reads(timeline):
    assert races(timeline, (A, op("first", writes=False)), (B, op("second", writes=False))) == []


def test_disjoint_bytes_do_not_race(timeline):
    assert races(timeline, (A, op("first", 0, 16)), (B, op("second", 16, 32))) == []


def test_the_legacy_stream_waits_for_blocking_streams_and_they_for_it(timeline):
    legacy = LEGACY_HANDLES[0]
    assert races(timeline, (A, op("a")), (legacy, op("legacy")), (B, op("b"))) == []


def test_a_non_blocking_stream_takes_no_part_in_that(timeline):
    legacy = LEGACY_HANDLES[1]  # cudaStreamLegacy is the same stream as 0
    assert races(timeline, (legacy, op("legacy")), (QUIET, op("quiet"))) == [("legacy", "quiet")]
    assert races(timeline, (QUIET, op("quiet 2")), (LEGACY_HANDLES[0], op("legacy 2"))) == [
        ("legacy", "quiet 2"),
        ("quiet", "legacy 2"),
        ("quiet 2", "legacy 2"),
    ]


def test_the_per_thread_default_stream_is_a_blocking_stream(timeline):
    assert races(timeline, (PER_THREAD_HANDLE, op("per-thread")), (LEGACY_HANDLES[0], op("legacy"))) == []
    assert races(timeline, (PER_THREAD_HANDLE, op("per-thread 2")), (A, op("a"))) == [("per-thread 2", "a")]


def test_an_event_orders_what_follows_the_wait(timeline):
    assert races(timeline, (A, op("before"))) == []
    timeline.record_event(EVENT, A)
    assert races(timeline, (A, op("after the record"))) == []
    timeline.wait_event(B, EVENT)
    assert races(timeline, (B, op("waits"))) == [("after the record", "waits")]


def test_waiting_for_an_event_never_recorded_orders_nothing(timeline):
    timeline.wait_event(B, EVENT)
    assert races(timeline, (A, op("a")), (B, op("b"))) == [("a", "b")]


def test_the_host_waiting_orders_everything_it_waited_for(timeline):
    races(timeline, (A, op("a")), (QUIET, op("quiet", 32, 48)))
    timeline.host_waits_for_stream(A)
    assert races(timeline, (B, op("b"))) == []
    assert [o.what for o in timeline.pending] == ["quiet", "b"]
    timeline.host_waits_for_event(EVENT)  # never recorded: nothing learnt
    timeline.host_waits_for_device()
    assert timeline.pending == []
    assert races(timeline, (QUIET, op("quiet 2", 32, 48))) == []


def test_a_blocking_call_is_waited_for(timeline):
    assert timeline.issue(A, op("cudaMemcpy"), blocking=True) == []
    assert timeline.pending == []
    assert races(timeline, (B, op("b"))) == []


def test_a_destroyed_streams_work_still_runs(timeline):
    races(timeline, (A, op("a")))
    timeline.destroy_stream(A)
    assert not timeline.known_stream(A)
    assert races(timeline, (QUIET, op("quiet"))) == [("a", "quiet")]
    timeline.host_waits_for_device()
    assert timeline.pending == []


def test_footprints_beyond_the_memory_budget_are_let_go():
    def page_op(name: str) -> Operation:
        written = PageBits()
        written.add(np.array([0x10000], dtype=np.uint64), 4)
        return Operation(name, Footprint(Spans(), written), lambda _address, _write: site(name))

    t = Timeline(lambda address: (Address("buf", address, address), "global"), budget=2 * PAGE_SIZE)
    for handle in (A, B, QUIET, EVENT):
        t.create_stream(handle, non_blocking=True)
    for handle, name in ((A, "a"), (B, "b"), (QUIET, "quiet")):
        t.issue(handle, page_op(name), blocking=False)
    assert [o.what for o in t.pending] == ["b", "quiet"]
    assert [tuple(s.op for s in f.sites) for f in t.issue(EVENT, page_op("last"), blocking=False)] == [
        ("b", "last"),
        ("quiet", "last"),
    ]


def test_an_operation_races_with_every_pending_one_of_another_stream_however_many_of_its_own_precede(timeline):
    found = races(timeline, (A, op("first")), (A, op("second")), (B, op("other")), (A, op("third")))
    assert found == [("first", "other"), ("second", "other"), ("other", "third")]


def test_a_new_stream_with_a_destroyed_ones_handle_is_another_stream(timeline):
    races(timeline, (A, op("old")))
    timeline.destroy_stream(A)
    timeline.create_stream(A, non_blocking=False)
    assert races(timeline, (A, op("new"))) == [("old", "new")]


def test_the_memory_budget_counts_only_the_work_still_pending():
    def page_op(name: str) -> Operation:
        written = PageBits()
        written.add(np.array([0x10000], dtype=np.uint64), 4)
        return Operation(name, Footprint(Spans(), written), lambda _address, _write: site(name))

    t = Timeline(lambda address: (Address("buf", address, address), "global"), budget=2 * PAGE_SIZE)
    for handle in (A, B, QUIET):
        t.create_stream(handle, non_blocking=True)
    t.issue(A, page_op("waited for"), blocking=False)
    t.host_waits_for_stream(A)
    for handle, name in ((B, "b"), (QUIET, "quiet")):
        t.issue(handle, page_op(name), blocking=False)
    assert [o.what for o in t.pending] == ["b", "quiet"]


def atomic(name: str, scope: str) -> Operation:
    """An operation whose accesses are atomics of `scope` (a kernel's, as its footprint's sites say)."""
    atomic_site = Site(-1, None, None, -1, -1, "atomic", scope, None, name, name)
    return Operation(name, Footprint(Spans(), Spans(((0, 16),))), lambda _address, _write: atomic_site)


@pytest.mark.parametrize("scope", ["gpu", "sys"])
def test_device_wide_atomics_of_two_streams_do_not_race(timeline, scope):
    assert races(timeline, (A, atomic("first", "gpu")), (B, atomic("second", scope))) == []


def test_block_scope_atomics_of_two_streams_race(timeline):
    assert races(timeline, (A, atomic("first", "cta")), (B, atomic("second", "gpu"))) == [("atomic", "atomic")]


def test_an_atomic_and_a_plain_access_of_two_streams_race(timeline):
    assert races(timeline, (A, atomic("first", "gpu")), (B, op("second"))) == [("atomic", "second")]


def test_the_host_races_with_device_scope_atomics_only():
    t = Timeline(lambda address: (Address("buf", address, address), "global"), budget=1 << 20)
    t.issue(LEGACY_HANDLES[0], atomic("system", "sys"), blocking=False)
    assert t.host_access(8, True, site("host")) is None
    t.issue(LEGACY_HANDLES[0], atomic("device", "gpu"), blocking=False)
    race = t.host_access(8, True, site("host"))
    assert race is not None and [s.op for s in race.sites] == ["atomic", "host"]
    assert "scope gpu, which does not include the host" in race.cause


def test_a_volatile_kernel_access_against_the_host_is_a_warning():
    t = Timeline(lambda address: (Address("buf", address, address), "global"), budget=1 << 20)
    t.issue(LEGACY_HANDLES[0], op("volatile read", writes=False), blocking=False)
    race = t.host_access(8, True, site("host"))
    assert race is not None and race.severity == "warning" and "volatile is not atomic" in race.cause
