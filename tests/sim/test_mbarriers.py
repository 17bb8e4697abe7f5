"""mbarriers (`sim.mbarriers`): phases, tokens and parities, blocked waits, the findings of misuse, the events
the detectors see, `cp.async.mbarrier.arrive`, and the forms the simulator refuses.

Most cases are hand-written PTX kernels (`kernel`): one mbarrier object `bar` in shared memory (`%bar` holds its
shared address), thread t stores what it observes to `out[4t ...]` (`%out`), `%t` is its thread index. Expected
values come from the PTX ISA's description of the mbarrier instructions.
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.check import check
from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.sim.launch import simulate
from gpurace.sim.mbarriers import ARRIVAL_BYTES
from test_expectations import ROOT

KERNEL = """\
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .b32 %t, %bar, %r<8>;
    .reg .b64 %in, %out, %off, %tok, %rd<4>;
    .reg .pred %p, %q;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b8 tile[256];
    mov.u32 %t, %tid.x;
    ld.param.u64 %in, [pin];
    ld.param.u64 %out, [pout];
    mul.wide.u32 %off, %t, 16;
    add.s64 %in, %in, %off;
    add.s64 %out, %out, %off;
    mov.u32 %bar, bar;
    setp.eq.u32 %p, %t, 0;
{body}
    ret;
}}
"""

INIT = """
    @%p mbarrier.init.shared::cta.b64 [%bar], {count};
    bar.sync 0;"""

WAIT_TOKEN = """
WAIT:
    mbarrier.try_wait.shared::cta.b64 %q, [%bar], %tok;
    @!%q bra WAIT;"""


def kernel(body: str):
    return parse_ptx(KERNEL.format(body=body), "k.ptx")


def run(body: str, threads: int, **options):
    """Simulate the kernel: (out as 4 words per thread, RunResult)."""
    a = np.arange(1, 4 * threads + 1, dtype=np.uint32)
    out = np.zeros(4 * threads, dtype=np.uint32)
    result = simulate(kernel(body), grid=1, block=threads, args=[a, out], arch="compute_90", **options)
    return out.reshape(threads, 4), result


def findings(body: str, threads: int) -> list:
    a = np.arange(1, 4 * threads + 1, dtype=np.uint32)
    out = np.zeros(4 * threads, dtype=np.uint32)
    return check(kernel(body), grid=1, block=threads, args=[a, out], arch="compute_90").findings


def sites(finding) -> list[str]:
    """The instructions of a finding's sites, without guards (the kernels have no source lines), sorted."""
    return sorted(s.instruction.split(" ", 1)[1] if s.instruction.startswith("@") else s.instruction for s in finding.sites)


# ---------------------------------------------------------------- phases, tokens, parities


def test_tokens_carry_the_phase_and_the_pending_count_each_arrival_left():
    body = INIT.format(count=4) + """
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];
    mbarrier.pending_count.b64 %r0, %tok;
    shr.u64 %rd1, %tok, 32;
    cvt.u32.u64 %r1, %rd1;
    st.global.v2.u32 [%out], {%r0, %r1};""" + WAIT_TOKEN + """
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];
    shr.u64 %rd1, %tok, 32;
    cvt.u32.u64 %r1, %rd1;
    st.global.u32 [%out+8], %r1;"""
    out, result = run(body, 4)
    # arrivals take effect in thread order: 3, 2, 1, 0 arrivals still pending; the second arrive is in phase 1
    assert out[:, 0].tolist() == [3, 2, 1, 0]
    assert out[:, 1].tolist() == [0, 0, 0, 0]
    assert out[:, 2].tolist() == [1, 1, 1, 1]
    assert result.findings == []


def test_a_parity_names_the_current_phase_or_the_one_before():
    # one thread, count 1. Phase 0 current: parity 1 (the phase before) is complete, parity 0 is not.
    # After the arrive, phase 1 is current: parity 0 is complete; parity 1 waits for phase 1, which nothing
    # can complete: the blocked test_wait returns false once nothing else can run.
    body = INIT.format(count=1) + """
    mbarrier.test_wait.parity.shared::cta.b64 %q, [%bar], 1;
    selp.u32 %r0, 1, 0, %q;
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];
    mbarrier.test_wait.parity.shared::cta.b64 %q, [%bar], 0;
    selp.u32 %r1, 1, 0, %q;
    mbarrier.test_wait.parity.shared::cta.b64 %q, [%bar], 1;
    selp.u32 %r2, 1, 0, %q;
    st.global.v4.u32 [%out], {%r0, %r1, %r2, %r2};"""
    out, result = run(body, 1)
    assert out[0, :3].tolist() == [1, 1, 0]
    assert result.findings == []


def test_a_blocked_wait_costs_no_steps_while_it_waits():
    # thread 0 arrives only after a long loop; the 63 others wait in a try_wait loop meanwhile
    body = INIT.format(count=64) + """
    @!%p bra ARRIVE;
    mov.u32 %r0, 0;
LOOP:
    add.u32 %r0, %r0, 1;
    setp.lt.u32 %q, %r0, 2000;
    @%q bra LOOP;
ARRIVE:
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];""" + WAIT_TOKEN
    _, result = run(body, 64)
    assert result.findings == []
    # 2000 iterations of 3 instructions for thread 0; the waiters run their wait a bounded number of times
    assert result.stats.steps < 2000 * 3 + 100


def test_arrive_drop_lowers_the_count_of_later_phases():
    # count 2: thread 1 drops out in phase 0, so thread 0 alone completes phase 1
    body = INIT.format(count=2) + """
    @!%p mbarrier.arrive_drop.shared::cta.b64 %tok, [%bar];
    @!%p bra DONE;
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];""" + WAIT_TOKEN + """
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];""" + WAIT_TOKEN.replace("WAIT", "WAIT2") + """
    st.global.u32 [%out], 7;
DONE:"""
    out, result = run(body, 2)
    assert out[0, 0] == 7
    assert result.findings == []


def test_expect_tx_holds_the_phase_until_complete_tx():
    # thread 0 arrives expecting 16 bytes; thread 1 completes them after its own arrival
    body = INIT.format(count=2) + """
    @%p mbarrier.arrive.expect_tx.shared::cta.b64 %tok, [%bar], 16;
    @!%p mbarrier.arrive.shared::cta.b64 %tok, [%bar];
    @!%p mbarrier.test_wait.parity.shared::cta.b64 %q, [%bar], 0;
    selp.u32 %r0, 1, 0, %q;
    @!%p mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%bar], 16;
    mbarrier.test_wait.parity.shared::cta.b64 %q, [%bar], 0;
    selp.u32 %r1, 1, 0, %q;
    st.global.v2.u32 [%out], {%r0, %r1};"""
    out, result = run(body, 2)
    assert out[1, :2].tolist() == [0, 1]  # before complete_tx the phase is incomplete (its test returned false)
    assert out[0, 1] == 1
    assert result.findings == []


# ---------------------------------------------------------------- findings


def test_a_phase_that_never_completes_is_a_deadlock_at_the_wait_and_the_init():
    body = INIT.format(count=3) + """
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];""" + WAIT_TOKEN
    (finding,) = findings(body, 2)
    assert finding.kind == "deadlock" and finding.space == "shared"
    assert "mbarrier phase never completes" in finding.cause and "1 pending arrival" in finding.cause
    assert sites(finding) == sorted(["mbarrier.init.shared::cta.b64 [%bar], 3", "mbarrier.try_wait.shared::cta.b64 %q, [%bar], %tok"])


def test_more_arrivals_than_the_count_is_a_finding():
    body = INIT.format(count=2) + """
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];"""
    (finding,) = findings(body, 4)
    assert finding.kind == "invalid-mbarrier-use"
    assert "more arrivals" in finding.cause and "2 arrivals too many" in finding.cause
    assert sites(finding) == ["mbarrier.arrive.shared::cta.b64 %tok, [%bar]"]


@pytest.mark.parametrize(
    "before, why",
    [("", "no mbarrier.init"), (INIT.format(count=1) + "\n    @%p mbarrier.inval.shared::cta.b64 [%bar];", "after mbarrier.inval")],
)
def test_use_before_init_or_after_inval_is_a_finding(before, why):
    body = before + """
    bar.sync 0;
    @%p mbarrier.arrive.shared::cta.b64 %tok, [%bar];"""
    (finding,) = findings(body, 1)
    assert finding.kind == "invalid-mbarrier-use" and why in finding.cause
    assert sites(finding) == ["mbarrier.arrive.shared::cta.b64 %tok, [%bar]"]


def test_an_ordinary_load_of_a_live_mbarrier_is_a_finding():
    body = INIT.format(count=1) + """
    ld.shared.u32 %r0, [bar+4];"""
    (finding,) = findings(body, 1)
    assert finding.kind == "invalid-mbarrier-use" and "ordinary load or store" in finding.cause


def test_init_without_a_barrier_before_the_arrivals_races_with_them():
    # thread 1 initialises: thread 0's arrival, unordered with the init, comes first in the batch (the
    # detectors keep the last write per byte, so an arrival of the initialising thread itself would hide it)
    body = """
    setp.eq.u32 %q, %t, 1;
    @%q mbarrier.init.shared::cta.b64 [%bar], 2;
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];"""
    (finding,) = findings(body, 2)
    assert finding.kind == "data-race" and finding.space == "shared"
    assert sites(finding) == sorted(["mbarrier.init.shared::cta.b64 [%bar], 2", "mbarrier.arrive.shared::cta.b64 %tok, [%bar]"])


# ---------------------------------------------------------------- happens-before


def test_a_wait_acquires_the_arrivals_of_its_phase_only():
    events = []

    class Recorder:
        def on_event(self, event):
            if isinstance(event, AccessBatch):
                events.append(event)

    body = INIT.format(count=2) + """
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];""" + WAIT_TOKEN
    _, result = run(body, 2, sinks=[Recorder()])
    bar = [e for e in events if e.size in (ARRIVAL_BYTES, 8)]
    # init: a plain 8-byte store; phase 0: a release store (first arrival) and a release atomic at bar+0;
    # the waits: acquire loads of bar+0, all of CTA scope
    kinds = [(e.kind, e.size, e.sem, e.scope, e.threads.tolist()) for e in bar]
    assert kinds == [
        (AccessKind.WRITE, 8, None, None, [0]),
        (AccessKind.WRITE, ARRIVAL_BYTES, "release", "cta", [0]),
        (AccessKind.ATOMIC, ARRIVAL_BYTES, "release", "cta", [1]),
        (AccessKind.READ, ARRIVAL_BYTES, "acquire", "cta", [0, 1]),
    ]
    assert len({int(e.addrs[0]) for e in bar}) == 1  # phase 0's location is the object's first 4 bytes


def test_a_store_before_the_arrive_is_ordered_before_reads_after_the_wait():
    body = INIT.format(count=2) + """
    shl.b32 %r1, %t, 2;
    mov.u32 %r2, tile;
    add.u32 %r3, %r2, %r1;
    st.shared.u32 [%r3], %t;
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];{read}""" + WAIT_TOKEN + """
    xor.b32 %r4, %r1, 4;
    add.u32 %r5, %r2, %r4;
    ld.shared.u32 %r6, [%r5];
    st.global.u32 [%out], %r6;"""
    assert findings(body.format(read=""), 2) == []
    racy = body.format(read="\n    xor.b32 %r4, %r1, 4;\n    add.u32 %r5, %r2, %r4;\n    ld.shared.u32 %r7, [%r5];")
    found = findings(racy, 2)
    races = [f for f in found if f.kind == "data-race"]
    assert len(races) == 1 and races[0].space == "shared"
    assert sites(races[0]) == sorted(["st.shared.u32 [%r3], %t", "ld.shared.u32 %r7, [%r5]"])


# ---------------------------------------------------------------- cp.async.mbarrier.arrive


COPY = """
    shl.b32 %r1, %t, 4;
    mov.u32 %r2, tile;
    add.u32 %r3, %r2, %r1;
    cp.async.cg.shared.global [%r3], [%in], 16;
    cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%bar];"""


def test_copies_tied_to_a_phase_land_before_its_waiters_read():
    body = INIT.format(count=4) + COPY + """
PHASE:
    mbarrier.try_wait.parity.shared::cta.b64 %q, [%bar], 0;
    @!%q bra PHASE;
    xor.b32 %r4, %r1, 16;
    add.u32 %r5, %r2, %r4;
    ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r5];
    st.global.v4.u32 [%out], {%r4, %r5, %r6, %r7};"""
    out, result = run(body, 4)
    a = np.arange(1, 17, dtype=np.uint32).reshape(4, 4)
    assert out.tolist() == a[[1, 0, 3, 2]].tolist()  # thread t reads the slot of thread t ^ 1
    assert result.findings == []
    assert findings(body, 4) == []


def test_a_read_of_a_tied_copy_before_its_phase_completes_races_with_the_copy():
    # count 5: the phase needs one more arrival than the copies owe, which thread 0 makes after reading
    body = INIT.format(count=5) + COPY + """
    xor.b32 %r4, %r1, 16;
    add.u32 %r5, %r2, %r4;
    ld.shared.u32 %r6, [%r5];
    @%p mbarrier.arrive.shared::cta.b64 %tok, [%bar];"""
    found = [f for f in findings(body, 4) if f.kind == "data-race"]
    assert len(found) == 1 and found[0].space == "shared"
    assert "before its mbarrier phase completes" in found[0].cause
    assert sites(found[0]) == sorted(["cp.async.cg.shared.global [%r3], [%in], 16", "ld.shared.u32 %r6, [%r5]"])


def test_a_wait_group_for_a_copy_tied_to_an_mbarrier_is_refused():
    body = INIT.format(count=2) + COPY + """
    cp.async.wait_all;"""
    with pytest.raises(UserError, match="tied to an mbarrier"):
        run(body, 1)


# ---------------------------------------------------------------- refused forms


@pytest.mark.parametrize(
    "text, message",
    [
        ("mbarrier.arrive.release.cluster.shared::cluster.b64 %tok, [%bar];", "returns no state"),
        ("mbarrier.try_wait.acquire.cluster.shared::cluster.b64 %q, [%bar], %tok;", "takes no .shared::cluster object"),
        ("mbarrier.init.shared::cluster.b64 [%bar], 1;", "takes no .shared::cluster object"),
        ("cp.async.mbarrier.arrive.shared::cluster.b64 [%bar];", "shared::cluster not supported for cp"),
    ],
)
def test_forms_the_isa_lacks_on_cluster_objects_are_refused_with_the_line(text, message):
    with pytest.raises(UserError, match=message):
        run(INIT.format(count=1) + "\n    " + text, 1)


def test_the_command_line_refuses_a_remote_arrive_returning_a_state_with_exit_2(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(KERNEL.format(body=INIT.format(count=1) + "\n    mbarrier.arrive.release.cluster.shared::cluster.b64 %tok, [%bar];"))
    result = CliRunner().invoke(cli, ["check", str(path), "--grid", "1", "--block", "1", "--arg", "u32:4", "--arg", "u32:4"])
    assert result.exit_code == 2
    assert "returns no state" in result.output and "mbarrier.arrive.release.cluster.shared::cluster.b64" in result.output


# ---------------------------------------------------------------- compiled kernels


def test_the_producer_consumer_kernel_computes_its_result():
    path = ROOT / "tests/kernels/mbarrier/producer_consumer.cu"
    a = np.arange(256, dtype=np.float32)
    out = np.zeros(128, dtype=np.float32)
    result = simulate(path, grid=2, block=64, args=[a, out], arch="compute_90")
    assert result.findings == []
    assert out.reshape(4, 32).tolist() == a[:128].reshape(4, 32)[:, ::-1].tolist()


def test_the_cuda_barrier_copy_pipeline_computes_its_result():
    path = ROOT / "tests/kernels/mbarrier/copy_pipeline.cu"
    a = np.arange(128, dtype=np.float32)
    out = np.zeros(128, dtype=np.float32)
    result = simulate(path, grid=2, block=64, args=[a, out], arch="compute_80")
    assert result.findings == []
    assert out.reshape(2, 64).tolist() == a.reshape(2, 64)[:, ::-1].tolist()


def test_the_interval_detector_is_refused_and_auto_takes_another():
    body = INIT.format(count=1) + """
    mbarrier.arrive.shared::cta.b64 %tok, [%bar];""" + WAIT_TOKEN
    a, out = np.zeros(4, dtype=np.uint32), np.zeros(4, dtype=np.uint32)
    with pytest.raises(UserError, match="mbarriers"):
        check(kernel(body), grid=1, block=1, args=[a, out], arch="compute_90", detector="interval")
    report = check(kernel(body), grid=1, block=1, args=[a, out], arch="compute_90")
    assert report.findings == [] and report.launch["detector"] == "gwcp"
