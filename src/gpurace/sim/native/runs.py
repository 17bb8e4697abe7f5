"""Finding the straight-line runs of register-only instructions, loads and stores, and writing each as one
LLVM function.

A run is a maximal sequence of consecutive instructions of one function, not
crossing a label, that the compiler handles (`semantics.semantics_of`, plain `mov`s of registers,
immediates and launch-constant special registers, and the loads and stores of `memory_steps`), each
register-only one possibly guarded by a predicate. Its function loops over the thread ids it is given and
runs every instruction of the run for one thread before the next: register-only instructions of different
threads touch different register elements, so this order gives the same registers as the interpreter's
one-instruction-at-a-time order (loads and stores keep it with their own rules, `memory_steps`). A thread's registers stay in SSA values inside the run; the ones it
writes are stored once at its end. A guarded instruction selects, per thread,
between the new and the old value, and records whether any thread's guard
held (the livelock check marks its destinations written only then, as the
interpreter does).

Operands reach the function through a table of array addresses (register
slots, special registers, and for loads and stores the memory stores and the
arrays the function hands lanes back in, filled before each call), so the IR
names no address: the same kernel gives the same IR in every launch, which is
what the on-disk cache keys on. The function returns how many threads it
finished: all of them, or fewer when an access aborted it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Imm, Instruction, Negated, PredPair, Reg, Sink, SpecialReg
from gpurace.sim.alu import compile_alu
from gpurace.sim.alu.rawtypes import width
from gpurace.sim.forms import check_modifiers
from gpurace.sim.native.memory_steps import FIND_ALLOCATION, MemoryStep, write_step
from gpurace.sim.native.semantics import Emitter, Semantics, semantics_of
from gpurace.sim.state import SIGNED_TYPES, check_immediate, imm_bits, raw_dtype

#: Special registers that hold the same values for the whole launch (not %clock and friends).
LAUNCH_CONSTANT_SPECIALS = frozenset({"tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid"})


@dataclass
class Step:
    """One instruction of a run, resolved: what it reads and writes, as which types, and its semantics."""

    ins: Instruction
    srcs: list
    src_types: tuple[str, ...]
    dsts: list
    dst_types: tuple[str, ...]
    semantics: Semantics | None  # None: a move (the source is the result)


@dataclass
class Run:
    """Instructions start..end-1 of one function, compiled as the function `name`."""

    start: int
    end: int
    name: str
    operands: list = field(default_factory=list)  # table entries: ("reg", slot) or ("special", name, component)
    written: list[int] = field(default_factory=list)  # slots written by unguarded instructions
    guarded_writes: list[tuple[int, list[int]]] = field(default_factory=list)  # (flag index, slots) per guarded step
    memory: list[MemoryStep] = field(default_factory=list)  # its loads and stores, in program order
    undo: list[int] = field(default_factory=list)  # slots whose old values go to undo buffers (a run that can abort)


def step_of(state, fn: str, ins: Instruction) -> Step | None:
    """`ins` resolved for compilation, or None when the interpreter must run it."""
    try:
        check_modifiers(ins)
        if ins.opcode == "mov":
            step = _move(ins)
        else:
            step = _alu(ins)
        if step is None or not all(_readable(state, fn, ins, op, t) for op, t in zip(step.srcs, step.src_types)):
            return None
        if not all(isinstance(d, Sink) or (isinstance(d, Reg) and _slot(state, fn, d) is not None) for d in step.dsts):
            return None
        if ins.guard is not None and _storage_bits(state, fn, ins.guard.reg) != 1:
            return None
        return step
    except UserError:  # the interpreter reports it, naming the instruction, when it runs
        return None


def _move(ins: Instruction) -> Step | None:
    if len(ins.operands) != 2 or not ins.types:
        return None
    t = ins.types[-1]
    if t != "pred" and width(t) not in (8, 16, 32, 64):
        return None
    dst, src = ins.operands
    return Step(ins, [src], (t,), [dst], (t,), None)


def _alu(ins: Instruction) -> Step | None:
    op = compile_alu(ins)
    if op is None or op.carry_in or op.carry_out or not ins.operands:
        return None
    semantics = semantics_of(ins)
    if semantics is None:
        return None
    first = ins.operands[0]
    if isinstance(first, PredPair):
        dsts, srcs = [first.first, first.second], list(ins.operands[1:])
    else:
        dsts, srcs = list(ins.operands[: len(op.dst_types)]), list(ins.operands[len(op.dst_types) :])
    if len(srcs) != len(op.src_types) or len(dsts) != len(op.dst_types):
        return None
    return Step(ins, srcs, op.src_types, dsts, op.dst_types, semantics)


def _slot(state, fn: str, reg: Reg) -> int | None:
    try:
        return state.slot(fn, reg)
    except UserError:
        return None


def _storage_bits(state, fn: str, reg: Reg) -> int | None:
    slot = _slot(state, fn, reg)
    if slot is None:
        return None
    dt = state.regs[slot].dtype
    return 1 if dt == np.bool_ else dt.itemsize * 8


def _readable(state, fn: str, ins: Instruction, op, t: str) -> bool:
    if t != "pred":
        raw_dtype(t)
    if isinstance(op, Reg):
        return _slot(state, fn, op) is not None
    if isinstance(op, Negated):
        return t == "pred" and _slot(state, fn, op.reg) is not None
    if isinstance(op, Imm):
        check_immediate(op, t, ins)
        return True
    if isinstance(op, SpecialReg):
        return op.name in LAUNCH_CONSTANT_SPECIALS
    return False


def find_runs(program, state, memory_step=None) -> list[tuple[int, list]]:
    """(first pc, steps) of every run of two or more compilable instructions.

    `memory_step` (fn, pc, instruction) -> `MemoryStep` or None admits loads and stores (none without it).
    A run ends before a label: threads that branch there (a loop's head) then enter a run at its start,
    where its compiled function is, instead of running the rest of a longer run one instruction at a time.
    It ends before a load that follows one of its stores too (`memory_steps`: stores are deferred).
    """
    runs: list[tuple[int, list]] = []
    current: list = []
    start = 0
    stored = False
    owner = program.owner
    labelled = set(program.labels.values())
    for pc, ins in enumerate(program.instructions):
        step = step_of(state, owner[pc], ins)
        if step is None and memory_step is not None:
            step = memory_step(owner[pc], pc, ins)
        loads_after_store = isinstance(step, MemoryStep) and not step.store and stored
        if step is not None and current and (owner[pc] != owner[start] or pc in labelled or loads_after_store):
            if len(current) >= 2:
                runs.append((start, current))
            current = []
        if step is None:
            if len(current) >= 2:
                runs.append((start, current))
            current = []
            continue
        if not current:
            start, stored = pc, False
        current.append(step)
        stored = stored or (isinstance(step, MemoryStep) and step.store)
    if len(current) >= 2:
        runs.append((start, current))
    return runs


class _Writer:
    """Writes the LLVM function of one run."""

    def __init__(self, state, fn: str, run: Run):
        self.state = state
        self.fn = fn
        self.run = run
        self.entry: list[str] = []  # loads of table entries
        self.body: list[str] = []
        self.e = Emitter(self.body, "v")
        self.bases: dict[tuple, str] = {}
        self.current: dict[int, str] = {}  # slot -> SSA value (storage width) in this thread
        self.order: list[int] = []  # slots written, in first-write order
        self.flags: list[str] = []  # SSA of "some guard held so far", per guarded step
        self.block = "loop"  # the basic block instructions are appended to
        self.checks = 0  # the blocks that continue after an abort test

    def base(self, key: tuple) -> str:
        """The pointer to the array of table entry `key`."""
        if key not in self.bases:
            index = len(self.run.operands)
            self.run.operands.append(key)
            name = f"%base{index}"
            self.entry.append(f"  %slotp{index} = getelementptr ptr, ptr %table, i64 {index}")
            self.entry.append(f"  {name} = load ptr, ptr %slotp{index}")
            self.bases[key] = name
        return self.bases[key]

    def bits(self, slot: int) -> int:
        dt = self.state.regs[slot].dtype
        return 1 if dt == np.bool_ else dt.itemsize * 8

    def load(self, slot: int) -> str:
        if slot not in self.current:
            e, bits = self.e, self.bits(slot)
            mem = 8 if bits == 1 else bits
            p = e(f"getelementptr i{mem}, ptr {self.base(('reg', slot))}, i64 %t")
            v = e(f"load i{mem}, ptr {p}")
            self.current[slot] = e(f"icmp ne i8 {v}, 0") if bits == 1 else v
        return self.current[slot]

    def read(self, op, t: str) -> str:
        e = self.e
        tbits = 1 if t == "pred" else width(t)
        signed = t in SIGNED_TYPES
        if isinstance(op, Reg):
            slot = self.state.slot(self.fn, op)
            return e.resize(self.load(slot), self.bits(slot), tbits, signed)
        if isinstance(op, Negated):
            slot = self.state.slot(self.fn, op.reg)
            return e(f"xor i1 {e.resize(self.load(slot), self.bits(slot), 1, False)}, true")
        if isinstance(op, Imm):
            value = imm_bits(op, t)
            if t == "pred":
                return "true" if value else "false"
            return str(value - (1 << tbits) if value >= 1 << (tbits - 1) else value)
        assert isinstance(op, SpecialReg)
        p = e(f"getelementptr i32, ptr {self.base(('special', op.name, op.component))}, i64 %t")
        return e.resize(e(f"load i32, ptr {p}"), 32, tbits, signed)

    def write(self, op, t: str, value: str, guard: str | None) -> int | None:
        if isinstance(op, Sink):
            return None
        slot = self.state.slot(self.fn, op)
        tbits = 1 if t == "pred" else width(t)
        sbits = self.bits(slot)
        v = self.e.resize(value, tbits, sbits, t in SIGNED_TYPES)
        if guard is not None:
            v = self.e(f"select i1 {guard}, i{sbits} {v}, i{sbits} {self.load(slot)}")
        self.current[slot] = v
        if slot not in self.order:
            self.order.append(slot)
        return slot

    def abort_unless(self, ok: str) -> None:
        """End the call here, returning the thread's position, unless `ok` (an i1) holds (`memory_steps`)."""
        self.checks += 1
        self.block = f"go{self.checks}"
        self.body.append(f"  br i1 {ok}, label %{self.block}, label %abort")
        self.body.append(f"{self.block}:")

    def memory(self, step: MemoryStep) -> None:
        step.number = len(self.run.memory)
        self.run.memory.append(step)
        slots = write_step(self, step)
        self.run.written.extend(s for s in slots if s not in self.run.written)

    def step(self, step: Step) -> None:
        if isinstance(step, MemoryStep):
            return self.memory(step)
        e = self.e
        ins = step.ins
        guard = None
        if ins.guard is not None:
            slot = self.state.slot(self.fn, ins.guard.reg)
            guard = self.load(slot)
            if ins.guard.negated:
                guard = e(f"xor i1 {guard}, true")
        values = [self.read(op, t) for op, t in zip(step.srcs, step.src_types)]
        results = values if step.semantics is None else step.semantics(e, values)
        slots = [self.write(d, t, v, guard) for d, t, v in zip(step.dsts, step.dst_types, results)]
        slots = [s for s in slots if s is not None]
        if guard is None:
            self.run.written.extend(s for s in slots if s not in self.run.written)
        else:
            index = len(self.flags)
            self.flags.append(guard)
            self.run.guarded_writes.append((index, slots))

    def function(self, steps: list[Step]) -> str:
        self.body.append("  %tp = getelementptr i64, ptr %idx, i64 %i")
        self.body.append("  %t = load i64, ptr %tp")
        for step in steps:
            self.step(step)
        for slot in self.order:
            bits = self.bits(slot)
            mem = 8 if bits == 1 else bits
            v = self.current[slot]
            if bits == 1:
                v = self.e(f"zext i1 {v} to i8")
            p = self.e(f"getelementptr i{mem}, ptr {self.base(('reg', slot))}, i64 %t")
            if self.checks:  # the old value first, for the handler to put back if a later thread aborts
                self.run.undo.append(slot)
                old = self.e(f"load i{mem}, ptr {p}")
                undo = self.e(f"getelementptr i{mem}, ptr {self.base(('undo', slot))}, i64 %i")
                self.body.append(f"  store i{mem} {old}, ptr {undo}")
            self.body.append(f"  store i{mem} {v}, ptr {p}")
        last = self.block
        phis = [f"  %any{j} = phi i1 [false, %entry], [%anynext{j}, %{last}]" for j in range(len(self.flags))]
        ors = [f"  %anynext{j} = or i1 %any{j}, {g}" for j, g in enumerate(self.flags)]
        outs = [f"  %anyout{j} = phi i1 [false, %entry], [%anynext{j}, %{last}]" for j in range(len(self.flags))]
        for j in range(len(self.flags)):
            outs += [
                f"  %anybyte{j} = zext i1 %anyout{j} to i8",
                f"  %anyp{j} = getelementptr i8, ptr %ran, i64 {j}",
                f"  store i8 %anybyte{j}, ptr %anyp{j}",
            ]
        return "\n".join(
            [
                f"define i64 @{self.run.name}(ptr noalias %idx, i64 %n, ptr noalias %table, ptr noalias %ran) {{",
                "entry:",
                *self.entry,
                "  %empty = icmp sle i64 %n, 0",
                "  br i1 %empty, label %exit, label %loop",
                "loop:",
                f"  %i = phi i64 [0, %entry], [%next, %{last}]",
                *phis,
                *self.body,
                *ors,
                "  %next = add i64 %i, 1",
                "  %more = icmp slt i64 %next, %n",
                "  br i1 %more, label %loop, label %exit",
                "exit:",
                *outs,
                "  ret i64 %n",
                *(["abort:", "  ret i64 %i"] if self.checks else []),
                "}",
            ]
        )


def write_module(program, state, runs: list[tuple[int, list[Step]]]) -> tuple[str, list[Run]]:
    """The IR module holding one function per run, and the runs' descriptions."""
    functions = []
    described = []
    for number, (start, steps) in enumerate(runs):
        run = Run(start, start + len(steps), f"run{number}")
        functions.append(_Writer(state, program.owner[start], run).function(steps))
        described.append(run)
    declarations = [
        "declare float @llvm.fma.f32(float, float, float)",
        "declare double @llvm.fma.f64(double, double, double)",
        FIND_ALLOCATION,
    ]
    return "\n\n".join(declarations + functions) + "\n", described
