"""Asynchronous copies (`sim.async_copies`): when `cp.async` copies land, what they zero-fill, which accesses
race with a copy in flight, the events the detectors see, and the forms the simulator refuses.

Each case is a hand-written PTX kernel (`kernel`): thread t has `%src` = &in[4t] (16 bytes), `%dst` = the
16 bytes at `tile + 16t` in shared memory and `%out` = &out[4t]; `%t` is its thread index. Expected values
and sites come from the PTX ISA's description of `cp.async`, `cp.async.commit_group`, `cp.async.wait_group`
and `cp.async.wait_all`.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.check import check
from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.async_copies import READ_DESTINATION, WRITE_DESTINATION, WRITE_SOURCE, WordIndex
from gpurace.sim.events import AccessBatch, AccessKind, ExitEvent
from gpurace.sim.launch import simulate
from test_expectations import ROOT

KERNEL = """\
.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .b32 %t, %dst, %base, %r<8>;
    .reg .b64 %in, %out, %off, %src, %rd<4>;
    .reg .pred %p;
    .shared .align 16 .b8 tile[1024];
    mov.u32 %t, %tid.x;
    ld.param.u64 %in, [pin];
    ld.param.u64 %out, [pout];
    mul.wide.u32 %off, %t, 16;
    add.s64 %src, %in, %off;
    add.s64 %out, %out, %off;
    shl.b32 %dst, %t, 4;
    mov.u32 %base, tile;
    add.u32 %dst, %dst, %base;
{body}
    ret;
}}
"""

THREADS = 8


def kernel(body: str):
    return parse_ptx(KERNEL.format(body=body), "k.ptx")


def inputs() -> tuple[np.ndarray, np.ndarray]:
    """`in` (4 words per thread, all distinct and nonzero) and a zeroed `out` of the same size."""
    return np.arange(1, 4 * THREADS + 1, dtype=np.uint32) * 0x01010101, np.zeros(4 * THREADS, dtype=np.uint32)


def run(body: str, **options):
    """Simulate the kernel: (out, RunResult); `in` and `out` as `inputs` gives them."""
    a, out = inputs()
    result = simulate(kernel(body), grid=1, block=THREADS, args=[a, out], arch="compute_80", **options)
    return out, result


def races(body: str) -> list:
    """The data races `check` reports for the kernel, with `inputs` (reads of a destination before its copy
    lands are also reads of uninitialised shared memory: that check has its own tests)."""
    findings = check(kernel(body), grid=1, block=THREADS, args=list(inputs()), arch="compute_80").findings
    return [f for f in findings if f.kind != "uninitialized-read"]


def instruction(site) -> str:
    return site.instruction.split()[0]


STORE_V4 = """
    ld.shared.v4.u32 {%r0, %r1, %r2, %r3}, [%dst];
    st.global.v4.u32 [%out], {%r0, %r1, %r2, %r3};"""


# ---------------------------------------------------------------- what lands, and when


def test_a_16_byte_copy_lands_at_wait_all():
    out, result = run("    cp.async.cg.shared.global [%dst], [%src], 16;\n    cp.async.wait_all;" + STORE_V4)
    a, _ = inputs()
    assert out.tolist() == a.tolist()
    assert result.findings == []


def test_cache_hints_and_the_cta_window_change_nothing():
    body = """
    createpolicy.fractional.L2::evict_last.b64 %rd3, 0f3F800000;
    cp.async.ca.shared.global.L2::128B [%dst], [%src], 8;
    cp.async.ca.shared::cta.global.L2::cache_hint [%dst+8], [%src+8], 4, %rd3;
    cp.async.ca.shared.global.L2::cache_hint [%dst+12], [%src+12], 4, 4, %rd3;
    cp.async.commit_group;
    cp.async.wait_group 0;""" + STORE_V4
    out, result = run(body)
    assert out.tolist() == inputs()[0].tolist()
    assert result.findings == []


def test_source_size_and_ignore_src_fill_the_rest_with_zeros():
    # odd threads ignore the source (zeros); even ones copy 3 of 8 bytes and 4 of 4, from words 0-1 and 2
    body = """
    and.b32 %r4, %t, 1;
    setp.eq.u32 %p, %r4, 1;
    st.shared.v4.u32 [%dst], {%t, %t, %t, %t};
    mov.u32 %r5, 3;
    @!%p cp.async.ca.shared.global [%dst], [%src], 8, %r5;
    @%p cp.async.ca.shared.global [%dst], [%src], 8, %p;
    add.s64 %rd1, %src, 8;
    add.u32 %r6, %dst, 8;
    cp.async.ca.shared.global [%r6], [%rd1], 4, %p;
    cp.async.commit_group;
    cp.async.wait_group 0;""" + STORE_V4
    out, result = run(body)
    a, _ = inputs()
    expect = np.zeros(4 * THREADS, dtype=np.uint32)
    for t in range(THREADS):
        if t % 2 == 0:
            expect[4 * t] = a[4 * t] & 0x00FFFFFF  # bytes 0-2 copied, byte 3 zero-filled
            expect[4 * t + 2] = a[4 * t + 2]
        expect[4 * t + 3] = t  # beyond every copy: what the thread stored first
    assert out.tolist() == expect.tolist()
    assert result.findings == []


def test_a_copy_has_not_landed_before_its_wait():
    body = """
    cp.async.ca.shared.global [%dst], [%src], 4;
    cp.async.commit_group;
    ld.shared.u32 %r0, [%dst];
    st.global.u32 [%out], %r0;
    cp.async.wait_group 0;
    ld.shared.u32 %r1, [%dst];
    st.global.u32 [%out+4], %r1;"""
    out, _ = run(body)
    a, _ = inputs()
    assert out.reshape(THREADS, 4)[:, 0].tolist() == [0] * THREADS  # the shared bytes before the copy
    assert out.reshape(THREADS, 4)[:, 1].tolist() == a.reshape(THREADS, 4)[:, 0].tolist()


def test_pending_copies_complete_when_the_thread_exits():
    events = []

    class Recorder:
        def on_event(self, event):
            events.append(event)

    _, result = run("    cp.async.cg.shared.global [%dst], [%src], 16;", sinks=[Recorder()])
    a, _ = inputs()
    shared = np.frombuffer(result.memory.shared_bytes(0), dtype=np.uint32)
    assert shared[: 4 * THREADS].tolist() == a.tolist()
    kinds = [(type(e).__name__, getattr(e, "kind", None)) for e in events]
    write = kinds.index(("AccessBatch", AccessKind.WRITE))
    assert write < next(i for i, e in enumerate(events) if isinstance(e, ExitEvent))
    assert result.findings == []


def test_the_copy_writes_at_its_own_line_when_the_wait_completes_it():
    events = []

    class Recorder:
        def on_event(self, event):
            events.append(event)

    body = """
    cp.async.ca.shared.global [%dst], [%src], 4;
    st.global.u32 [%out], %t;
    cp.async.wait_all;"""
    _, result = run(body, sinks=[Recorder()])
    copy_pc = next(pc for pc, ins in enumerate(result.program.instructions) if ins.opcode == "cp")
    batches = [e for e in events if isinstance(e, AccessBatch)]
    assert [(b.pc == copy_pc, b.kind) for b in batches] == [
        (True, AccessKind.READ),  # the source, at issue
        (False, AccessKind.WRITE),  # the st.global between issue and wait
        (True, AccessKind.WRITE),  # the copy, at the wait
    ]
    copy = batches[2]
    assert copy.threads.tolist() == list(range(THREADS)) and copy.size == 4


def test_one_instruction_issuing_twice_before_the_wait_completes_both_in_issue_order():
    # a loop issues the same cp.async twice per thread, to words 0 and 1 of its slot, from in words 0 and 1
    body = """
    mov.u32 %r4, 0;
LOOP:
    shl.b32 %r5, %r4, 2;
    add.u32 %r6, %dst, %r5;
    cvt.u64.u32 %rd1, %r5;
    add.s64 %rd2, %src, %rd1;
    cp.async.ca.shared.global [%r6], [%rd2], 4;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p, %r4, 2;
    @%p bra LOOP;
    cp.async.wait_all;
    ld.shared.v2.u32 {%r0, %r1}, [%dst];
    st.global.v2.u32 [%out], {%r0, %r1};"""
    out, result = run(body)
    a, _ = inputs()
    assert out.reshape(THREADS, 4)[:, :2].tolist() == a.reshape(THREADS, 4)[:, :2].tolist()
    assert result.findings == []


# ---------------------------------------------------------------- groups


def test_wait_group_completes_every_group_but_the_newest():
    # groups 1 and 2 complete at wait_group 1; group 3 (words 2-3 read before their copy's wait) does not
    body = """
    cp.async.ca.shared.global [%dst], [%src], 4;
    cp.async.commit_group;
    add.u32 %r6, %dst, 4;
    add.s64 %rd1, %src, 4;
    cp.async.ca.shared.global [%r6], [%rd1], 4;
    cp.async.commit_group;
    add.u32 %r7, %dst, 8;
    add.s64 %rd2, %src, 8;
    cp.async.ca.shared.global [%r7], [%rd2], 8;
    cp.async.commit_group;
    cp.async.wait_group 1;
    ld.shared.v2.u32 {%r0, %r1}, [%dst];
    ld.shared.v2.u32 {%r2, %r3}, [%dst+8];
    cp.async.wait_group 0;"""
    (finding,) = races(body)
    assert (finding.kind, finding.space, finding.cause) == ("data-race", "shared", READ_DESTINATION)
    copy, read = finding.sites
    assert copy.instruction.startswith("cp.async.ca.shared.global [%r7]") and copy.op == "cp.async write"
    assert read.instruction.startswith("ld.shared.v2.u32 {%r2, %r3}") and read.op == "read"
    assert copy.thread == read.thread  # the issuing thread itself must wait too
    assert finding.count == THREADS


def test_wait_group_leaves_uncommitted_copies_in_flight_and_wait_all_commits_them():
    copy = "    cp.async.ca.shared.global [%dst], [%src], 4;\n"
    read = "\n    ld.shared.u32 %r0, [%dst];"
    (finding,) = races(copy + "    cp.async.wait_group 0;" + read)
    assert finding.cause == READ_DESTINATION
    assert races(copy + "    cp.async.wait_all;" + read) == []


# ---------------------------------------------------------------- races with copies in flight


def test_a_write_to_a_pending_destination_races():
    (finding,) = races("    cp.async.ca.shared.global [%dst], [%src], 4;\n    st.shared.u32 [%dst], %t;\n    cp.async.wait_all;")
    assert (finding.space, finding.cause) == ("shared", WRITE_DESTINATION)
    assert [instruction(s) for s in finding.sites] == ["cp.async.ca.shared.global", "st.shared.u32"]


def test_two_copies_to_one_place_race_even_from_one_thread():
    body = """
    cp.async.ca.shared.global [%dst], [%src], 4;
    cp.async.commit_group;
    cp.async.ca.shared.global [%dst], [%src+4], 4;
    cp.async.wait_all;"""
    (finding,) = races(body)
    assert (finding.space, finding.cause) == ("shared", WRITE_DESTINATION)
    assert [s.instruction for s in finding.sites] == [
        "cp.async.ca.shared.global [%dst], [%src], 4",
        "cp.async.ca.shared.global [%dst], [%src+4], 4",
    ]


def test_another_threads_read_of_a_pending_destination_races():
    # thread t reads the slot of thread t ^ 1, in flight
    body = """
    cp.async.ca.shared.global [%dst], [%src], 4;
    xor.b32 %r4, %dst, 16;
    ld.shared.u32 %r0, [%r4];
    cp.async.wait_all;"""
    (finding,) = races(body)
    assert finding.cause == READ_DESTINATION
    copy, read = finding.sites
    assert copy.thread != read.thread
    assert finding.address.allocation == "tile"


def test_a_write_to_a_pending_source_races_and_a_read_of_it_does_not():
    copy = "    cp.async.ca.shared.global [%dst], [%src], 4;\n"
    assert races(copy + "    ld.global.u32 %r0, [%src];\n    cp.async.wait_all;") == []
    (finding,) = races(copy + "    st.global.u32 [%src], %t;\n    cp.async.wait_all;")
    assert (finding.space, finding.cause) == ("global", WRITE_SOURCE)
    assert [instruction(s) for s in finding.sites] == ["cp.async.ca.shared.global", "st.global.u32"]
    assert finding.sites[0].op == "cp.async read"


def test_a_copy_that_ignores_its_source_has_no_source_to_race_with():
    body = """
    setp.eq.u32 %p, %t, %t;
    cp.async.ca.shared.global [%dst], [%src], 4, %p;
    st.global.u32 [%src], %t;
    cp.async.wait_all;"""
    assert races(body) == []


def test_the_race_reads_as_every_race_in_json_and_sarif():
    path = ROOT / "tests" / "kernels" / "async_copy" / "pipeline_no_wait.cu"
    launch = ["--arch", "compute_80", "--grid", "2", "--block", "64", "--arg", "buf:256:iota", "--arg", "buf:128", "--arg", "2"]
    report = json.loads(CliRunner().invoke(cli, ["check", str(path), *launch, "--format", "json"]).stdout)
    (race,) = [f for f in report["findings"] if f["kind"] == "data-race"]
    assert race["cause"] == READ_DESTINATION and race["space"] == "shared"
    assert [a["line"] for a in race["accesses"]] == [15, 29]
    assert race["count"] == 2 * 2 * 64  # two stages, two blocks, 64 threads
    sarif = json.loads(CliRunner().invoke(cli, ["check", str(path), *launch, "--format", "sarif"]).stdout)
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "data-race"]
    assert [r["message"]["text"] for r in results] == [READ_DESTINATION]


def test_the_pipeline_sums_each_stage():
    path = ROOT / "tests" / "kernels" / "async_copy" / "pipeline.cu"
    tiles = 4
    a = np.arange(2 * tiles * 64, dtype=np.float32)
    out = np.zeros(2 * 64, dtype=np.float32)
    result = simulate(path, grid=2, block=64, args=[a, out, tiles], arch="compute_80")
    stages = a.reshape(2, tiles, 64)
    assert out.reshape(2, 64).tolist() == stages[:, :, ::-1].sum(axis=1).tolist()
    assert result.findings == []


def test_inline_ptx_copies_past_the_end_zero_fill():
    path = ROOT / "tests" / "kernels" / "async_copy" / "inline_ptx_tail.cu"
    n = 20
    a = np.arange(128, dtype=np.float32) + 1
    out = np.full(128, -1, dtype=np.float32)
    result = simulate(path, grid=1, block=32, args=[a, out, n], arch="compute_80")
    slots = a.reshape(32, 4).copy()
    slots[n:] = 0  # threads n.. copied zeros
    assert out.reshape(32, 4).tolist() == slots[::-1].tolist()
    assert result.findings == []


# ---------------------------------------------------------------- the word index


def test_word_index_finds_every_overlapping_word_and_its_copy():
    index = WordIndex(np.array([100, 208], dtype=np.uint64), np.array([4, 16]))
    # a 4-byte access before both, one that straddles the first copy's end, bytes inside the second, one after
    lanes, rows = index.hits(np.array([96, 102, 222, 224], dtype=np.uint64), 4)
    assert sorted(zip(lanes.tolist(), rows.tolist())) == [(1, 0), (2, 1)]
    lanes, rows = index.hits(np.array([200], dtype=np.uint64), 16)  # a 16-byte access over the second's first half
    assert (lanes.tolist(), rows.tolist()) == ([0, 0], [1, 1])
    lanes, rows = index.hits(np.array([103, 104], dtype=np.uint64), 1)  # single bytes: the last of the first, past it
    assert (lanes.tolist(), rows.tolist()) == ([0], [0])
    empty = WordIndex(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64))
    assert [len(x) for x in empty.hits(np.array([1], dtype=np.uint64), 4)] == [0, 0]


# ---------------------------------------------------------------- refused forms


@pytest.mark.parametrize(
    "line, message",
    [
        ("cp.async.wait_group %t;", "must be a non-negative integer constant"),
        ("cp.async.cg.shared.global [%dst], [%src], 8;", "cp.async.cg copies 16 bytes"),
        ("cp.async.bulk.global.shared::cta.bulk_group.ignore_oob [%dst], [%src], 16;", "ignore_oob"),
        ("cp.async.mbarrier.arrive.shared::cluster.b64 [%base];", "shared::cluster"),
    ],
)
def test_unsupported_forms_are_refused_with_their_line(line, message):
    with pytest.raises(UserError, match=message):
        run("    " + line)


def test_a_source_size_past_the_copy_size_is_refused_at_run_time():
    with pytest.raises(UserError, match="source size .* is 8 at run time, more than the 4 bytes"):
        run("    mov.u32 %r0, 8;\n    cp.async.ca.shared.global [%dst], [%src], 4, %r0;")
