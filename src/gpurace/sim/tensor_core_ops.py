"""The handlers of `mma`, `wmma`, `ldmatrix`, `stmatrix` and `movmatrix` (the `Decoder` methods delegate here).

Every one of them is a `.sync.aligned` warp collective: it runs, through the
decoder's `collective`, once all 32 lanes of a warp are at it, and a warp some
of whose lanes never arrive is reported as a divergent warp collective would
be (the lanes that wait end in a deadlock; lanes that exited make an
invalid-warp-sync finding, and the run stops there, since the hardware's
result is undefined). `sim.tensor_core` holds the layouts and the arithmetic;
this module reads and writes registers and memory, and emits each memory
access as an ordinary read or write event of the lanes that make it, so that
the race detectors see tensor-core loads and stores as they see `ld` and `st`.
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Reg, Vec
from gpurace.sim import tensor_core as tc
from gpurace.sim.events import AccessKind
from gpurace.sim.memory import Space
from gpurace.sim.state import raw_dtype


def _vector(dec, op, count: int, what: str) -> list:
    """The `count` registers of a `{...}` operand (a single register may also be written without braces)."""
    elems = list(op.elems) if isinstance(op, Vec) else [op]
    if len(elems) != count:
        raise UserError(f"`{dec.ins.text}`: {what} needs {count} register(s), found {len(elems)}")
    return elems


def fragment_readers(dec, op, frag: tc.Fragment, what: str) -> list:
    return [dec.reader(e, frag.reg_type) for e in _vector(dec, op, frag.registers, what)]


def _fragment_writers(dec, op, frag: tc.Fragment, what: str) -> list:
    for e in _vector(dec, op, frag.registers, what):
        if not isinstance(e, Reg):
            raise UserError(f"`{dec.ins.text}`: {what} must be registers")
    return [dec.writer(e, frag.reg_type) for e in _vector(dec, op, frag.registers, what)]


class WarpSlots:
    """Where each executing lane sits in `[warps, 32]` arrays: `row` (its warp's index) and `lane`."""

    def __init__(self, dec, go: np.ndarray):
        geo = dec.eng.geo
        self.warps, self.row = np.unique(geo.warp_of[go], return_inverse=True)
        self.lane = geo.lane[go].astype(np.int64)
        self.go = go

    def gather(self, readers: list) -> np.ndarray:
        """`[warps, 32, len(readers)]` register values of the warps."""
        out = np.zeros((len(self.warps), tc.WARP, len(readers)), dtype=np.uint64)
        for r, read in enumerate(readers):
            out[self.row, self.lane, r] = read(self.go)
        return out

    def scatter(self, writers: list, words: np.ndarray, reg_type: str) -> None:
        dt = raw_dtype(reg_type)
        for r, write in enumerate(writers):
            write(self.go, words[self.row, self.lane, r].astype(dt))


def whole_warps(dec, go: np.ndarray, what: str) -> bool:
    """True when `go` is whole warps; otherwise report the first incomplete one and stop the run."""
    eng = dec.eng
    warps, counts = np.unique(eng.geo.warp_of[go], return_counts=True)
    short = counts < tc.WARP
    if not short.any():
        return True
    w = warps[np.argmax(short)]
    present = eng.warp_or(eng.geo.warp_of[go], eng.lane_bits(go))[w]
    g = int(go[np.argmax(eng.geo.warp_of[go] == w)])
    eng.report(
        "invalid-warp-sync",
        f"{what} is .aligned: all 32 lanes of a warp must execute it together, but only lanes 0x{int(present):08x} "
        "do (the others have exited or do not exist); the result is undefined, so the simulation stops here",
        [eng.site(dec.pc, g, what)],
    )
    eng.stopped = "incomplete warp at a tensor-core instruction"
    return False


def mma(dec):
    """`mma.sync.aligned` d, a, b, c: one matrix product per warp (`tc.mma_product` lists the forms)."""
    ins = dec.ins
    product = tc.mma_product(ins.text, ins.modifiers)
    return _product(dec, product, "mma.sync")


def _product(dec, product: tc.MatrixProduct, what: str):
    d, a, b, c = dec.operands(4)
    write_d = _fragment_writers(dec, d, product.d, "the D fragment")
    read_a = fragment_readers(dec, a, product.a, "the A fragment")
    read_b = fragment_readers(dec, b, product.b, "the B fragment")
    read_c = fragment_readers(dec, c, product.c, "the C fragment")

    def compute(go, masks, present):
        if not whole_warps(dec, go, what):
            return
        slots = WarpSlots(dec, go)
        words = product.compute(slots.gather(read_a), slots.gather(read_b), slots.gather(read_c))
        slots.scatter(write_d, words, product.d.reg_type)

    return dec.collective(compute, None, what)


def _shared_rows(dec, acc, ok, idx) -> None:
    """ldmatrix/stmatrix address shared memory; a generic address elsewhere is undefined: stop with a message."""
    elsewhere = ok & (acc.space != int(Space.SHARED))
    if elsewhere.any():
        g = int(idx[np.argmax(elsewhere)])
        raise UserError(f"{dec.ins.where()}: `{dec.ins.text}` in thread {g} addresses memory outside shared memory")


def ldmatrix(dec):
    """`ldmatrix.sync.aligned.m8n8.xN{.trans}{.shared}.b16 r, [p]`: lanes 0..8N-1 each read one 16-byte row."""
    ins = dec.ins
    count = tc.matrix_count(ins.text, ins.modifiers)
    trans = "trans" in ins.modifiers
    dst, src = dec.operands(2)
    writers = [dec.writer(e, "b32") for e in _vector(dec, dst, count, "the destination")]
    addr = dec.address(src)
    space = dec.state_space()
    dec._strength = (False, None, None)
    eng = dec.eng
    mem = eng.mem

    def compute(go, masks, present):
        if not whole_warps(dec, go, "ldmatrix"):
            return
        slots = WarpSlots(dec, go)
        supplying = slots.lane < 8 * count
        idx = go[supplying]
        acc = mem.resolve(space, addr(idx), idx, eng.geo.block_of[idx], tc.ROW_BYTES)
        ok = dec.check_access(acc, idx, "read", tc.ROW_BYTES)
        _shared_rows(dec, acc, ok, idx)
        data = mem.load(acc, 2, 8)
        if eng.watching:
            eng.parking.read(idx, acc, tc.ROW_BYTES, data)
        dec.emit_access(AccessKind.READ, idx, acc, ok, tc.ROW_BYTES)
        lane = slots.lane[supplying]
        rows = np.zeros((len(slots.warps), count, 8, 8), dtype=np.uint16)
        rows[slots.row[supplying], lane >> 3, lane & 7] = data
        slots.scatter(writers, tc.rows_to_registers(rows, trans), "b32")

    return dec.collective(compute, None, "ldmatrix")


def stmatrix(dec):
    """`stmatrix.sync.aligned.m8n8.xN{.trans}{.shared}.b16 [p], r`: lanes 0..8N-1 each write one 16-byte row."""
    ins = dec.ins
    count = tc.matrix_count(ins.text, ins.modifiers)
    trans = "trans" in ins.modifiers
    dst, src = dec.operands(2)
    readers = [dec.reader(e, "b32") for e in _vector(dec, src, count, "the source")]
    addr = dec.address(dst)
    space = dec.state_space()
    dec._strength = (False, None, None)
    eng = dec.eng
    mem = eng.mem

    def compute(go, masks, present):
        if not whole_warps(dec, go, "stmatrix"):
            return
        slots = WarpSlots(dec, go)
        rows = tc.registers_to_rows(slots.gather(readers), trans)
        supplying = slots.lane < 8 * count
        idx = go[supplying]
        lane = slots.lane[supplying]
        data = rows[slots.row[supplying], lane >> 3, lane & 7]
        acc = mem.resolve(space, addr(idx), idx, eng.geo.block_of[idx], tc.ROW_BYTES, write=True)
        ok = dec.check_access(acc, idx, "write", tc.ROW_BYTES)
        _shared_rows(dec, acc, ok, idx)
        dec.emit_access(AccessKind.WRITE, idx, acc, ok, tc.ROW_BYTES)
        mem.store(acc, 2, data)
        eng.progress = True
        if eng.watching:
            eng.parking.wrote(idx, acc, tc.ROW_BYTES)

    return dec.collective(compute, None, "stmatrix")


def movmatrix(dec):
    """`movmatrix.sync.aligned.m8n8.trans.b16 d, a`: the warp's 8x8 matrix, transposed."""
    ins = dec.ins
    if [m for m in ins.modifiers if m not in ("sync", "aligned", "m8n8", "trans", "b16")] or not all(
        m in ins.modifiers for m in ("sync", "aligned", "m8n8", "trans", "b16")
    ):
        raise UserError(f"the simulator does not support `{ins.text}`: only movmatrix.sync.aligned.m8n8.trans.b16")
    dst, src = dec.operands(2)
    read = dec.reader(src, "b32")
    write = dec.writer(dst, "b32")

    def compute(go, masks, present):
        if not whole_warps(dec, go, "movmatrix"):
            return
        slots = WarpSlots(dec, go)
        words = tc.transpose_registers(slots.gather([read])[:, :, 0])
        slots.scatter([write], words[:, :, None], "b32")

    return dec.collective(compute, None, "movmatrix")


def wmma(dec):
    """`wmma.load`, `wmma.mma` and `wmma.store` in the simulator's fragment layout (`sim.tensor_core`)."""
    ins = dec.ins
    verb = ins.modifiers[0] if ins.modifiers else ""
    if verb == "mma":
        return _product(dec, tc.wmma_product(ins.text, ins.modifiers), "wmma.mma.sync")
    if verb in ("load", "store"):
        return _wmma_memory(dec, verb)
    raise UserError(f"the simulator does not support `{ins.text}`")


def _wmma_memory(dec, verb: str):
    """`wmma.load.{a,b,c}...{.ss}.type r, [p], stride` and `wmma.store.d...{.ss}.type [p], r, stride`."""
    ins = dec.ins
    mods = ins.modifiers
    shape = tc.wmma_shape(ins.text, mods)
    which = [m for m in mods if m in ("a", "b", "c", "d")]
    layout = [m for m in mods if m in ("row", "col")]
    types = [m for m in mods if m in tc.ELEMENT_BITS]
    allowed = {verb, "sync", "aligned", shape, "a", "b", "c", "d", "row", "col", "global", "shared", "shared::cta", *types}
    extra = [m for m in mods if m not in allowed]
    wanted = ("a", "b", "c") if verb == "load" else ("d",)
    if extra or len(which) != 1 or which[0] not in wanted or len(layout) != 1 or len(types) != 1:
        raise UserError(
            f"the simulator does not support `{ins.text}`: "
            f"expected wmma.{verb}.{'/'.join(wanted)}.sync.aligned.<row|col>.<shape>[.global|.shared].<type>"
        )
    which, layout, etype = which[0], layout[0], types[0]
    ok_types = tc.WMMA_INPUTS if which in "ab" else ("f16", "f32", "s32")
    if etype not in ok_types:
        raise UserError(f"the simulator does not support `{ins.text}`: .{etype} fragments")
    frag = tc.wmma_fragment(which, shape, etype)
    ops = dec.operands(3)
    if verb == "load":
        regs_op, addr_op = ops[0], ops[1]
    else:
        addr_op, regs_op = ops[0], ops[1]
    stride = dec.reader(ops[2], "u32")
    addr = dec.address(addr_op)
    space = dec.state_space()
    dec._strength = (False, None, None)
    esize = tc.ELEMENT_BITS[etype] // 8
    eng = dec.eng
    mem = eng.mem
    what = f"wmma.{verb}"
    if verb == "load":
        writers = _fragment_writers(dec, regs_op, frag, "the fragment")
    else:
        readers = fragment_readers(dec, regs_op, frag, "the fragment")

    def compute(go, masks, present):
        if not whole_warps(dec, go, what):
            return
        slots = WarpSlots(dec, go)
        offsets = tc.wmma_offsets(frag, layout, slots.lane, stride(go)) * esize
        base = addr(go)
        blocks = eng.geo.block_of[go]
        if verb == "load":
            elements = np.zeros((len(slots.warps), tc.WARP, offsets.shape[1]), dtype=np.uint64)
        else:
            elements = frag.elements(slots.gather(readers))
        for i in range(offsets.shape[1]):
            acc = mem.resolve(space, base + offsets[:, i].astype(np.uint64), go, blocks, esize, write=verb == "store")
            ok = dec.check_access(acc, go, "read" if verb == "load" else "write", esize)
            if verb == "load":
                vals = mem.load(acc, esize)
                if eng.watching:
                    eng.parking.read(go, acc, esize, vals)
                dec.emit_access(AccessKind.READ, go, acc, ok, esize)
                elements[slots.row, slots.lane, i] = vals
            else:
                dec.emit_access(AccessKind.WRITE, go, acc, ok, esize)
                mem.store(acc, esize, elements[slots.row, slots.lane, i].astype(raw_dtype(f"b{8 * esize}")))
                eng.progress = True
                if eng.watching:
                    eng.parking.wrote(go, acc, esize)
        if verb == "load":
            slots.scatter(writers, frag.words(elements), frag.reg_type)

    return dec.collective(compute, None, what)

