"""The compiling executor against the interpreter, its reference.

Differential: corpus kernels run under both executors (GPURACE_EXECUTOR=
interpreter and =native, which compiles every run whatever the launch size)
must leave the same memory, emit the same event stream, count the same steps
and give the same findings. Per op family: edge values through one compiled
run must give the interpreter's bits. Fallback: an instruction the compiler
does not handle splits a run, and the results stay the same.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from corpus import read_header
from gpurace.check import check
from gpurace.errors import UserError
from gpurace.frontend.load import load_module
from gpurace.sim.launch import simulate

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("llvmlite")


class Recorder:
    """Every event, as plain comparable values."""

    def __init__(self):
        self.events = []
        self.context = None

    def bind(self, context):
        self.context = context

    def on_event(self, event):
        fields = []
        for f in dataclasses.fields(event):
            v = getattr(event, f.name)
            fields.append((f.name, v.tolist() if isinstance(v, np.ndarray) else v))
        self.events.append((type(event).__name__, fields))


LAUNCH_OPTIONS = {
    "--grid": "grid", "--block": "block", "--kernel": "kernel", "--shared-bytes": "shared_bytes",
    "--detector": "detector", "--model": "model", "--max-steps": "max_steps",
}  # fmt: skip
INT_OPTIONS = frozenset({"--shared-bytes", "--max-steps"})


def parse_launch(text: str) -> dict | None:
    """The check() arguments of an `@launch` line (one schedule), or None when it needs options beyond one launch."""
    words = shlex.split(text)
    out: dict = {"args": [], "global_vars": {}}
    while words:
        opt = words.pop(0)
        if opt == "--arg" and words:
            out["args"].append(words.pop(0))
        elif opt == "--global" and words:
            name, spec = words.pop(0).split("=", 1)
            out["global_vars"][name] = spec
        elif opt == "--schedules" and words:
            words.pop(0)  # every check here is of the default schedule, the only one with compiled runs
        elif opt == "--redundant-barriers":
            out["redundant_barriers"] = True
        elif opt in LAUNCH_OPTIONS and words:
            value = words.pop(0)
            out[LAUNCH_OPTIONS[opt]] = int(value) if opt in INT_OPTIONS else value
        else:
            return None
    if "grid" not in out or "block" not in out:
        return None
    out["grid"], out["block"] = _dims(out["grid"]), _dims(out["block"])
    out["args"] = out["args"] or None
    return out


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(","))


def corpus_launches() -> list[tuple[Path, dict]]:
    """Corpus files whose first `@launch` is one launch of at most 4096 threads."""
    chosen = []
    for path in sorted(ROOT.glob("tests/kernels/**/*.cu")):
        try:
            header = read_header(path)
        except ValueError:  # a header this reader cannot parse is test_expectations' business
            continue
        launch = parse_launch(header.launches[0]) if header.launches else None
        if launch is None or np.prod(launch["grid"]) * np.prod(launch["block"]) > 4096:
            continue
        if "max_steps" in launch:  # a spin to the step budget: a smaller one ends it at the same kind of point, sooner
            launch["max_steps"] = min(launch["max_steps"], 5_000)
        chosen.append((path, launch))
    return chosen


LAUNCHES = corpus_launches()


def checked(monkeypatch, module, launch, executor: str):
    """One `check` of the launch: (steps, thread-instructions, findings, events, final memory), or the error message."""
    monkeypatch.setenv("GPURACE_EXECUTOR", executor)
    rec = Recorder()
    try:
        report = check(module, schedules=1, sinks=[rec], **launch)
    except UserError as e:
        return str(e)
    memory = rec.context.memory
    globals_ = [(a.name, memory.read(a)) for a in memory.global_allocations()]
    shared = [memory.shared_bytes(b) for b in range(memory.nblocks)]
    findings = [repr(f) for f in report.findings]
    return report.stats["steps"], report.stats["thread_instructions"], findings, rec.events, globals_, shared


@pytest.mark.parametrize("path,launch", LAUNCHES, ids=[str(p.relative_to(ROOT / "tests/kernels")) for p, _ in LAUNCHES])
def test_corpus_kernel_is_identical_under_both_executors(monkeypatch, path, launch):
    module = load_module(path)
    reference = checked(monkeypatch, module, launch, "interpreter")
    native = checked(monkeypatch, module, launch, "native")
    if isinstance(reference, str):  # the launch itself is refused: with the same message
        assert native == reference
        return
    assert native[:2] == reference[:2]  # steps, thread-instructions
    assert native[2] == reference[2]  # findings
    assert native[3] == reference[3]  # events
    assert native[4] == reference[4] and native[5] == reference[5]  # memory


# ---------------------------------------------------------------- launches large enough for `auto`

# Corpus kernels at 65,536 threads: uniform kernel-parameter and `__constant__` loads under a tail guard; a
# tree reduction with barriers and an atomic; overruns beside a race on global memory; and straight-line
# vector, local and shared loads and stores.
LARGE_LAUNCHES = {
    "sim/straight_line_memory.cu": {"grid": (1024,), "block": (64,), "args": ["buf:65536:iota", "buf:65536", "buf:131072", "3"]},
    "sim/uniform_loads.cu": {"grid": (256,), "block": (256,), "args": ["buf:65536", "7", "65000"]},
    "reduce_shared.cu": {"grid": (256,), "block": (256,), "args": ["buf:65536:iota", "buf:1", "65536"]},
    "sim/overrun_beside_a_race.cu": {"grid": (1024,), "block": (64,), "args": ["buf:64", "buf:64"]},
}


class CompactRecorder(Recorder):
    """Every event with its arrays as bytes: a large launch's stream, small enough to keep twice."""

    def on_event(self, event):
        fields = []
        for f in dataclasses.fields(event):
            v = getattr(event, f.name)
            fields.append((f.name, (v.dtype.str, v.tobytes()) if isinstance(v, np.ndarray) else v))
        self.events.append((type(event).__name__, fields))


@pytest.mark.parametrize("name", sorted(LARGE_LAUNCHES))
def test_a_launch_auto_compiles_is_identical_to_the_interpreters(monkeypatch, name):
    from gpurace.sim import native

    module = load_module(ROOT / "tests/kernels" / name)
    launch = LARGE_LAUNCHES[name]
    assert native.chosen_executor(65536) == "native"  # under the default, auto
    results = []
    for executor in ("interpreter", None):
        if executor is None:
            monkeypatch.delenv("GPURACE_EXECUTOR", raising=False)
        else:
            monkeypatch.setenv("GPURACE_EXECUTOR", executor)
        rec = CompactRecorder()
        report = check(module, schedules=1, sinks=[rec], **launch)
        memory = rec.context.memory
        results.append(
            (
                report.stats["steps"],
                report.stats["thread_instructions"],
                [repr(f) for f in report.findings],
                rec.events,
                [(a.name, memory.read(a)) for a in memory.global_allocations()],
            )
        )
    interpreted, compiled = results
    assert compiled[:3] == interpreted[:3]  # steps, thread-instructions, findings
    assert compiled[3] == interpreted[3]  # events
    assert compiled[4] == interpreted[4]  # memory
    found = sorted((f.kind, f.space, tuple(sorted(s.loc.line for s in f.sites))) for f in report.findings)
    if name == "sim/overrun_beside_a_race.cu":  # its header's findings, among those of more blocks
        assert {("data-race", "global", (11, 12)), ("data-race", "global", (12, 12)), ("out-of-bounds", "global", (13,))} <= set(found)
    else:
        assert found == []


# ---------------------------------------------------------------- op families, edge values

INT_EDGES = [0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
             0x100000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFE, 0x123456789ABCDEF0]  # fmt: skip
F32_EDGES = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
             0x7F7FFFFF, 0x00000001, 0x807FFFFF, 0x00800000, 0x4B800001, 0x33800000, 0x3F800001, 0xC0490FDB]  # fmt: skip
F64_EDGES = [0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
             0x7FF8000000000000, 0xFFF8000000000001, 0x7FEFFFFFFFFFFFFF, 1, 0x800FFFFFFFFFFFFF, 0x0010000000000000,
             0x3CA0000000000000, 0x3FF0000000000001, 0x400921FB54442D18, 0x4340000000000001]  # fmt: skip

PRELUDE = """.version 8.0
.target sm_75
.address_size 64
.visible .entry family(.param .u64 pa, .param .u64 pb, .param .u64 pout)
{
  .reg .b64 %rd<60>;
  .reg .b32 %r<60>;
  .reg .b16 %h<40>;
  .reg .pred %p<40>;
  .reg .f32 %f<30>;
  .reg .f64 %fd<30>;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pb];
  ld.param.u64 %rd3, [pout];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd4, %r4, 8;
  add.s64 %rd5, %rd1, %rd4;
  add.s64 %rd6, %rd2, %rd4;
  ld.global.u64 %rd10, [%rd5];
  ld.global.u64 %rd11, [%rd6];
  cvt.u32.u64 %r10, %rd10;
  cvt.u32.u64 %r11, %rd11;
  cvt.u16.u64 %h10, %rd10;
  cvt.u16.u64 %h11, %rd11;
  mov.b32 %f10, %r10;
  mov.b32 %f11, %r11;
  mov.b64 %fd10, %rd10;
  mov.b64 %fd11, %rd11;
  setp.ne.s32 %p10, %r10, 0;
"""
# Each family: (edges, body); the body computes u64 results %rd20.. (stored in order) from the inputs above.
FAMILIES = {
    "int32": (INT_EDGES, """
  add.s32 %r20, %r10, %r11;
  sub.u32 %r21, %r10, %r11;
  mul.lo.s32 %r22, %r10, %r11;
  mul.hi.s32 %r23, %r10, %r11;
  mul.hi.u32 %r24, %r10, %r11;
  mad.lo.u32 %r25, %r10, %r11, %r20;
  min.s32 %r26, %r10, %r11;
  max.u32 %r27, %r10, %r11;
  abs.s32 %r28, %r10;
  neg.s32 %r29, %r11;
  and.b32 %r30, %r10, %r11;
  or.b32 %r31, %r10, 255;
  xor.b32 %r32, %r10, -1;
  not.b32 %r33, %r11;
  selp.b32 %r34, %r20, %r21, %p10;
  cvt.u64.u32 %rd20, %r20;
  cvt.u64.u32 %rd21, %r21;
  cvt.s64.s32 %rd22, %r22;
  cvt.u64.u32 %rd23, %r23;
  cvt.u64.u32 %rd24, %r24;
  cvt.u64.u32 %rd25, %r25;
  cvt.s64.s32 %rd26, %r26;
  cvt.u64.u32 %rd27, %r27;
  cvt.s64.s32 %rd28, %r28;
  cvt.s64.s32 %rd29, %r29;
  mov.b64 %rd30, {%r30, %r31};
  mov.b64 %rd31, {%r32, %r33};
  cvt.u64.u32 %rd32, %r34;
"""),
    "int64_wide": (INT_EDGES, """
  add.s64 %rd20, %rd10, %rd11;
  mul.lo.u64 %rd21, %rd10, %rd11;
  mul.hi.s64 %rd22, %rd10, %rd11;
  mul.hi.u64 %rd23, %rd10, %rd11;
  mul.wide.s32 %rd24, %r10, %r11;
  mul.wide.u32 %rd25, %r10, %r11;
  mad.wide.s32 %rd26, %r10, %r11, %rd11;
  mad.lo.s64 %rd27, %rd10, %rd11, %rd10;
  min.s64 %rd28, %rd10, %rd11;
  max.s64 %rd29, %rd10, %rd11;
  abs.s64 %rd30, %rd10;
  mul.wide.s16 %r20, %h10, %h11;
  mul.hi.s16 %h20, %h10, %h11;
  cvt.s64.s32 %rd31, %r20;
  cvt.s64.s16 %rd32, %h20;
  cvt.u8.u64 %h21, %rd10;
  cvt.s8.s32 %h22, %r10;
  cvt.u64.u16 %rd33, %h21;
  cvt.s64.s16 %rd34, %h22;
  cvt.s32.s16 %r21, %h10;
  cvt.u64.u32 %rd35, %r21;
"""),
    "shifts": (INT_EDGES, """
  shl.b32 %r20, %r10, %r11;
  shr.u32 %r21, %r10, %r11;
  shr.s32 %r22, %r10, %r11;
  shl.b64 %rd20, %rd10, %r11;
  shr.u64 %rd21, %rd10, %r11;
  shr.s64 %rd22, %rd10, %r11;
  shl.b16 %h20, %h10, %r11;
  shr.s16 %h21, %h10, %r11;
  shr.u16 %h22, %h10, %r11;
  shl.b32 %r23, %r10, 31;
  cvt.u64.u32 %rd23, %r20;
  cvt.u64.u32 %rd24, %r21;
  cvt.u64.u32 %rd25, %r22;
  cvt.u64.u16 %rd26, %h20;
  cvt.u64.u16 %rd27, %h21;
  cvt.u64.u16 %rd28, %h22;
  cvt.u64.u32 %rd29, %r23;
"""),
    "compare": (INT_EDGES, """
  setp.lt.s32 %p1, %r10, %r11;
  setp.lo.u32 %p2, %r10, %r11;
  setp.ge.s64 %p3, %rd10, %rd11;
  setp.hs.u64 %p4, %rd10, %rd11;
  setp.ne.and.s32 %p5, %r10, %r11, %p10;
  setp.gt.or.u16 %p6|%p7, %h10, %h11, !%p10;
  setp.eq.xor.b32 %p8, %r10, %r11, %p1;
  and.pred %p9, %p1, %p2;
  or.pred %p11, %p3, %p4;
  xor.pred %p12, %p5, %p6;
  not.pred %p13, %p7;
  selp.u64 %rd20, 1, 0, %p1;
  selp.u64 %rd21, 1, 0, %p2;
  selp.u64 %rd22, 1, 0, %p3;
  selp.u64 %rd23, 1, 0, %p4;
  selp.u64 %rd24, 1, 0, %p5;
  selp.u64 %rd25, 1, 0, %p6;
  selp.u64 %rd26, 1, 0, %p7;
  selp.u64 %rd27, 1, 0, %p8;
  selp.u64 %rd28, 1, 0, %p9;
  selp.u64 %rd29, 1, 0, %p11;
  selp.u64 %rd30, 1, 0, %p12;
  selp.u64 %rd31, 1, 0, %p13;
"""),
    "f32": (F32_EDGES, """
  add.f32 %f20, %f10, %f11;
  sub.rn.f32 %f21, %f10, %f11;
  mul.rn.f32 %f22, %f10, %f11;
  fma.rn.f32 %f23, %f10, %f11, %f20;
  mad.rn.f32 %f24, %f10, %f10, %f11;
  neg.f32 %f25, %f10;
  abs.f32 %f26, %f11;
  min.f32 %f27, %f10, %f11;
  max.f32 %f28, %f10, %f11;
  setp.lt.f32 %p1, %f10, %f11;
  setp.neu.f32 %p2, %f10, %f11;
  setp.nan.f32 %p3, %f10, %f11;
  setp.geu.f32 %p4, %f10, %f11;
  selp.f32 %f29, %f10, %f11, %p1;
  mov.b32 %r20, %f20;
  mov.b32 %r21, %f21;
  mov.b32 %r22, %f22;
  mov.b32 %r23, %f23;
  mov.b32 %r24, %f24;
  mov.b32 %r25, %f25;
  mov.b32 %r26, %f26;
  mov.b32 %r27, %f27;
  mov.b32 %r28, %f28;
  mov.b32 %r29, %f29;
  mov.b64 %rd20, {%r20, %r21};
  mov.b64 %rd21, {%r22, %r23};
  mov.b64 %rd22, {%r24, %r25};
  mov.b64 %rd23, {%r26, %r27};
  mov.b64 %rd24, {%r28, %r29};
  selp.u64 %rd25, 1, 0, %p1;
  selp.u64 %rd26, 1, 0, %p2;
  selp.u64 %rd27, 1, 0, %p3;
  selp.u64 %rd28, 1, 0, %p4;
"""),
    "f64": (F64_EDGES, """
  add.rn.f64 %fd20, %fd10, %fd11;
  sub.f64 %fd21, %fd10, %fd11;
  mul.f64 %fd22, %fd10, %fd11;
  fma.rn.f64 %fd23, %fd10, %fd11, %fd20;
  neg.f64 %fd24, %fd10;
  abs.f64 %fd25, %fd11;
  min.f64 %fd26, %fd10, %fd11;
  max.f64 %fd27, %fd10, %fd11;
  setp.ne.f64 %p1, %fd10, %fd11;
  setp.equ.f64 %p2, %fd10, %fd11;
  setp.num.f64 %p3, %fd10, %fd11;
  mov.b64 %rd20, %fd20;
  mov.b64 %rd21, %fd21;
  mov.b64 %rd22, %fd22;
  mov.b64 %rd23, %fd23;
  mov.b64 %rd24, %fd24;
  mov.b64 %rd25, %fd25;
  mov.b64 %rd26, %fd26;
  mov.b64 %rd27, %fd27;
  selp.u64 %rd28, 1, 0, %p1;
  selp.u64 %rd29, 1, 0, %p2;
  selp.u64 %rd30, 1, 0, %p3;
"""),
    "guarded": (INT_EDGES, """
  setp.lt.u32 %p1, %r10, %r11;
  mov.u64 %rd20, %rd10;
  mov.u64 %rd21, 7;
  @%p1 add.s64 %rd20, %rd10, %rd11;
  @!%p1 mul.lo.s64 %rd21, %rd10, %rd11;
  @%p10 setp.eq.s32 %p2, %r10, 0;
  @%p1 selp.u64 %rd22, 5, 6, %p2;
  @%p1 mov.u64 %rd23, %rd22;
  @!%p1 mov.u64 %rd23, 9;
"""),
}


def family_ptx(body: str) -> tuple[str, int]:
    """The kernel of one family and the number of u64 results it stores per thread."""
    results = sorted({int(n) for n in re.findall(r"%rd(\d+)", body) if int(n) >= 20})
    count = len(results)
    store = [f"  mul.wide.u32 %rd7, %r4, {8 * count};", "  add.s64 %rd8, %rd3, %rd7;"]
    store += [f"  st.global.u64 [%rd8+{8 * j}], %rd{n};" for j, n in enumerate(results)]
    return PRELUDE + body + "\n".join(store) + "\n  ret;\n}\n", count


def run_family(monkeypatch, tmp_path, name: str, executor: str) -> np.ndarray:
    edges, body = FAMILIES[name]
    text, count = family_ptx(body)
    path = tmp_path / f"{name}.ptx"
    path.write_text(text)
    pairs = [(a, b) for a in edges for b in edges]
    a = np.array([p[0] for p in pairs], dtype=np.uint64)
    b = np.array([p[1] for p in pairs], dtype=np.uint64)
    out = np.zeros(len(pairs) * count, dtype=np.uint64)
    block = 64
    grid = -(-len(pairs) // block)
    pad = grid * block - len(pairs)
    a, b = np.concatenate([a, a[:pad]]), np.concatenate([b, b[:pad]])
    out = np.zeros(grid * block * count, dtype=np.uint64)
    monkeypatch.setenv("GPURACE_EXECUTOR", executor)
    result = simulate(load_module(path), grid=grid, block=block, args=[a, b, out])
    assert not result.findings
    return out


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_op_family_gives_the_interpreters_bits_on_edge_values(monkeypatch, tmp_path, name):
    from gpurace.sim.native import fused

    taken = []
    original = fused.fused_handler

    def counting(eng, run, *rest):
        handler = original(eng, run, *rest)

        def watched(idx):
            r = handler(idx)
            taken.append(r == run.end and run.end - run.start > 1)
            return r

        return watched

    reference = run_family(monkeypatch, tmp_path, name, "interpreter")
    monkeypatch.setattr(fused, "fused_handler", counting)
    native = run_family(monkeypatch, tmp_path, name, "native")
    assert any(taken), "no compiled run was executed"
    mismatch = np.flatnonzero(reference != native)
    assert len(mismatch) == 0, f"first mismatch at {mismatch[:5]}: {reference[mismatch[:5]]} vs {native[mismatch[:5]]}"


# ---------------------------------------------------------------- runs, fallback and scheduling


def _kernel(tmp_path, body: str, name: str = "k"):
    path = tmp_path / f"{name}.ptx"
    path.write_text(PRELUDE.replace("family", name) + body + "  ret;\n}\n")
    return load_module(path)


SPLIT_BODY = """
  add.s32 %r20, %r10, %r11;
  mul.lo.s32 %r21, %r20, %r10;
  popc.b32 %r22, %r21;
  xor.b32 %r23, %r22, %r20;
  shl.b32 %r24, %r23, 3;
  cvt.u64.u32 %rd20, %r24;
  mul.wide.u32 %rd7, %r4, 8;
  add.s64 %rd8, %rd3, %rd7;
  st.global.u64 [%rd8], %rd20;
"""


def _runs(monkeypatch, module, **launch) -> list[tuple[int, list[str]]]:
    """(first pc, opcodes) of the runs the native executor compiles for `module`."""
    from gpurace.sim.native import fused

    made = []
    original = fused.fused_handler
    monkeypatch.setattr(fused, "fused_handler", lambda eng, run, *rest: made.append((eng, run)) or original(eng, run, *rest))
    monkeypatch.setenv("GPURACE_EXECUTOR", "native")
    simulate(module, max_steps=1, **launch)
    monkeypatch.setattr(fused, "fused_handler", original)
    return [(run.start, [eng.program.instructions[pc].opcode for pc in range(run.start, run.end)]) for eng, run in made]


def test_an_unsupported_instruction_splits_a_run_and_results_stay_identical(monkeypatch, tmp_path):
    module = _kernel(tmp_path, SPLIT_BODY)
    runs = _runs(monkeypatch, module, grid=1, block=64, args=[np.zeros(64, np.uint64)] * 3)
    opcodes = [ops for _, ops in runs]
    assert ["add", "mul", "popc"] not in opcodes
    assert any(ops[-2:] == ["add", "mul"] for ops in opcodes)  # up to the popc
    assert ["xor", "shl", "cvt", "mul", "add", "st"] in opcodes  # from just after it, through the store
    assert opcodes[0][:3] == ["ld", "ld", "ld"] and opcodes[0][10:12] == ["ld", "ld"]  # parameter and global loads
    outs = []
    for executor in ("interpreter", "native"):
        monkeypatch.setenv("GPURACE_EXECUTOR", executor)
        a = np.arange(64, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        out = np.zeros(64, np.uint64)
        result = simulate(module, grid=1, block=64, args=[a, a[::-1].copy(), out])
        outs.append((out, result.stats.steps, result.stats.thread_instructions))
    assert np.array_equal(outs[0][0], outs[1][0]) and outs[0][1:] == outs[1][1:]


# Odd lanes branch into the middle of the run that even lanes enter at its start: unfused, the two groups
# merge at the branch target; the compiled path must not be taken while the odd lanes wait inside the run.
MERGE_BODY = """
  and.b32 %r20, %r1, 1;
  setp.eq.s32 %p1, %r20, 1;
  @%p1 bra MID;
  add.s32 %r21, %r10, 1;
  add.s32 %r22, %r21, 2;
MID:
  add.s32 %r23, %r10, 3;
  mul.lo.s32 %r24, %r23, %r23;
  xor.b32 %r25, %r24, %r21;
  cvt.u64.u32 %rd20, %r25;
  mul.wide.u32 %rd7, %r4, 8;
  add.s64 %rd8, %rd3, %rd7;
  st.global.u64 [%rd8], %rd20;
"""


@pytest.mark.parametrize("max_steps", [2_000_000, 14, 15, 16, 17, 18, 19, 20])
def test_steps_merges_and_step_budgets_match_the_interpreter(monkeypatch, tmp_path, max_steps):
    module = _kernel(tmp_path, MERGE_BODY)
    inputs = [np.arange(128, dtype=np.uint64)] * 2
    results = []
    for executor in ("interpreter", "native"):
        monkeypatch.setenv("GPURACE_EXECUTOR", executor)
        out = np.zeros(128, np.uint64)
        rec = Recorder()
        result = simulate(module, sinks=[rec], max_steps=max_steps, grid=2, block=64, args=[*inputs, out])
        results.append((out.tolist(), result.stats.steps, result.stats.thread_instructions, [f.kind for f in result.findings], rec.events))
    assert results[0] == results[1]


def test_no_run_is_compiled_under_the_random_policy(monkeypatch, tmp_path):
    from gpurace.sim.native import fused

    built = []
    monkeypatch.setattr(fused, "fused_handler", lambda *a: built.append(a) or a[-1])
    monkeypatch.setenv("GPURACE_EXECUTOR", "native")
    module = _kernel(tmp_path, SPLIT_BODY)
    args = [np.zeros(64, np.uint64)] * 2 + [np.zeros(64, np.uint64)]
    simulate(module, grid=1, block=64, args=args, policy="random")
    assert built == []
    simulate(module, grid=1, block=64, args=args)
    assert built


def test_runs_compiled_under_the_reverse_policy_give_the_interpreters_results(monkeypatch):
    """`reverse` asks its schedule only at synchronisation points: a group that is every eligible thread runs
    the compiled path, and the racy kernel's events (what the detectors read) and memory are the interpreter's."""
    from gpurace.sim.native import fused

    completed = []
    original = fused.fused_handler

    def counting(eng, run, *rest):
        handler = original(eng, run, *rest)
        return lambda idx: completed.append(handler(idx) == run.end) or (run.end if completed[-1] else run.start + 1)

    module = load_module(ROOT / "tests/kernels/sim/straight_line_memory_racy.cu")
    results = []
    for executor in ("interpreter", "native"):
        if executor == "native":
            monkeypatch.setattr(fused, "fused_handler", counting)
        monkeypatch.setenv("GPURACE_EXECUTOR", executor)
        rec = Recorder()
        inp, out = np.arange(128, dtype=np.float32), np.zeros(64, dtype=np.float32)
        result = simulate(module, sinks=[rec], grid=2, block=64, args=[inp, out], policy="reverse")
        results.append((out.tolist(), result.stats.steps, result.stats.thread_instructions, rec.events))
    assert any(completed)
    assert results[0] == results[1]
    assert sum(name == "AccessBatch" for name, _ in results[1][3]) == 4  # a batch per access, both blocks in it


# Kernels with locks, fences and strong accesses: `check`'s default schedules (min-pc, reverse forked from its
# shared prefix, random, and flip where warps contended) under both executors.
SCHEDULED = [(p, launch) for p, launch in LAUNCHES if p.parent.name == "check" or p.name.startswith("straight_line")]


@pytest.mark.parametrize("path,launch", SCHEDULED, ids=[str(p.relative_to(ROOT / "tests/kernels")) for p, _ in SCHEDULED])
def test_the_default_schedules_give_the_same_report_under_both_executors(monkeypatch, path, launch):
    module = load_module(path)
    reports = []
    for executor in ("interpreter", "native"):
        monkeypatch.setenv("GPURACE_EXECUTOR", executor)
        report = check(module, **launch)
        runs = [{k: v for k, v in run.items() if k != "seconds"} for run in report.stats.get("schedules", [])]
        reports.append(([repr(f) for f in report.findings], runs, report.stats["steps"], report.stats["thread_instructions"]))
    assert reports[0] == reports[1]


def test_the_executor_variable_is_checked(monkeypatch, tmp_path):
    monkeypatch.setenv("GPURACE_EXECUTOR", "jit")
    with pytest.raises(UserError, match="GPURACE_EXECUTOR='jit' is not one of interpreter, native, auto"):
        simulate(_kernel(tmp_path, SPLIT_BODY), grid=1, block=64, args=[np.zeros(64, np.uint64)] * 3)


def test_auto_compiles_only_large_launches(monkeypatch):
    from gpurace.sim import native

    monkeypatch.delenv("GPURACE_EXECUTOR", raising=False)
    assert native.chosen_executor(native.AUTO_MIN_THREADS - 1) == "interpreter"  # the default is auto
    assert native.chosen_executor(native.AUTO_MIN_THREADS) == "native"
    monkeypatch.setenv("GPURACE_EXECUTOR", "auto")
    assert native.chosen_executor(native.AUTO_MIN_THREADS - 1) == "interpreter"
    assert native.chosen_executor(native.AUTO_MIN_THREADS) == "native"
    monkeypatch.setenv("GPURACE_EXECUTOR", "interpreter")
    assert native.chosen_executor(1 << 24) == "interpreter"


def test_compiled_code_is_cached_on_disk(monkeypatch, tmp_path):
    from gpurace.sim.native import jit

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GPURACE_EXECUTOR", "native")
    module = _kernel(tmp_path, SPLIT_BODY)
    args = [np.zeros(64, np.uint64)] * 3
    jit.LOADED.clear()  # earlier tests may have loaded the same kernel
    simulate(module, grid=1, block=64, args=args)
    assert not jit.LAST.cache_hit
    files = list((tmp_path / "cache" / "gpurace" / "native").glob("*.o"))
    assert len(files) == 1
    jit.LOADED.clear()  # as a new process would: from the disk cache
    simulate(module, grid=1, block=64, args=args)
    assert jit.LAST.cache_hit
    files[0].write_bytes(files[0].read_bytes()[:-8])  # a damaged entry is compiled again
    jit.LOADED.clear()
    simulate(module, grid=1, block=64, args=args)
    assert not jit.LAST.cache_hit
    jit.LOADED.clear()
    simulate(module, grid=1, block=64, args=args)
    assert jit.LAST.cache_hit


LOOP_BODY = """
  mov.u32 %r20, 0;
  mov.u32 %r21, 0;
LOOP:
  add.s32 %r21, %r21, %r10;
  xor.b32 %r21, %r21, %r20;
  shl.b32 %r22, %r21, 1;
  add.s32 %r21, %r22, %r21;
  add.s32 %r20, %r20, 1;
  setp.lt.u32 %p1, %r20, 150;
  @%p1 bra LOOP;
  cvt.u64.u32 %rd20, %r21;
  mul.wide.u32 %rd7, %r4, 8;
  add.s64 %rd8, %rd3, %rd7;
  st.global.u64 [%rd8], %rd20;
"""


def test_progress_callbacks_see_the_interpreters_counts(monkeypatch, tmp_path):
    """The engine reports progress every 256 steps: a compiled run never steps over one of those points."""
    module = _kernel(tmp_path, LOOP_BODY)
    seen = []
    for executor in ("interpreter", "native"):
        monkeypatch.setenv("GPURACE_EXECUTOR", executor)
        calls = []
        out = np.zeros(64, np.uint64)
        a = np.arange(64, dtype=np.uint64)
        simulate(module, grid=1, block=64, args=[a, a, out], progress=lambda s: calls.append((s.steps, s.thread_instructions)))
        seen.append((calls, out.tolist()))
    assert len(seen[0][0]) >= 3 and seen[0] == seen[1]


def test_a_group_with_other_threads_inside_the_run_takes_the_interpreters_step(monkeypatch, tmp_path):
    """Unfused, the group would merge with threads waiting inside (p, e): it must step once, as the interpreter."""
    from gpurace.sim.native import fused

    made = []
    original = fused.fused_handler
    monkeypatch.setattr(fused, "fused_handler", lambda eng, run, *rest: made.append((eng, run)) or original(eng, run, *rest))
    monkeypatch.setenv("GPURACE_EXECUTOR", "native")
    module = _kernel(tmp_path, SPLIT_BODY)
    simulate(module, grid=1, block=64, args=[np.zeros(64, np.uint64)] * 3)
    eng, run = next((eng, run) for eng, run in made if run.end - run.start >= 3)
    handler = eng.handlers[run.start]
    eng.stats.steps = 0
    group = np.arange(32, dtype=np.int64)
    eng._live = np.arange(64, dtype=np.int64)
    eng.pc[32:] = run.start + 1  # the other warp is inside the run
    assert handler(group) == run.start + 1
    eng.pc[32:] = run.end  # at the end of the run: not merged with before e
    assert handler(group) == run.end
    assert eng.stats.steps == run.end - run.start - 1  # the k - 1 steps the engine does not count itself


def test_importing_gpurace_or_interpreting_does_not_load_llvm(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(PRELUDE.replace("family", "k") + SPLIT_BODY + "  ret;\n}\n")
    code = (
        "import sys, numpy as np, gpurace\n"
        "assert 'llvmlite' not in sys.modules\n"
        "from gpurace.frontend.load import load_module\n"
        "from gpurace.sim.launch import simulate\n"
        f"simulate(load_module({str(path)!r}), grid=1, block=64, args=[np.zeros(64, np.uint64)] * 3)\n"
        "assert 'llvmlite' not in sys.modules\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GPURACE_EXECUTOR"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)  # the default: interpreted


def test_the_executor_option_sets_and_restores_the_variable(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from gpurace.cli import cli

    monkeypatch.delenv("GPURACE_EXECUTOR", raising=False)
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(int* out) { int i = threadIdx.x; int v = i * 3 + 7; v ^= v << 2; out[i] = v; }\n")
    seen = []
    from gpurace.sim import native

    original = native.chosen_executor
    monkeypatch.setattr(native, "chosen_executor", lambda n: seen.append(original(n)) or seen[-1])
    result = CliRunner().invoke(cli, ["check", str(source), "--grid", "1", "--block", "64", "--arg", "buf:64", "--executor", "native"])
    assert result.exit_code == 0, result.output
    assert seen == ["native"] and "GPURACE_EXECUTOR" not in os.environ


def test_without_llvmlite_auto_interprets_and_native_says_what_is_missing(monkeypatch):
    from gpurace.sim import native

    monkeypatch.setattr(native, "_llvmlite_available", lambda: False)
    monkeypatch.setenv("GPURACE_EXECUTOR", "auto")
    assert native.chosen_executor(1 << 24) == "interpreter"
    monkeypatch.setenv("GPURACE_EXECUTOR", "native")
    with pytest.raises(UserError, match="the native executor needs llvmlite"):
        native.chosen_executor(64)


# The run after the popc advances %rd5 and loads through it; lane 63's load is past the end of `pa`. The call
# aborts there after lanes 0..62 ran the whole run: their %rd5 must be put back, or the interpreter's step that
# stands in would advance it twice.
ABORT_BODY = """
  popc.b32 %r20, %r4;
  add.s64 %rd5, %rd5, 8;
  ld.global.u64 %rd20, [%rd5];
  sub.s64 %rd21, %rd5, %rd1;
  add.s64 %rd22, %rd21, %rd20;
  mul.wide.u32 %rd7, %r4, 8;
  add.s64 %rd8, %rd3, %rd7;
  st.global.u64 [%rd8], %rd22;
"""


def test_an_access_the_interpreter_reports_aborts_the_call_and_restores_registers(monkeypatch, tmp_path):
    from gpurace.sim.native import fused

    entered = []
    original = fused.fused_handler

    def watching(eng, run, *rest):
        handler = original(eng, run, *rest)
        if eng.program.instructions[run.start].opcode != "add" or not run.memory:
            return handler
        return lambda idx: entered.append((len(idx), handler(idx) == run.end)) or (run.end if entered[-1][1] else run.start + 1)

    module = _kernel(tmp_path, ABORT_BODY)
    results = []
    for executor in ("interpreter", "native"):
        if executor == "native":
            monkeypatch.setattr(fused, "fused_handler", watching)
        monkeypatch.setenv("GPURACE_EXECUTOR", executor)
        a = np.arange(64, dtype=np.uint64) * np.uint64(3)
        out = np.zeros(64, np.uint64)
        rec = Recorder()
        result = simulate(module, sinks=[rec], grid=1, block=64, args=[a, a.copy(), out])
        kinds = [(f.kind, f.space) for f in result.findings]
        results.append((out.tolist(), result.stats.steps, result.stats.thread_instructions, kinds, rec.events))
    assert entered == [(64, False)]  # the compiled call aborted, and the interpreter's step stood in
    assert results[0] == results[1]
    out = results[1][0]
    assert out == [11 * (i + 1) for i in range(63)] + [8 * 64]  # the offset reached plus the value read (0 past the end)
    assert ("out-of-bounds", "global") in results[1][3]
