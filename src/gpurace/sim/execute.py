"""Instruction handlers: each static instruction decoded once into a closure.

A handler takes the sorted array of global thread ids executing the
instruction in this step and returns the pc they all continue at, or None when
it has set pcs and statuses itself (branches, waits, calls, exits). Decoding
resolves registers to slots, immediates to raw bits and labels to pcs, so the
hot path does only NumPy work. An instruction the simulator does not support
decodes to a handler that stops the run with a message naming the instruction
and its source line, so kernels that never execute it still run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import STATE_SPACES, Addr, Imm, Instruction, PredPair, Reg, Sym, Vec, type_size
from gpurace.sim import (
    annotations, assert_distance, bulk_copies, bulk_reductions, clusters, mbarrier_ops, native, tensor_copies, tensor_core_ops,
    tensormap_ops, texture_ops, wgmma_ops,
)  # fmt: skip
from gpurace.sim.alu import compile_alu
from gpurace.sim.cooperative import trap_hint
from gpurace.sim.device_runtime import device_call
from gpurace.sim.engine import WAIT_COLLECTIVE, WAIT_WARPSYNC, WARP
from gpurace.sim.events import AccessBatch, AccessKind, FenceEvent, SyncEvent
from gpurace.sim.forms import check_modifiers
from gpurace.sim.memory import Space, from_generic, space_of, to_generic
from gpurace.sim.memory.floats import UINT_OF_SIZE
from gpurace.sim.graph_conditionals import SET_CONDITIONAL, set_conditional_handler
from gpurace.sim.printf import printf_handler
from gpurace.sim.program import VERIFIER_ONLY_PREFIX, call_parts, is_builtin_function
from gpurace.sim.state import SIGNED_TYPES, describe_operand, operand_reader, operand_writer, raw_dtype
from gpurace.sim.textures import SurfaceObject, TextureObject

Handler = Callable[[np.ndarray], "int | None"]

ATOMIC_OPS = frozenset({"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"})
_BITS = frozenset({"b32", "b64", "u32", "u64", "s32", "s64"})
ATOMIC_TYPES = {
    "add": frozenset({"u32", "s32", "u64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2"}),
    "min": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16", "f32", "f64"}),
    "max": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16", "f32", "f64"}),
    "inc": frozenset({"u32"}),
    "dec": frozenset({"u32"}),
    "and": _BITS,
    "or": _BITS,
    "xor": _BITS,
    "exch": _BITS | {"b16", "f32", "f64"},
    "cas": _BITS | {"b16", "u16", "s16"},
}
"""The types of each atomic operation that PTX defines and `memory.atomics` implements (no 128-bit ones)."""
FENCE_SCOPES = {"cta": "cta", "gl": "gpu", "sys": "sys", "gpu": "gpu", "cluster": "cluster"}
NO_OPS = frozenset({"prefetch", "prefetchu", "discard", "applypriority", "pmevent", "fence.proxy"})
DETECTED_SPACES = (int(Space.GLOBAL), int(Space.SHARED))


def unsupported(ins: Instruction, why: str = "") -> Handler:
    message = f"{ins.where()}: the simulator does not support `{ins.text}`" + (f" ({why})" if why else "")

    def fail(idx):
        raise UserError(message)

    return fail


def decode_all(eng) -> list[Handler]:
    """One handler per pc."""
    handlers = []
    for pc, ins in enumerate(eng.program.instructions):
        fn = eng.program.owner[pc]
        try:
            h = Decoder(eng, pc, fn, ins).decode()
            if ins.guard is not None:
                h = _guarded(eng, pc, fn, ins, h)
        except UserError as e:
            message = str(e)
            if ins.where() not in message:
                message = f"{ins.where()}: {message}"
            h = _raiser(message)
        handlers.append(h)
    wgmma_ops.guard_registers(eng, handlers)  # accesses to accumulators of wgmma products in flight
    assert_distance.install(eng, handlers)  # how far assertions came from failing, when the search asks
    native.install(eng, handlers)  # compiled straight-line runs (registers, loads, stores), when the executor is native
    return handlers


def _raiser(message: str) -> Handler:
    def fail(idx):
        raise UserError(message)

    return fail


def _guarded(eng, pc: int, fn: str, ins: Instruction, body: Handler) -> Handler:
    """Run `body` only for threads whose guard predicate holds; the others fall through."""
    slot = eng.state.slot(fn, ins.guard.reg)
    regs = eng.state.regs
    if regs[slot].dtype != np.bool_:
        raise UserError(f"the guard of `{ins.text}` is {ins.guard.reg.name}, which is not a .pred register")
    negated = ins.guard.negated
    pcs = eng.pc
    nxt = pc + 1
    state = eng.state

    def guarded(idx):
        m = regs[slot][state.rows(idx)]
        if negated:
            m = ~m
        if m.all():
            return body(idx)
        if not m.any():
            return nxt
        act = idx[m]
        pcs[idx[~m]] = nxt
        r = body(act)
        if r is not None:
            pcs[act] = r
        return None

    return guarded


class Decoder:
    """Turns one instruction into a handler."""

    def __init__(self, eng, pc: int, fn: str, ins: Instruction):
        self.eng = eng
        self.pc = pc
        self.fn = fn
        self.ins = ins
        self.state = eng.state
        self.program = eng.program

    # ------------------------------------------------------------------ helpers

    def reader(self, op, ptx_type: str):
        if isinstance(op, Sym):
            sym = self.symbol_value(op.name)
            dt = raw_dtype(ptx_type)
            return lambda idx: sym(idx).astype(dt)
        return operand_reader(self.state, self.fn, self.ins, op, ptx_type)

    def writer(self, op, ptx_type: str):
        return operand_writer(self.state, self.fn, self.ins, op, ptx_type)

    def symbol_value(self, name: str):
        """idx -> the value of a symbol used as an operand: its address in its own state space."""
        info = self.program.functions[self.fn]
        state = self.state
        if name in info.frame:
            off = np.int64(info.frame[name])
            return lambda idx: (state.frame_base[idx] + off).astype(np.uint64)
        if name in self.program.kernel_params:
            value = np.uint64(self.program.kernel_params[name])
            return lambda idx: np.full(len(idx), value, dtype=np.uint64)
        if name in self.program.function_addresses:  # a function pointer
            value = np.uint64(self.program.function_addresses[name])
            return lambda idx: np.full(len(idx), value, dtype=np.uint64)
        if name == "WARP_SZ":  # PTX's built-in constant
            return lambda idx: np.full(len(idx), 32, dtype=np.uint64)
        try:
            _space, addr = self.eng.mem.symbol(name)
        except (KeyError, UserError):
            raise UserError(f"unknown symbol {name} in `{self.ins.text}`") from None
        value = np.uint64(addr)
        return lambda idx: np.full(len(idx), value, dtype=np.uint64)

    def vec_width(self) -> int:
        """1, or N for a `.vN` access."""
        widths = [int(m[1]) for m in self.ins.modifiers if m in ("v2", "v4", "v8")]
        if len(widths) > 1:
            raise UserError(f"`{self.ins.text}` has several vector modifiers")
        return widths[0] if widths else 1

    def last_type(self) -> str:
        """The instruction's (last) type modifier, one whose values the simulator can hold."""
        types = self.ins.types
        if not types:
            raise UserError(f"`{self.ins.text}` has no type")
        raw_dtype(types[-1])
        return types[-1]

    # ------------------------------------------------------------------ operand shapes
    # PTX fixes the operands of every instruction form; checking them here turns a malformed
    # instruction into a message at decode time instead of an IndexError in the middle of a run.

    def operands(self, *counts: int) -> tuple:
        """The operands, after checking that there are as many as one of `counts`."""
        ops = self.ins.operands
        if len(ops) not in counts:
            expected = " or ".join(str(c) for c in counts)
            raise UserError(f"`{self.ins.text}` takes {expected} operand(s), found {len(ops)}")
        return ops

    def one_of(self, names: tuple[str, ...], what: str) -> str:
        """The single modifier out of `names` the instruction has; none or several is an error."""
        found = [m for m in self.ins.modifiers if m in names]
        if len(found) != 1:
            choices = ", ".join("." + n for n in names)
            raise UserError(f"`{self.ins.text}` needs exactly one {what} ({choices})")
        return found[0]

    def elements(self, op, count: int) -> list:
        """The data operands of a memory access: `op` itself for a scalar, the `count` elements of `{...}` for `.vN`
        (ptxas also takes a scalar in braces, `{ %r1 }`, which Triton's generated loads and stores use)."""
        if count == 1 and not isinstance(op, Vec):
            return [op]
        if isinstance(op, Vec) and len(op.elems) == count:
            return list(op.elems)
        given = f"a vector of {len(op.elems)}" if isinstance(op, Vec) else "a scalar"
        wanted = f"a vector of {count} ({{...}} for .v{count})" if count > 1 else "a scalar (no .vN modifier)"
        raise UserError(f"`{self.ins.text}` has {given} where it needs {wanted}")

    def memory_operand(self, op) -> Addr:
        if not isinstance(op, Addr):
            raise UserError(f"`{self.ins.text}` needs an address [...] where it has {describe_operand(op)}")
        return op

    def bounded(self, op, what: str, lo: int, hi: int, step: int = 1):
        """A reader of an integer operand that PTX restricts to lo..hi in steps of `step` (a barrier id, a count).

        An immediate is checked now; a register when it is read, since a
        value out of range is undefined on hardware and the simulator would
        read it as something else.
        """
        allowed = f"{lo}..{hi}" + (f" in multiples of {step}" if step > 1 else "")
        if isinstance(op, Imm) and (op.kind != "int" or not (lo <= op.value <= hi and op.value % step == 0)):
            raise UserError(f"{what} {op.value} of `{self.ins.text}` is out of range: PTX allows {allowed}")
        read = self.reader(op, "u32")
        where = self.ins.where()
        text = self.ins.text

        def checked(idx):
            values = read(idx).astype(np.int64)
            bad = (values < lo) | (values > hi) | (values % step != 0)
            if bad.any():
                raise UserError(f"{where}: {what} of `{text}` is {int(values[bad][0])} at run time: PTX allows {allowed}")
            return values

        return checked

    # ------------------------------------------------------------------ dispatch

    def decode(self) -> Handler:
        op = self.ins.opcode
        check_modifiers(self.ins)
        method = getattr(self, f"op_{op}", None)
        if method is not None:
            return method()
        if op in NO_OPS:
            return self.op_nop()
        alu = compile_alu(self.ins)
        if alu is not None:
            return self.alu(alu)
        return unsupported(self.ins)

    def op_nop(self) -> Handler:
        nxt = self.pc + 1
        return lambda idx: nxt

    def op_setmaxnreg(self) -> Handler:
        """`setmaxnreg.{inc,dec}.sync.aligned.u32 N`: a warpgroup's register budget, which decides nothing the
        simulator shows (its registers are unbounded), so only N's range is checked: 24..256 in eights."""
        if not {"sync", "aligned", "u32"} <= set(self.ins.modifiers):
            return unsupported(self.ins, "setmaxnreg is .sync.aligned.u32")
        self.one_of(("inc", "dec"), "setmaxnreg action")
        (count,) = self.operands(1)
        if not isinstance(count, Imm):
            raise UserError(f"`{self.ins.text}`: the register count of setmaxnreg is an immediate")
        self.bounded(count, "the register count", 24, 256, 8)
        return self.op_nop()

    # ------------------------------------------------------------------ ALU

    def alu(self, op) -> Handler:
        ops = self.ins.operands
        if not ops:  # compile_alu checked the count of any operands there are
            raise UserError(f"`{self.ins.text}` has no operands")
        first = ops[0]
        if isinstance(first, PredPair):
            dsts = [first.first, first.second]
            srcs = ops[1:]
        else:
            dsts = list(ops[: len(op.dst_types)])
            srcs = ops[len(op.dst_types) :]
        if len(srcs) != len(op.src_types):
            raise UserError(f"`{self.ins.text}` has {len(srcs)} source operands, expected {len(op.src_types)}")
        readers = [self.reader(s, t) for s, t in zip(srcs, op.src_types)]
        writers = [self.writer(d, t) for d, t in zip(dsts, op.dst_types)]
        fn = op.fn
        nxt = self.pc + 1
        carry = self.state.carry
        carry_in, carry_out = op.carry_in, op.carry_out
        if len(writers) == 1 and not carry_in and not carry_out:
            w0 = writers[0]
            if len(readers) == 2:
                r0, r1 = readers

                def alu2(idx):
                    w0(idx, fn(r0(idx), r1(idx)))
                    return nxt

                return alu2

            def alu1(idx):
                w0(idx, fn(*[r(idx) for r in readers]))
                return nxt

            return alu1

        def alu_general(idx):
            args = [r(idx) for r in readers]
            out = fn(*args, carry=carry[idx]) if carry_in else fn(*args)
            if carry_out:
                out, cout = out
                carry[idx] = cout
            if not isinstance(out, tuple):
                out = (out,)
            for w, v in zip(writers, out):
                w(idx, v)
            return nxt

        return alu_general

    # ------------------------------------------------------------------ moves

    def part_type(self, t: str, vec: Vec) -> str:
        """The type of each element of `{...}` in a mov that packs or unpacks a `.t` value (`.b64` in two: `.b32`)."""
        parts = len(vec.elems)
        if t == "pred" or parts not in (2, 4) or type_size(t) % parts:
            raise UserError(f"`{self.ins.text}` cannot split a .{t} value into {parts} parts")
        return {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[type_size(t) // parts]

    def op_mov(self) -> Handler:
        dst, src = self.operands(2)
        t = self.last_type()
        nxt = self.pc + 1
        if isinstance(dst, Vec):  # unpack: mov.b64 {%r1, %r2}, %rd1
            part_type = self.part_type(t, dst)
            part_size = type_size(part_type)
            read = self.reader(src, t)
            writers = [self.writer(e, part_type) for e in dst.elems]
            shift = 8 * part_size
            mask = (1 << shift) - 1
            dt = raw_dtype(part_type)

            def unpack(idx):
                v = read(idx).astype(np.uint64)
                for i, w in enumerate(writers):
                    w(idx, ((v >> np.uint64(i * shift)) & np.uint64(mask)).astype(dt))
                return nxt

            return unpack
        if isinstance(src, Vec):  # pack: mov.b64 %rd1, {%r1, %r2}
            part_type = self.part_type(t, src)
            part_size = type_size(part_type)
            readers = [self.reader(e, part_type) for e in src.elems]
            write = self.writer(dst, t)
            shift = 8 * part_size
            dt = raw_dtype(t)

            def pack(idx):
                v = np.zeros(len(idx), dtype=np.uint64)
                for i, r in enumerate(readers):
                    v |= r(idx).astype(np.uint64) << np.uint64(i * shift)
                write(idx, v.astype(dt))
                return nxt

            return pack
        read = self.reader(src, t)
        write = self.writer(dst, t)

        def mov(idx):
            write(idx, read(idx))
            return nxt

        return mov

    def state_space(self) -> Space:
        """The instruction's state space (generic without one); naming several is an error."""
        spaces = [m for m in self.ins.modifiers if m in STATE_SPACES or m in ("shared::cta", "shared::cluster")]
        if len(spaces) > 1:
            raise UserError(f"`{self.ins.text}` names several state spaces ({', '.join('.' + m for m in spaces)})")
        if spaces == ["shared::cluster"]:
            return Space.SHARED_CLUSTER  # shared memory of any block of the cluster (`sim.clusters`)
        return Space.from_ptx(self.ins.space)

    def op_cvta(self) -> Handler:
        ins = self.ins
        dst, src = self.operands(2)
        to = ins.has("to")
        if ins.space is None:
            raise UserError(f"`{ins.text}` needs the state space to convert from or to")
        space = self.state_space()
        t = self.last_type()
        read = self.reader(src, t)
        write = self.writer(dst, t)
        nxt = self.pc + 1
        dt = raw_dtype(t)
        convert = from_generic if to else to_generic

        def cvta(idx):
            write(idx, convert(space, read(idx).astype(np.uint64)).astype(dt))
            return nxt

        return cvta

    def op_isspacep(self) -> Handler:
        ins = self.ins
        dst, src = self.operands(2)
        if ins.space is None:
            raise UserError(f"`{ins.text}` needs the state space to test for")
        space = self.state_space()
        read = self.reader(src, "u64")
        write = self.writer(dst, "pred")
        nxt = self.pc + 1

        def isspacep(idx):
            write(idx, space_of(read(idx)) == space)
            return nxt

        return isspacep

    op_createpolicy = op_nop

    # ------------------------------------------------------------------ memory

    def address(self, op) -> Callable[[np.ndarray], np.ndarray]:
        """idx -> (space-relative or generic) uint64 addresses of a memory operand.

        A 32-bit register holds a 32-bit address (a shared-window or `.shared` address), and the sum of it
        and the offset wraps at 32 bits as the hardware's does: `[%r4+68]` with %r4 = -64 is address 4.
        """
        op = self.memory_operand(op)
        off = np.uint64(op.offset & 0xFFFFFFFFFFFFFFFF)
        if isinstance(op.base, Reg):
            slot = self.state.slot(self.fn, op.base)
            regs = self.state.regs
            state = self.state
            wrap = self.program.reg_types[slot].itemsize <= 4
            mask = np.uint64(0xFFFFFFFF)

            def from_register(idx):
                base = regs[slot][state.rows(idx)]  # a slice for a consecutive group, not a gather
                addrs = base.astype(np.uint64)
                addrs += off
                if wrap:
                    addrs &= mask
                return addrs

            return from_register
        if isinstance(op.base, Sym):
            sym = self.symbol_value(op.base.name)
            return lambda idx: sym(idx) + off
        return lambda idx: np.full(len(idx), off, dtype=np.uint64)

    def blocks_of(self, idx: np.ndarray) -> np.ndarray:
        """The block of each thread of `idx` (a slice for the engine's group of consecutive threads)."""
        return self.eng.geo.block_of[self.state.rows(idx)]

    def param_slot(self, op, nbytes: int) -> tuple[int, int] | None:
        """(per-thread param slot, byte offset) when `op` names a call-sequence or function `.param`.

        The `nbytes` accessed there must lie inside the parameter, as PTX requires: the slot holds no more.
        """
        if not (isinstance(op, Addr) and isinstance(op.base, Sym)):
            return None
        slot = self.program.functions[self.fn].params.get(op.base.name)
        if slot is None:
            return None
        size = self.program.param_sizes[slot]
        if op.offset < 0 or op.offset + nbytes > size:
            raise UserError(
                f"`{self.ins.text}` accesses bytes {op.offset}..{op.offset + nbytes - 1} of .param {op.base.name}, "
                f"which has {size}"
            )
        return slot, op.offset

    def strength(self) -> tuple[bool, str | None, str | None]:
        """(strong, scope, semantics) of a memory instruction under the PTX memory model."""
        ins = self.ins
        sem = ins.semantics
        scope = ins.scope
        if ins.opcode in ("atom", "red"):
            return True, scope or "gpu", sem if sem not in (None, "weak") else "relaxed"
        if sem == "volatile":
            return True, "sys", "volatile"
        if sem in ("relaxed", "acquire", "release"):
            return True, scope or "sys", sem
        return False, None, None

    def check_access(self, acc, idx, op_name: str, size: int) -> np.ndarray:
        """Report out-of-bounds / misaligned / read-only lanes; returns the ok mask."""
        ok = acc.ok
        if not ok.all():
            self.eng.report_access_errors(self.pc, acc, idx, op_name, size)
        return ok

    def emit_access(self, kind: AccessKind, idx, acc, ok, size, values=None, stored=None, atomic_op=None, compare=None) -> None:
        spaces = acc.space
        if acc.uniform_space is not None and acc.all_ok:  # one space for every lane: all kept or none
            if int(acc.uniform_space) not in DETECTED_SPACES:
                return
            keep, all_kept = ok, True
        else:
            keep = ok & ((spaces == DETECTED_SPACES[0]) | (spaces == DETECTED_SPACES[1]))
            if not keep.any():
                return
            all_kept = keep.all()
        strong, scope, sem = self._strength
        pick = (lambda a: a) if all_kept else (lambda a: None if a is None else a[keep])
        if self.eng.async_copies.pending:  # races with copies in flight (`sim.async_copies`)
            self.eng.async_copies.check(self.pc, kind, pick(idx), pick(acc.canonical), size)
        if self.eng.mbarriers.live:  # ordinary accesses to mbarrier objects (`sim.mbarriers`)
            self.eng.mbarriers.check_access(self.pc, pick(idx), pick(acc.canonical), size)
        if self.eng.proxy_fences.active and kind != AccessKind.READ:  # generic writes a bulk copy may read
            shared = keep & (spaces == DETECTED_SPACES[1])
            if shared.any():
                self.eng.proxy_fences.wrote(self.pc, idx[shared], acc.canonical[shared], size)
        if self.eng.tensormap_proxy.active and kind != AccessKind.READ:  # generic writes a TMA's map may hold
            self.eng.tensormap_proxy.wrote(self.pc, pick(idx), pick(acc.canonical), size)
        self.eng.emit(
            AccessBatch(
                self.eng.next_seq(),
                self.pc,
                kind,
                pick(idx),
                pick(acc.canonical),
                size,
                pick(spaces),
                strong,
                scope,
                sem,
                atomic_op,
                pick(values),
                pick(stored),
                pick(compare),
            )
        )

    def op_ld(self) -> Handler:
        t = self.last_type()
        count = self.vec_width()
        esize = type_size(t)
        dst, src = self.operands(2)
        writers = [self.writer(d, t) for d in self.elements(dst, count)]
        nxt = self.pc + 1
        space = self.state_space()
        pslot = self.param_slot(src, esize * count) if space == Space.PARAM else None
        if pslot is not None:
            return self._ld_param(pslot, writers, t, esize)
        addr = self.address(src)
        self._strength = self.strength()
        eng = self.eng
        mem = eng.mem
        size = esize * count
        uniform = self._uniform_ld(space, src, addr, writers, esize, count)

        def ld(idx):
            if uniform is not None and uniform(idx):
                return nxt
            acc = mem.resolve(space, addr(idx), idx, self.blocks_of(idx), size, owned=True)
            ok = self.check_access(acc, idx, "read", size)
            vals = mem.load(acc, esize, count)
            if eng.watching:
                eng.parking.read(idx, acc, size, vals)
            if count == 1:
                writers[0](idx, vals)
            else:
                for i, w in enumerate(writers):
                    w(idx, vals[:, i])
            self.emit_access(AccessKind.READ, idx, acc, ok, size, values=vals if count == 1 else None)
            return nxt

        return ld

    op_ldu = op_ld

    def _uniform_ld(self, space: Space, src, addr, writers, esize: int, count: int):
        """For a load every thread makes at one read-only address (a kernel parameter or a `.const` variable named
        by its symbol): idx -> whether it loaded the value once and gave it to every thread of `idx`, or None
        when the load is not of that kind.

        Such a load emits no event (neither space is checked for races) and its value is the same for all, so one
        lane's access stands for the batch. When that lane's access fails, or threads are being watched for
        parking, it answers False and the general load runs, reporting as before."""
        if space not in (Space.PARAM, Space.CONST) or not isinstance(src.base, Sym) or esize > 8:
            return None
        if src.base.name in self.program.functions[self.fn].frame:  # a per-thread local address
            return None
        eng = self.eng
        mem = eng.mem
        block_of = eng.geo.block_of
        size = esize * count

        def uniform(idx):
            if eng.watching or not len(idx):
                return False
            one = idx[:1]
            acc = mem.resolve(space, addr(one), one, block_of[one], size)
            if not acc.all_ok:
                return False
            vals = mem.load(acc, esize, count)
            for i, w in enumerate(writers):
                w(idx, np.broadcast_to(vals[0] if count == 1 else vals[0, i], (len(idx),)))
            return True

        return uniform

    def _ld_param(self, pslot, writers, t, esize) -> Handler:
        slot, off = pslot
        state = self.state
        dt = raw_dtype(t) if t != "pred" else np.dtype(np.uint8)
        nxt = self.pc + 1
        n = len(writers)

        def ld_param(idx):
            buf = state.param_buffer(slot)
            raw = np.ascontiguousarray(buf[idx, off : off + esize * n]).view(dt)
            for i, w in enumerate(writers):
                w(idx, raw[:, i])
            return nxt

        return ld_param

    def op_st(self) -> Handler:
        t = self.last_type()
        count = self.vec_width()
        esize = type_size(t)
        dst, src = self.operands(2)
        readers = [self.reader(s, t) for s in self.elements(src, count)]
        nxt = self.pc + 1
        space = self.state_space()
        pslot = self.param_slot(dst, esize * count) if space == Space.PARAM else None
        if pslot is not None:
            return self._st_param(pslot, readers, t, esize)
        addr = self.address(dst)
        self._strength = self.strength()
        eng = self.eng
        mem = eng.mem
        size = esize * count

        def st(idx):
            acc = mem.resolve(space, addr(idx), idx, self.blocks_of(idx), size, write=True, owned=True)
            ok = self.check_access(acc, idx, "write", size)
            if count == 1:
                vals = readers[0](idx)
            else:
                vals = np.stack([r(idx) for r in readers], axis=1)
            self.store(idx, acc, ok, size, esize, vals)
            return nxt

        return st

    def store(self, idx, acc, ok, size: int, esize: int, vals) -> None:
        """A resolved and checked store of `vals` (one value per lane, or `[lanes, count]` elements of a vector
        store) takes effect. The detectors see it before: memory still holds what the last earlier write left,
        which tells a same-value write-write race (`Memory.bytes_at`)."""
        eng = self.eng
        if vals.ndim == 1:
            self.emit_access(AccessKind.WRITE, idx, acc, ok, size, stored=vals)
        elif size <= 8 or esize > 8:
            self.emit_access(AccessKind.WRITE, idx, acc, ok, size, stored=packed_lanes(vals, esize))
        else:
            self._emit_wide_store(idx, acc, ok, vals, esize)
        eng.mem.store(acc, esize, vals)
        eng.progress = True
        if eng.watching:
            eng.parking.wrote(idx, acc, size)

    def _emit_wide_store(self, idx, acc, ok, vals, esize) -> None:
        """A vector store of more than 8 bytes as one write event per 8 bytes, each with the bytes it stores.
        PTX orders a vector access as separate element accesses, so the split loses nothing, and it lets a
        16-byte store of replicated values (Triton's `st.shared.v4` layout conversions) be told a same-value
        race per half, as stores up to 8 bytes are (`packed_lanes`)."""
        per = 8 // esize
        for h in range(vals.shape[1] // per):
            half = replace(acc, canonical=acc.canonical + 8 * h, size=8)
            self.emit_access(AccessKind.WRITE, idx, half, ok, 8, stored=packed_lanes(vals[:, h * per : (h + 1) * per], esize))

    def _st_param(self, pslot, readers, t, esize) -> Handler:
        slot, off = pslot
        state = self.state
        dt = raw_dtype(t) if t != "pred" else np.dtype(np.uint8)
        nxt = self.pc + 1

        def st_param(idx):
            buf = state.param_buffer(slot)
            vals = np.stack([r(idx).astype(dt) for r in readers], axis=1)
            buf[idx, off : off + esize * len(readers)] = vals.view(np.uint8).reshape(len(idx), -1)
            return nxt

        return st_param

    def op_atom(self) -> Handler:
        ins = self.ins
        aop = self.one_of(tuple(sorted(ATOMIC_OPS)), "atomic operation")
        t = self.last_type()
        if t not in ATOMIC_TYPES[aop]:
            raise UserError(f"the simulator does not support atomic {aop} on .{t} (`{ins.text}`)")
        esize = type_size(t)
        has_dst = ins.opcode == "atom"
        if not has_dst and aop in ("exch", "cas"):
            raise UserError(f"`{ins.text}`: red has no .{aop}, which returns a value (use atom)")
        nvals = 2 if aop == "cas" else 1
        operands = self.operands(int(has_dst) + 1 + nvals)
        dst = operands[0] if has_dst else None
        addr_op, vals = operands[int(has_dst)], operands[int(has_dst) + 1 :]
        if self.vec_width() > 1:
            raise UserError("vector atomics are not supported")
        readers = [self.reader(v, t) for v in vals]
        write = self.writer(dst, t) if dst is not None else None
        self._strength = self.strength()
        space = self.state_space()  # global, shared or generic: `forms` refuses the others
        addr = self.address(addr_op)
        eng = self.eng
        mem = eng.mem
        block_of = eng.geo.block_of
        nxt = self.pc + 1

        def atom(idx):
            acc = mem.resolve(space, addr(idx), idx, block_of[idx], esize, write=True)
            ok = self.check_access(acc, idx, f"atomic {aop}", esize)
            a = readers[0](idx)
            b = readers[1](idx) if len(readers) > 1 else None
            old = mem.atomic(acc, aop, t, a, b)
            if write is not None:
                write(idx, old)
            if aop != "cas" or bool(np.any(old[ok] == a[ok])):
                eng.progress = True
            if eng.watching:
                eng.parking.read(idx, acc, esize, old)
                eng.parking.wrote(idx, acc, esize, old == a if aop == "cas" else None)
            cas = aop == "cas"
            self.emit_access(
                AccessKind.ATOMIC, idx, acc, ok, esize, values=old, stored=b if cas else a, atomic_op=aop, compare=a if cas else None
            )
            return nxt

        return atom

    op_red = op_atom

    def op_cp(self) -> Handler:
        """`cp.async` (sm_80+): an asynchronous copy from global to shared memory that completes at the wait for
        its group (`sim.async_copies`); `cp.async.commit_group`, `cp.async.wait_group N`, `cp.async.wait_all`."""
        ins = self.ins
        if "async" not in ins.modifiers:
            return unsupported(ins)
        if "reduce" in ins.modifiers:
            return tensor_copies.tensor(self) if "tensor" in ins.modifiers else bulk_reductions.bulk_reduce(self)
        if "bulk" in ins.modifiers:
            if "tensor" in ins.modifiers and "prefetch" not in ins.modifiers:
                return tensor_copies.tensor(self)
            return bulk_copies.bulk(self)
        if "mbarrier" in ins.modifiers:
            return mbarrier_ops.copy_arrive(self)
        copies = self.eng.async_copies
        nxt = self.pc + 1
        if "commit_group" in ins.modifiers or "wait_all" in ins.modifiers:
            self.operands(0)
            step = copies.commit if "commit_group" in ins.modifiers else copies.wait_all

            def group_step(idx):
                step(idx)
                return nxt

            return group_step
        if "wait_group" in ins.modifiers:
            (newest,) = self.operands(1)
            if not (isinstance(newest, Imm) and newest.kind == "int" and newest.value >= 0):
                raise UserError(f"the group count of `{ins.text}` must be a non-negative integer constant")
            n = int(newest.value)

            def wait_group(idx):
                copies.wait(idx, n)
                return nxt

            return wait_group
        ops = self.operands(3, 4, 5)
        if "L2::cache_hint" in ins.modifiers:
            ops = ops[:-1]  # the cache policy, a hint
        if len(ops) not in (3, 4):
            raise UserError(f"`{ins.text}` takes [dst], [src], a size and an optional source size or ignore-src predicate")
        dst, src, cp_size = ops[:3]
        if not (isinstance(cp_size, Imm) and cp_size.kind == "int" and cp_size.value in (4, 8, 16)):
            raise UserError(f"the copy size of `{ins.text}` must be the immediate 4, 8 or 16")
        size = int(cp_size.value)
        if "cg" in ins.modifiers and size != 16:
            raise UserError(f"`{ins.text}`: cp.async.cg copies 16 bytes")
        src_size = self.copied_bytes(ops[3], size) if len(ops) == 4 else None
        daddr, saddr = self.address(dst), self.address(src)
        eng = self.eng
        mem = eng.mem
        block_of = eng.geo.block_of
        pc = self.pc
        where = ins.where()
        self._strength = (False, None, None)

        def cp_async(idx):
            copied = np.full(len(idx), size, dtype=np.int64) if src_size is None else src_size(idx).astype(np.int64)
            if (copied > size).any():
                raise UserError(
                    f"{where}: the source size of `{ins.text}` is {int(copied.max())} at run time, "
                    f"more than the {size} bytes it copies"
                )
            # a lane whose source size is 0 (or whose ignore-src predicate holds) copies zeros: it reads no source
            reading = copied > 0
            ridx = idx[reading]
            data = np.zeros((len(idx), size), dtype=np.uint8)
            src_canon = np.zeros(len(idx), dtype=np.uint64)
            src_bytes = np.zeros(len(idx), dtype=np.int64)
            if len(ridx):
                sacc = mem.resolve(Space.GLOBAL, saddr(ridx), ridx, block_of[ridx], size)
                sok = self.check_access(sacc, ridx, "read", size)
                data[reading] = mem.load(sacc, 1, size)
                src_canon[reading] = sacc.canonical
                src_bytes[reading] = np.where(sok, size, 0)
                self.emit_access(AccessKind.READ, ridx, sacc, sok, size)
            data[np.arange(size)[None, :] >= copied[:, None]] = 0
            dacc = mem.resolve(Space.SHARED, daddr(idx), idx, block_of[idx], size, write=True)
            go = np.flatnonzero(self.check_access(dacc, idx, "write", size))
            if len(go):
                threads, canon = idx[go], dacc.canonical[go]
                if copies.pending:  # another copy in flight to the same bytes: PTX orders none of them
                    copies.check(pc, AccessKind.WRITE, threads, canon, size)
                copies.issue(pc, threads, dacc.space_address[go], canon, src_canon[go], src_bytes[go], data[go])
            return nxt

        return cp_async

    def copied_bytes(self, op, size: int):
        """idx -> bytes a `cp.async` copies from its source.

        The operand is a source size, or an ignore-src predicate: all `size` bytes or none.
        """
        if isinstance(op, Reg) and self.state.regs[self.state.slot(self.fn, op)].dtype == np.bool_:
            ignore = self.reader(op, "pred")
            return lambda idx: np.where(ignore(idx), 0, size)
        return self.reader(op, "u32")

    # ------------------------------------------------------------------ fences

    # ------------------------------------------------------------------ textures and surfaces (sim.texture_ops)

    def op_tensormap(self) -> Handler:
        return tensormap_ops.tensormap(self)

    def op_tex(self) -> Handler:
        return texture_ops.tex(self)

    def op_tld4(self) -> Handler:
        return texture_ops.tld4(self)

    def op_suld(self) -> Handler:
        return texture_ops.suld(self)

    def op_sust(self) -> Handler:
        return texture_ops.sust(self)

    def op_txq(self) -> Handler:
        return texture_ops.query(self, TextureObject, "texture")

    def op_suq(self) -> Handler:
        return texture_ops.query(self, SurfaceObject, "surface")

    def op_membar(self) -> Handler:
        self.operands(0)
        level = self.one_of(("cta", "gl", "sys"), "level")
        return self._fence(FENCE_SCOPES[level], "sc")

    def op_fence(self) -> Handler:
        mods = self.ins.modifiers
        if "proxy" in mods and "async" in mods and "global" not in mods:
            return self._proxy_fence()
        if "proxy" in mods and "tensormap::generic" in mods:
            return tensormap_ops.proxy_fence(self)
        if "mbarrier_init" in mods:
            # `fence.mbarrier_init.release.cluster`: a release fence at cluster scope for the thread's earlier
            # mbarrier.init (CUTLASS's init; relaxed barrier.cluster.arrive; barrier.cluster.wait; remote arrive).
            # The detectors' fences do not tell release from acquire, nor init from other writes: this orders
            # the thread's other earlier writes too, and its later reads as an acq_rel fence would.
            self.operands(0)
            return self._fence("cluster", "acq_rel")
        if any(m.startswith("proxy") for m in mods):
            return self.op_nop()
        self.operands(0)
        scope = FENCE_SCOPES[self.one_of(("cta", "cluster", "gpu", "sys"), "scope")]
        sem = "acq_rel" if "acq_rel" in mods else "sc"
        return self._fence(scope, sem)

    def _proxy_fence(self) -> Handler:
        """`fence.proxy.async{.shared::cta,.shared::cluster}`: the thread's generic writes to shared memory so far
        become visible to the async proxy (`sim.proxy_fences`); it orders nothing between threads."""
        self.operands(0)
        proxy = self.eng.proxy_fences
        nxt = self.pc + 1

        def fence(idx):
            if proxy.active:
                proxy.fence(idx)
            return nxt

        return fence

    def _fence(self, scope: str, sem: str) -> Handler:
        eng = self.eng
        pc = self.pc
        nxt = pc + 1

        wide = scope in ("cluster", "gpu", "sys")

        def fence(idx):
            eng.emit(FenceEvent(eng.next_seq(), pc, idx, scope, sem))
            if wide:
                eng.cluster_barrier.fence(idx)
            return nxt

        return fence

    # ------------------------------------------------------------------ control flow

    def label_pc(self, op) -> int:
        if not isinstance(op, Sym):
            raise UserError(f"indirect branches are not supported: `{self.ins.text}`")
        try:
            return self.program.labels[(self.fn, op.name)]
        except KeyError:
            raise UserError(f"unknown label {op.name}") from None

    def op_bra(self) -> Handler:
        (label,) = self.operands(1)
        target = self.label_pc(label)
        if target > self.pc:
            return lambda idx: target
        yielded = self.eng.yielded
        pcs = self.eng.pc
        log = self.eng.yield_log
        state = self.state

        def backward(idx):
            where = state.rows(idx)  # consecutive threads: slices, not scatters
            pcs[where] = target
            yielded[where] = True
            log.append(idx)
            return None

        return backward

    def op_brx(self) -> Handler:
        """`brx.idx index, tlist`: each thread continues at the label its index picks from a `.branchtargets` list.

        PTX leaves an index past the list undefined: the run stops there with a message naming the line.
        """
        extra = [m for m in self.ins.modifiers if m not in ("idx", "uni")]
        if "idx" not in self.ins.modifiers or extra:
            raise UserError(f"`{self.ins.text}` is not a `brx.idx{{.uni}} index, tlist` branch")
        index, tlist = self.operands(2)
        lists = self.program.functions[self.fn].fn.target_lists
        if not isinstance(tlist, Sym) or tlist.name not in lists:
            raise UserError(f"`{self.ins.text}` needs the label of a .branchtargets list of {self.fn}")
        labels = lists[tlist.name]
        targets = np.array([self.label_pc(Sym(label)) for label in labels], dtype=np.int64)
        read = self.reader(index, "u32")
        pc = self.pc
        pcs, yielded, log = self.eng.pc, self.eng.yielded, self.eng.yield_log
        where, text, geo = self.ins.where(), self.ins.text, self.eng.geo

        def brx(idx):
            i = read(idx).astype(np.int64)
            past = i >= len(targets)
            if past.any():
                raise UserError(
                    f"{where}: the index of `{text}` is {int(i[past][0])} in {geo.thread_label(int(idx[past][0]))}, "
                    f"past the {len(targets)} labels of {tlist.name}: PTX leaves where it branches undefined"
                )
            dest = targets[i]
            pcs[idx] = dest
            back = dest <= pc  # a loop: yield, as a backward `bra` does
            if back.any():
                yielded[idx[back]] = True
                log.append(idx[back])
            return None

        return brx

    def op_exit(self) -> Handler:
        self.operands(0)
        eng = self.eng
        pc = self.pc

        def exit_(idx):
            eng.exit_threads(idx, pc)
            return None

        return exit_

    def op_trap(self) -> Handler:
        self.operands(0)
        eng = self.eng
        pc = self.pc
        cause = "the kernel executed `trap` (abort)" + trap_hint(eng.grid_workspace != 0, eng.program)

        def trap(idx):
            eng.report("trap", cause, [eng.site(pc, int(idx[0]), "trap")], count=len(idx))
            eng.stopped = "trap"
            return None

        return trap

    op_brkpt = op_trap

    def op_nanosleep(self) -> Handler:
        self.operands(1)  # the duration: a hint, as far as the scheduler is concerned
        yielded = self.eng.yielded
        pcs = self.eng.pc
        log = self.eng.yield_log
        nxt = self.pc + 1

        def nanosleep(idx):
            pcs[idx] = nxt
            yielded[idx] = True
            log.append(idx)
            return None

        return nanosleep

    def op_call(self) -> Handler:
        rets, callee, args = call_parts(self.ins)
        self.check_call_params(rets + args)
        from gpurace.sim.calls import call_handler, indirect_call_handler  # calls.py builds on this module

        if isinstance(callee, Reg):
            return indirect_call_handler(self, callee, rets, args)
        if is_builtin_function(callee) and callee not in self.program.functions:
            return self._builtin_call(callee, rets, args)
        self.check_signature(callee, rets, args)
        return call_handler(self, callee, rets, args)

    def check_call_params(self, names: list[str]) -> None:
        """Every name in a call's parameter lists must be a `.param` of the caller: values pass through them."""
        own = self.program.functions[self.fn].params
        for name in names:
            if name not in own:
                raise UserError(f"`{self.ins.text}` passes {name}, which is not a .param declared in {self.fn}")

    def check_signature(self, callee: str, rets: list[str], args: list[str]) -> None:
        """A call matches its callee: a device function, with as many arguments and returns, each large enough."""
        info = self.program.functions[callee]
        if info.fn.is_entry:
            raise UserError(f"`{self.ins.text}` calls the kernel {callee}; only .func functions can be called")
        formal = info.fn.params + info.fn.returns
        if len(args) != len(info.fn.params) or len(rets) != len(info.fn.returns):
            raise UserError(
                f"`{self.ins.text}` passes {len(args)} argument(s) and {len(rets)} return(s); "
                f"{callee} takes {len(info.fn.params)} and {len(info.fn.returns)}"
            )
        own = self.program.functions[self.fn].params
        for name, param in zip(args + rets, formal):
            if self.program.param_sizes[own[name]] < param.size:
                raise UserError(
                    f"`{self.ins.text}` passes {name} ({self.program.param_sizes[own[name]]} bytes) "
                    f"for {param.name} of {callee} ({param.size} bytes)"
                )

    def op_ret(self) -> Handler:
        if self.fn == self.program.kernel.name:
            return self.op_exit()  # a kernel's `ret` ends the thread; so does running past its end, as ptxas compiles it
        if self.pc in self.program.implicit_ends:
            raise UserError(
                f"function {self.fn} can run past its last instruction without `ret` (PTX line {self.ins.ptx_line}); "
                "the simulator does not support falling off the end of a .func"
            )
        from gpurace.sim.calls import ret_handler

        return ret_handler(self)

    def _builtin_call(self, callee: str, rets: list[str], args: list[str]) -> Handler:
        eng = self.eng
        pc = self.pc
        runtime = device_call(callee)
        if runtime is not None:
            return eng.device_runtime.handler(self, runtime, rets, args)
        if callee == "vprintf":
            return printf_handler(self, args)
        if callee == SET_CONDITIONAL:
            return set_conditional_handler(self, args)
        if callee == "__assertfail":

            def assertfail(idx):
                eng.report("assertion-failure", "a device-side assert() failed", [eng.site(pc, int(idx[0]), "assert")], count=len(idx))
                eng.exit_threads(idx, pc)
                return None

            return assertfail
        if callee == "__gpurace_assert":
            return annotations.assert_handler(self, args)
        if callee == "__gpurace_requires":
            return annotations.requires_handler(self, args)
        if callee == "__gpurace_assume":
            return annotations.assume_handler(self, args)
        if callee.startswith(VERIFIER_ONLY_PREFIX):
            return annotations.verifier_only_handler(self, callee)
        return unsupported(self.ins, f"device-side {callee}")

    # ------------------------------------------------------------------ barriers

    def op_bar(self) -> Handler:
        mods = self.ins.modifiers
        if "warp" in mods:
            return self.warp_sync()
        if "red" in mods:
            return self.bar_red()
        if any(m in ("popc", "and", "or") for m in mods):
            raise UserError(f"`{self.ins.text}`: .popc, .and and .or belong to bar.red")
        arrive = "arrive" in mods
        ops = self.operands(2) if arrive else self.operands(1, 2)  # bar.arrive needs its thread count
        bid = self.barrier_id(ops[0])
        count = self.thread_count(ops[1]) if len(ops) > 1 else None
        eng = self.eng
        if arrive:
            nxt = self.pc + 1

            def arrive(idx):
                eng.bar_arrive(idx, bid(idx).astype(np.int64))
                return nxt

            return arrive
        if not ("sync" in mods or not mods or "aligned" in mods):
            return unsupported(self.ins)

        def bar_sync(idx):
            c = count(idx).astype(np.int32) if count is not None else np.zeros(len(idx), dtype=np.int32)
            eng.arrive_barrier(idx, bid(idx).astype(np.int32), c, None)
            return None

        return bar_sync

    def op_barrier(self) -> Handler:
        if "cluster" in self.ins.modifiers:
            return clusters.decode_barrier(self)
        return self.op_bar()

    def op_mapa(self) -> Handler:
        return clusters.decode_mapa(self)

    def op_getctarank(self) -> Handler:
        return clusters.decode_getctarank(self)

    def bar_red(self) -> Handler:
        """`bar.red.popc.u32 d, a{, b}, {!}p` and `bar.red.{and,or}.pred d, a{, b}, {!}p`."""
        ins = self.ins
        mods = ins.modifiers
        ops = self.operands(3, 4)
        dst, bid_op, pred_op = ops[0], ops[1], ops[-1]
        count_op = ops[2] if len(ops) == 4 else None
        bid = self.barrier_id(bid_op)
        count = self.thread_count(count_op) if count_op is not None else None
        pred = self.reader(pred_op, "pred")
        eng = self.eng
        if "popc" in mods:
            write = self.writer(dst, "u32")
            eng.bar_red_writers[self.pc] = lambda members, trues, sizes: write(members, trues.astype(np.uint32))
        elif "and" in mods:
            write = self.writer(dst, "pred")
            eng.bar_red_writers[self.pc] = lambda members, trues, sizes: write(members, trues == sizes)
        elif "or" in mods:
            write = self.writer(dst, "pred")
            eng.bar_red_writers[self.pc] = lambda members, trues, sizes: write(members, trues > 0)
        else:
            return unsupported(ins)

        def bar_red(idx):
            c = count(idx).astype(np.int32) if count is not None else np.zeros(len(idx), dtype=np.int32)
            eng.arrive_barrier(idx, bid(idx).astype(np.int32), c, pred(idx))
            return None

        return bar_red

    def barrier_id(self, op):
        """idx -> the barrier each thread names: one of the block's 16 (the engine keys barriers by it)."""
        return self.bounded(op, "barrier id", 0, 15)

    def thread_count(self, op):
        """idx -> the thread count of a barrier: a positive multiple of the warp size, at most a block's 1024 threads."""
        return self.bounded(op, "the thread count", 32, 1024, step=32)

    def warp_sync(self) -> Handler:
        (mask_op,) = self.operands(1)
        mask = self.reader(mask_op, "b32")
        eng = self.eng
        pc = self.pc

        def bar_warp_sync(idx):
            eff = eng.check_masks(pc, idx, mask(idx).astype(np.uint32), "__syncwarp")
            eng.status[idx] = WARP
            eng.wait_kind[idx] = WAIT_WARPSYNC
            eng.wait_mask[idx] = eff
            recheck_warp_waiters(eng)
            return None

        return bar_warp_sync

    # ------------------------------------------------------------------ warp collectives

    def collective(self, compute, mask_op, what: str) -> Handler:
        """A `.sync` warp collective: waits until every lane of its member mask is at this pc, then runs."""
        mask = self.reader(mask_op, "b32") if mask_op is not None else None
        eng = self.eng
        pc = self.pc
        geo = eng.geo

        def run(idx):
            parked = np.flatnonzero((eng.status == WARP) & (eng.pc == pc))
            allidx = np.union1d(idx, parked) if len(parked) else idx
            raw = mask(allidx).astype(np.uint32) if mask is not None else np.full(len(allidx), 0xFFFFFFFF, np.uint32)
            if len(parked):
                fresh = np.isin(allidx, idx)
                eff = raw.copy()
                eff[fresh] = eng.check_masks(pc, allidx[fresh], raw[fresh], what)
                eff[~fresh] = eng.effective_masks(allidx[~fresh], raw[~fresh])
            else:
                eff = eng.check_masks(pc, allidx, raw, what)
            ready = eng.warp_ready(allidx, eff, allidx)
            go = allidx[ready]
            wait = allidx[~ready]
            if len(wait):
                eng.status[wait] = WARP
                eng.wait_kind[wait] = WAIT_COLLECTIVE
                eng.wait_mask[wait] = eff[~ready]
            if len(go):
                compute(go, eff[ready], allidx)
                eng.resume(go)
                eng.pc[go] = pc + 1
                eng.progress = True
                groups = geo.warp_of[go].astype(np.int64) * (1 << 32) + eff[ready].astype(np.int64)
                eng.emit(SyncEvent(eng.next_seq(), "collective", go, groups, np.full(len(go), pc, dtype=np.int64)))
            return None

        return run

    def warp_matrix(self, present: np.ndarray, values: np.ndarray):
        """Lay out one value per present lane as rows of 32 (one row per warp); returns (matrix, row of each lane)."""
        geo = self.eng.geo
        warps, inv = np.unique(geo.warp_of[present], return_inverse=True)
        m = np.zeros((len(warps), 32), dtype=values.dtype)
        m[inv, geo.lane[present]] = values
        return m, warps

    def row_of(self, warps: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.searchsorted(warps, self.eng.geo.warp_of[idx])

    def op_shfl(self) -> Handler:
        ins = self.ins
        if "sync" not in ins.modifiers:
            return unsupported(ins, "shfl without .sync is not available on sm_70 and later")
        mode = self.one_of(("up", "down", "bfly", "idx"), "shuffle mode")
        ops = self.operands(5)
        dst = ops[0]
        d_op, p_op = (dst.first, dst.second) if isinstance(dst, PredPair) else (dst, None)
        a, b, c = self.reader(ops[1], "b32"), self.reader(ops[2], "u32"), self.reader(ops[3], "u32")
        write_d = self.writer(d_op, "b32")
        write_p = self.writer(p_op, "pred") if p_op is not None else None
        lane_of = self.eng.geo.lane

        def compute(go, masks, present):
            m, warps = self.warp_matrix(present, a(present))
            rows = self.row_of(warps, go)
            lane = lane_of[go].astype(np.int64)
            bval = (b(go) & 0x1F).astype(np.int64)
            cv = c(go).astype(np.int64)
            cval = cv & 0x1F
            seg = (cv >> 8) & 0x1F
            max_lane = (lane & seg) | (cval & ~seg)
            min_lane = lane & seg
            if mode == "up":
                j = lane - bval
                pval = j >= max_lane
            elif mode == "down":
                j = lane + bval
                pval = j <= max_lane
            elif mode == "bfly":
                j = lane ^ bval
                pval = j <= max_lane
            else:
                j = min_lane | (bval & ~seg)
                pval = j <= max_lane
            j = np.where(pval, j, lane)
            write_d(go, m[rows, j])
            if write_p is not None:
                write_p(go, pval)

        return self.collective(compute, ops[4], "shfl.sync")

    def op_vote(self) -> Handler:
        ins = self.ins
        if "sync" not in ins.modifiers:
            return unsupported(ins, "vote without .sync is not available on sm_70 and later")
        mode = self.one_of(("all", "any", "uni", "ballot"), "vote mode")
        ops = self.operands(3)
        pred = self.reader(ops[1], "pred")
        write = self.writer(ops[0], "b32" if mode == "ballot" else "pred")
        eng = self.eng

        def compute(go, masks, present):
            bits = np.where(pred(present), eng.lane_bits(present), np.uint32(0)).astype(np.uint32)
            ballot = eng.warp_or(eng.geo.warp_of[present], bits)[eng.geo.warp_of[go]] & masks
            if mode == "ballot":
                write(go, ballot)
            elif mode == "any":
                write(go, ballot != 0)
            elif mode == "all":
                write(go, ballot == masks)
            else:
                write(go, (ballot == masks) | (ballot == 0))

        return self.collective(compute, ops[2], "vote.sync")

    def op_match(self) -> Handler:
        ins = self.ins
        if "sync" not in ins.modifiers:
            return unsupported(ins, "match without .sync is not PTX")
        mode = self.one_of(("any", "all"), "match mode")
        t = self.last_type()
        ops = self.operands(3)
        dst = ops[0]
        if isinstance(dst, PredPair) and mode == "any":
            raise UserError(f"`{ins.text}`: only match.all has a predicate destination")
        d_op, p_op = (dst.first, dst.second) if isinstance(dst, PredPair) else (dst, None)
        value = self.reader(ops[1], t)
        write_d = self.writer(d_op, "b32")
        write_p = self.writer(p_op, "pred") if p_op is not None else None
        lane_bit = (np.uint64(1) << np.arange(32, dtype=np.uint64)).astype(np.uint64)

        def compute(go, masks, present):
            m, warps = self.warp_matrix(present, value(present))
            here = np.zeros((len(warps), 32), dtype=np.bool_)
            here[self.row_of(warps, present), self.eng.geo.lane[present]] = True
            rows = self.row_of(warps, go)
            same = (m[rows] == value(go)[:, None]) & here[rows]
            bits = (same * lane_bit[None, :]).sum(axis=1).astype(np.uint32) & masks
            if mode == "any":
                write_d(go, bits)
            else:
                all_same = bits == masks
                write_d(go, np.where(all_same, masks, np.uint32(0)).astype(np.uint32))
                if write_p is not None:
                    write_p(go, all_same)

        return self.collective(compute, ops[2], "match.sync")

    def op_elect(self) -> Handler:
        """`elect.sync d|p, membermask`: of the warp's threads at it that `membermask` names, one leader, the same
        for the same threads every time (the ISA says no more): here the lowest lane. d gets its lane id in every
        thread, p is true in the leader only."""
        ins = self.ins
        if "sync" not in ins.modifiers:
            return unsupported(ins, "elect without .sync is not PTX")
        ops = self.operands(2)
        if not isinstance(ops[0], PredPair):
            raise UserError(f"`{ins.text}`: the destination of elect.sync is d|p")
        write_d = self.writer(ops[0].first, "b32")
        write_p = self.writer(ops[0].second, "pred")
        eng = self.eng

        def compute(go, masks, present):
            here = eng.warp_or(eng.geo.warp_of[present], eng.lane_bits(present))[eng.geo.warp_of[go]] & masks
            lowest = here & (~here + np.uint32(1))  # the lowest set bit
            leader = np.log2(np.maximum(lowest, 1)).astype(np.uint32)
            write_d(go, leader)
            write_p(go, eng.geo.lane[go].astype(np.uint32) == leader)

        return self.collective(compute, ops[1], "elect.sync")

    def op_redux(self) -> Handler:
        ins = self.ins
        if "sync" not in ins.modifiers:
            return unsupported(ins, "redux without .sync is not PTX")
        op = self.one_of(("add", "min", "max", "and", "or", "xor"), "reduction")
        t = self.last_type()  # a 32-bit integer type: `forms` refuses the others
        ops = self.operands(3)
        value = self.reader(ops[1], t)
        write = self.writer(ops[0], t)
        signed = t in SIGNED_TYPES

        def compute(go, masks, present):
            v = value(present).astype(np.int64)
            if signed:
                v = np.where(v >= 2**31, v - 2**32, v)
            m, warps = self.warp_matrix(present, v)
            here = np.zeros((len(warps), 32), dtype=np.bool_)
            here[self.row_of(warps, present), self.eng.geo.lane[present]] = True
            rows = self.row_of(warps, go)
            member = (((masks[:, None] >> np.arange(32, dtype=np.uint32)[None, :]) & 1) == 1) & here[rows]
            vals = m[rows]
            if op == "add":
                r = np.where(member, vals, 0).sum(axis=1)
            elif op == "min":
                r = np.where(member, vals, np.iinfo(np.int64).max).min(axis=1)
            elif op == "max":
                r = np.where(member, vals, np.iinfo(np.int64).min).max(axis=1)
            elif op == "and":
                r = np.bitwise_and.reduce(np.where(member, vals, -1), axis=1)
            elif op == "or":
                r = np.bitwise_or.reduce(np.where(member, vals, 0), axis=1)
            else:
                r = np.bitwise_xor.reduce(np.where(member, vals, 0), axis=1)
            write(go, (r & 0xFFFFFFFF).astype(np.uint32))

        return self.collective(compute, ops[2], "redux.sync")

    def op_activemask(self) -> Handler:
        (dst,) = self.operands(1)
        write = self.writer(dst, "b32")
        eng = self.eng
        nxt = self.pc + 1

        def activemask(idx):
            write(idx, eng.warp_or(eng.geo.warp_of[idx], eng.lane_bits(idx))[eng.geo.warp_of[idx]])
            return nxt

        return activemask

    # ------------------------------------------------------------------ tensor cores (sim.tensor_core_ops)

    def op_mma(self) -> Handler:
        return tensor_core_ops.mma(self)

    def op_wmma(self) -> Handler:
        return tensor_core_ops.wmma(self)

    def op_ldmatrix(self) -> Handler:
        return tensor_core_ops.ldmatrix(self)

    def op_stmatrix(self) -> Handler:
        return tensor_core_ops.stmatrix(self)

    def op_movmatrix(self) -> Handler:
        return tensor_core_ops.movmatrix(self)

    # ------------------------------------------------------------------ mbarriers (sim.mbarrier_ops)

    def op_wgmma(self) -> Handler:
        return wgmma_ops.wgmma(self)

    def op_mbarrier(self) -> Handler:
        return mbarrier_ops.mbarrier(self)


def recheck_warp_waiters(eng) -> None:
    """Release `bar.warp.sync` waiters whose masks are complete; wake collective waiters after exits."""
    waiting = np.flatnonzero(eng.status == WARP)
    if len(waiting) == 0:
        return
    kinds = eng.wait_kind[waiting]
    coll = waiting[kinds == WAIT_COLLECTIVE]
    if len(coll):
        # Re-run the collective: exits may have completed its mask.
        stale = (eng.wait_mask[coll] & eng.exited_lanes[eng.geo.warp_of[coll]]) != 0
        eng.resume(coll[stale])
    ws = waiting[kinds == WAIT_WARPSYNC]
    if len(ws) == 0:
        return
    exited = eng.exited_lanes[eng.geo.warp_of[ws]]
    named = ws[(eng.wait_mask[ws] & exited) != 0]
    for pc in np.unique(eng.pc[named]):
        # lanes named in the mask exited while these waited: as invalid as naming them after they exited
        members = named[eng.pc[named] == pc]
        eng.check_masks(int(pc), members, eng.wait_mask[members], "__syncwarp")
    masks = eng.wait_mask[ws] & ~exited
    eng.wait_mask[ws] = masks
    ready = eng.warp_ready(ws, masks, ws)
    go = ws[ready]
    if len(go) == 0:
        return
    pcs = eng.pc[go].copy()
    eng.resume(go)
    eng.pc[go] = pcs + 1
    eng.progress = True
    groups = eng.geo.warp_of[go].astype(np.int64) * (1 << 32) + masks[ready].astype(np.int64)
    eng.emit(SyncEvent(eng.next_seq(), "warp", go, groups, pcs))


def packed_lanes(vals: np.ndarray, esize: int) -> np.ndarray | None:
    """Each lane's elements of a vector store (`[lanes, count]` raw values) as one little-endian word of the
    bytes it writes, or None past 8 bytes. The detectors compare stores by these bytes: code generators
    (Triton's layout conversions) store replicated values with `st.shared.v2`, and those same-value races
    must be told from others as a scalar store's are."""
    count = vals.shape[1]
    if count * esize > 8:
        return None
    words = vals.astype(UINT_OF_SIZE[esize]).astype(np.uint64)
    shifts = np.arange(count, dtype=np.uint64) * np.uint64(8 * esize)
    return np.bitwise_or.reduce(words << shifts, axis=1)
