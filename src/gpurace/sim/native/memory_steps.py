"""Plain loads and stores inside a compiled run: which ones, their address resolution as LLVM IR, and what the
handler does with each lane's result after the call.

A run's function runs every instruction of the run for one thread before the next, so memory must look to each
thread as it would between the interpreter's steps. Two rules keep it so:

- stores are deferred: the function records each lane's address and value, and after the call the handler
  gives them to the interpreter's own `Decoder.store` (event first, then memory), store by store in program
  order, so the detectors see memory before each store as they do under the interpreter;
- no load follows a store in a run (`runs.find_runs` ends the run there), so every load reads memory as it was
  before the run, as the interpreter's loads at the pcs before any of the run's stores do.

Loads' events go out after the call, before the stores', in program order, through the interpreter's
`Decoder.emit_access`: the same batches, sequence numbers and hooks (copies in flight, mbarriers, proxies).

Resolution is `memory.access.resolve` for the one space the instruction names (global, shared, local, or a
kernel parameter named by its symbol), for performed lanes only: aligned, in bounds, and for `.global` inside
one allocation and outside the const window. Any other lane (one the interpreter reports, or a const read
through `.global`) aborts the call: the function returns how many threads it finished, the handler puts their
registers back from the undo buffers the function filled, and the interpreter's step runs instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Addr, Imm, Instruction, Reg, Sink, Sym, type_size
from gpurace.sim.events import AccessKind
from gpurace.sim.forms import check_modifiers
from gpurace.sim.memory import Space
from gpurace.sim.memory.access import Access
from gpurace.sim.memory.floats import UINT_OF_SIZE
from gpurace.sim.memory.layout import (
    CANON_LOCAL_TAG, CANON_OFFSET_MASK, CANON_OWNER_SHIFT, CANON_SHARED_TAG, CONST_BASE, CONST_LIMIT, GLOBAL_BASE,
)  # fmt: skip
from gpurace.sim.state import check_immediate

DETECTED = (Space.GLOBAL, Space.SHARED)
COMPILED_SPACES = (Space.GLOBAL, Space.SHARED, Space.LOCAL, Space.PARAM)

#: Positions in the ("consts",) table entry, an int64 array the handler fills before each call.
CONSTS = ("allocations", "shared_size", "shared_stride", "block_base", "local_size", "local_stride", "thread_base")
_AT = {name: i for i, name in enumerate(CONSTS)}

FIND_ALLOCATION = """define private i64 @find_allocation(ptr %bases, ptr %ends, i64 %n, i64 %a, i64 %size) {
entry:
  br label %head
head:
  %lo = phi i64 [0, %entry], [%lo2, %step]
  %hi = phi i64 [%n, %entry], [%hi2, %step]
  %more = icmp ult i64 %lo, %hi
  br i1 %more, label %step, label %done
step:
  %span = sub i64 %hi, %lo
  %half = lshr i64 %span, 1
  %mid = add i64 %lo, %half
  %bp = getelementptr i64, ptr %bases, i64 %mid
  %b = load i64, ptr %bp
  %le = icmp ule i64 %b, %a
  %mid1 = add i64 %mid, 1
  %lo2 = select i1 %le, i64 %mid1, i64 %lo
  %hi2 = select i1 %le, i64 %hi, i64 %mid
  br label %head
done:
  %none = icmp eq i64 %lo, 0
  br i1 %none, label %miss, label %check
check:
  %i = sub i64 %lo, 1
  %ep = getelementptr i64, ptr %ends, i64 %i
  %e = load i64, ptr %ep
  %small = icmp ult i64 %e, %size
  %lim = sub i64 %e, %size
  %over = icmp ugt i64 %a, %lim
  %bad = or i1 %small, %over
  %r = select i1 %bad, i64 -1, i64 %i
  ret i64 %r
miss:
  ret i64 -1
}"""
"""The index of the global allocation holding [a, a+size), or -1: `AllocationTable.contains` for one address
(the last base <= a, by binary search over the sorted bases)."""


@dataclass
class MemoryStep:
    """One plain `ld`/`st` of a run, resolved at install time."""

    ins: Instruction
    pc: int
    store: bool
    space: Space
    ptx_type: str
    esize: int
    count: int
    base: Reg | None  # the address register; None for a kernel parameter named by its symbol
    offset: int  # the address's constant part (for a kernel parameter, its whole offset in the parameter buffer)
    data: list  # the registers a load writes, or the operands a store reads
    decoder: object  # the interpreter's `Decoder` of the instruction: events and the store itself
    number: int = -1  # its position among the run's memory steps

    @property
    def size(self) -> int:
        return self.esize * self.count

    @property
    def recorded(self) -> bool:
        """Whether the function hands lanes' results back: every store, and loads of race-checked spaces
        (the interpreter emits no event for local and parameter loads)."""
        return self.store or self.space in DETECTED


def memory_step_of(eng, fn: str, pc: int, ins: Instruction) -> MemoryStep | None:
    """`ins` as a compiled load or store, or None when the interpreter must run it (guarded, generic, with
    memory-model semantics or a scope, 128-bit, a call's `.param` ..., or malformed: the interpreter reports that
    when it runs). A `volatile` access is compiled: its events say it is strong, as the interpreter's do, and
    the scheduler's points of choice at it are kept (`fused`)."""
    from gpurace.sim.execute import Decoder

    if ins.opcode not in ("ld", "st") or ins.guard is not None or ins.semantics not in (None, "weak", "volatile") or ins.scope:
        return None
    store = ins.opcode == "st"
    d = Decoder(eng, pc, fn, ins)
    try:
        check_modifiers(ins)
        (d.op_st if store else d.op_ld)()  # decodes as the interpreter does, or raises what it would report
        space, t, count = d.state_space(), d.last_type(), d.vec_width()
        if space not in COMPILED_SPACES or t == "pred" or type_size(t) not in (1, 2, 4, 8):
            return None
        esize = type_size(t)
        addr, data_op = (ins.operands[0], ins.operands[1]) if store else (ins.operands[1], ins.operands[0])
        data = d.elements(data_op, count)
        if not isinstance(addr, Addr) or esize * count > 16 or not all(_data_ok(d, op, t, store) for op in data):
            return None
        if space is Space.PARAM:
            return _kernel_parameter(eng, d, fn, pc, ins, t, esize, count, addr, data)
        if not isinstance(addr.base, Reg) or eng.state.regs[eng.state.slot(fn, addr.base)].dtype.itemsize not in (4, 8):
            return None
    except UserError:
        return None
    return MemoryStep(ins, pc, store, space, t, esize, count, addr.base, addr.offset, data, d)


def _data_ok(d, op, t: str, store: bool) -> bool:
    if isinstance(op, Reg):
        d.state.slot(d.fn, op)
        return True
    if store and isinstance(op, Imm):
        check_immediate(op, t, d.ins)
        return True
    return not store and isinstance(op, Sink)


def _kernel_parameter(eng, d, fn, pc, ins, t, esize, count, addr, data) -> MemoryStep | None:
    """A load of a kernel parameter named by its symbol (`Decoder._uniform_ld`'s load), when it is in bounds
    and aligned (else the interpreter reports it)."""
    size = esize * count
    name = addr.base.name if isinstance(addr.base, Sym) else None
    program = eng.program
    if d.ins.opcode != "ld" or name is None or name in program.functions[fn].frame or name not in program.kernel_params:
        return None
    if d.param_slot(addr, size) is not None:  # a call's parameter
        return None
    offset = (program.kernel_params[name] + addr.offset) & 0xFFFFFFFFFFFFFFFF
    if offset % size or offset + size > eng.mem.param_size:
        return None
    return MemoryStep(ins, pc, False, Space.PARAM, t, esize, count, None, offset, data, d)


# ---------------------------------------------------------------- IR


def write_step(w, step: MemoryStep) -> list[int]:
    """The IR of `step` for one thread, through the run writer `w`; returns the register slots it writes."""
    e = w.e
    bits = 8 * step.esize
    if step.base is None:
        index = str(step.offset)
        store_ptr = w.base(("store", int(Space.PARAM)))
    else:
        index = _resolve(w, step)
        store_ptr = w.base(("store", int(step.space)))
    at = e(f"getelementptr i8, ptr {store_ptr}, i64 {index}")
    if step.store:
        values = w.base(("out", step.number, "values"))
        for j, op in enumerate(step.data):
            v = w.read(op, step.ptx_type)
            lane = e(f"add i64 {e(f'mul i64 %i, {step.count}')}, {j}") if step.count > 1 else "%i"
            w.body.append(f"  store i{bits} {v}, ptr {e(f'getelementptr i{bits}, ptr {values}, i64 {lane}')}")
        return []
    slots = []
    for j, op in enumerate(step.data):
        p = e(f"getelementptr i8, ptr {at}, i64 {j * step.esize}") if j else at
        v = e(f"load i{bits}, ptr {p}, align {step.esize}")
        if step.count == 1 and step.recorded:
            out = e(f"getelementptr i{bits}, ptr {w.base(('out', step.number, 'values'))}, i64 %i")
            w.body.append(f"  store i{bits} {v}, ptr {out}")
        slot = w.write(op, step.ptx_type, v, None)
        if slot is not None:
            slots.append(slot)
    return slots


def _resolve(w, step: MemoryStep) -> str:
    """IR computing the lane's store index, aborting unless the access is performed; records address,
    canonical address and index when the step hands its lanes back."""
    e = w.e
    slot = w.state.slot(w.fn, step.base)
    wide = w.state.regs[slot].dtype.itemsize == 8
    base = w.load(slot)
    a = e(f"add i64 {base if wide else e(f'zext i32 {base} to i64')}, {_literal(step.offset)}")
    if not wide:  # a 32-bit address wraps at 32 bits (`Decoder.address`)
        a = e(f"and i64 {a}, 4294967295")
    size = step.size
    if size > 1:
        w.abort_unless(e(f"icmp eq i64 {e(f'and i64 {a}, {size - 1}')}, 0"))

    def element(key: tuple, position) -> str:
        """The i64 at `position` of the table entry `key`."""
        return e(f"load i64, ptr {e(f'getelementptr i64, ptr {w.base(key)}, i64 {position}')}")

    def const(name: str) -> str:
        return element(("consts",), _AT[name])

    if step.space is Space.GLOBAL:
        below = e(f"icmp ult i64 {a}, {CONST_BASE}")
        above = e(f"icmp uge i64 {a}, {CONST_LIMIT}")
        w.abort_unless(e(f"or i1 {below}, {above}"))  # `ld.global` of a const address reads the const data
        found = e(
            f"call i64 @find_allocation(ptr {w.base(('gbases',))}, ptr {w.base(('gends',))}, "
            f"i64 {const('allocations')}, i64 {a}, i64 {size})"
        )
        w.abort_unless(e(f"icmp sge i64 {found}, 0"))
        shift = element(("gshifts",), found)
        canonical = e(f"sub i64 {a}, {shift}")
        index = e(f"sub i64 {canonical}, {GLOBAL_BASE}")
    else:
        shared = step.space is Space.SHARED
        limit = const("shared_size" if shared else "local_size")
        fits = e(f"icmp ule i64 {size}, {limit}")
        within = e(f"icmp ule i64 {a}, {e(f'sub i64 {limit}, {size}')}")
        w.abort_unless(e(f"and i1 {fits}, {within}"))
        if shared:
            owner = element(("blocks",), "%t")
        else:
            owner = "%t"
        offset = e(f"and i64 {a}, {CANON_OFFSET_MASK}")
        stride = const("shared_stride" if shared else "local_stride")
        index = e(f"add i64 {e(f'mul i64 {owner}, {stride}')}, {offset}")
        launch_owner = e(f"add i64 {owner}, {const('block_base' if shared else 'thread_base')}")
        tag = CANON_SHARED_TAG if shared else CANON_LOCAL_TAG
        high = e(f"shl i64 {launch_owner}, {CANON_OWNER_SHIFT}")
        canonical = e(f"or i64 {e(f'or i64 {high}, {offset}')}, {_literal(tag)}")
    if step.recorded:
        for name, value in (("address", a), ("canonical", canonical), ("index", index)):
            p = e(f"getelementptr i64, ptr {w.base(('out', step.number, name))}, i64 %i")
            w.body.append(f"  store i64 {value}, ptr {p}")
    return index


def _literal(value: int) -> int:
    """A 64-bit constant as LLVM prints integer literals (two's complement, signed)."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


# ---------------------------------------------------------------- the handler's side


class Scratch:
    """Arrays a handler reuses from call to call: undo buffers and the lanes' addresses and store indices, which
    no event keeps. A fresh array of a million lanes costs its page faults, as much as the compiled code
    that fills it."""

    def __init__(self):
        self.arrays: dict[tuple, np.ndarray] = {}

    def get(self, key: tuple, n: int, dtype) -> np.ndarray:
        held = self.arrays.get(key)
        if held is None or len(held) < n:
            held = self.arrays[key] = np.empty(n, dtype=dtype)
        return held[:n]


#: Per-step outputs that only the handler reads (the others, canonical addresses and values, go into events).
REUSED = frozenset({"address", "index"})


def call_buffers(eng, run, n: int, scratch: Scratch) -> dict[tuple, np.ndarray]:
    """The arrays behind the run's per-call table entries, for a group of `n` threads: memory as it is now,
    fresh arrays for what events keep, and `scratch` for the rest."""
    mem = eng.mem
    lim = mem.space_limits()
    table = lim.global_table
    consts = np.array(
        [len(table.bases), lim.shared_size, lim.shared_stride, lim.block_base, lim.local_size, lim.local_stride, lim.thread_base],
        dtype=np.int64,
    )
    out: dict[tuple, np.ndarray] = {("consts",): consts}
    for key in run.operands:
        kind = key[0]
        if kind == "store":
            out[key] = mem.backing(Space(key[1]))
        elif kind in ("gbases", "gends", "gshifts"):
            out[key] = np.ascontiguousarray({"gbases": table.bases, "gends": table.ends, "gshifts": table.shifts}[kind], dtype=np.uint64)
        elif kind == "undo":
            out[key] = scratch.get(key, n, eng.state.regs[key[1]].dtype)
        elif kind == "out":
            step = run.memory[key[1]]
            if key[2] == "values":
                out[key] = np.empty(n * step.count, dtype=UINT_OF_SIZE[step.esize])
            elif key[2] in REUSED:
                out[key] = scratch.get(key, n, np.int64 if key[2] == "index" else np.uint64)
            else:
                out[key] = np.empty(n, dtype=np.uint64)
    return out


def hand_back(eng, run, idx: np.ndarray, buffers: dict[tuple, np.ndarray]) -> None:
    """The recorded loads' events, then each store's event and effect, in program order (module docstring)."""
    n = len(idx)
    blocks = eng.geo.block_of[eng.state.rows(idx)]
    ok = np.ones(n, dtype=np.bool_)
    no_error = np.zeros(n, dtype=np.int8)
    for step in run.memory:
        if not step.recorded:
            continue
        address = buffers[("out", step.number, "address")]
        acc = Access(
            np.full(n, int(step.space), dtype=np.int8),
            address,
            buffers[("out", step.number, "index")],
            buffers[("out", step.number, "canonical")],
            no_error,
            address,
            idx,
            blocks,
            step.size,
            step.store,
            step.space,
        )
        values = buffers[("out", step.number, "values")] if step.store or step.count == 1 else None
        if step.store:
            step.decoder.store(idx, acc, ok, step.size, step.esize, values.reshape(n, step.count) if step.count > 1 else values)
        else:
            step.decoder.emit_access(AccessKind.READ, idx, acc, ok, step.size, values=values)
