"""The `wgmma` instructions (sm_90a): handlers, and the registers and shared memory a product uses until its wait.

- `wgmma.fence.sync.aligned` orders the thread's earlier register accesses before its later `wgmma.mma_async`s;
- `wgmma.mma_async.sync.aligned.m64nNk16.{f32,f16}.{f16,bf16}.{f16,bf16} d, a, b-desc, scale-d, imm-scale-a,
  imm-scale-b{, imm-trans-a}, imm-trans-b` (A from registers or a descriptor),
  `m64nNk8.f32.tf32.tf32 d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b`,
  `m64nNk32.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2} d, a, b-desc, scale-d, imm-scale-a, imm-scale-b` and
  `m64nNk32.s32.{s8,u8}.{s8,u8}{.satfinite} d, a, b-desc, scale-d` (K-major operands), run, as a `.sync.aligned`
  warp collective, once all 32 lanes of a warp are at it, and computes that warp's 16 rows of D
  (`sim.wgmma`); the shared operands, K-major or MN-major (`imm-trans` 1), with or without a swizzle, are
  read then (read events of the warp's lanes, one 16-byte chunk each);
- `wgmma.commit_group.sync.aligned` closes the thread's current wgmma group;
- `wgmma.wait_group.sync.aligned N` waits for all but the newest N committed groups.

The product is asynchronous: until the `wait_group` that covers it, the hardware may still read A and B and
write D. So the simulator writes D when the product runs and keeps the product *in flight* until the wait:

- an instruction other than `wgmma.mma_async` that reads or writes an accumulator register of a product in
  flight in its thread is an `invalid-wgmma-use` finding between the two lines (a later `wgmma.mma_async`
  may use it: that is how products accumulate);
- a write to a shared operand while the product is in flight is a `data-race` with the product
  (`sim.async_copies`, mode `WGMMA`); the operands are read through the async proxy, so generic writes to them
  need `fence.proxy.async` (`sim.proxy_fences`);
- a `wgmma.mma_async` whose accumulator or A registers the thread wrote with other instructions since its last
  `wgmma.fence` (or that no `wgmma.fence` precedes) is an `invalid-wgmma-use` finding.

The checks cost nothing for kernels without `wgmma`: the instructions that touch an accumulator or A register
of some `wgmma.mma_async` get a wrapped handler (`guard_registers`); the table of accumulators in flight holds
one int32 per thread and accumulator register; such kernels run interpreted under `--executor native`.
Not modelled: the warpgroup-wide `.aligned` requirement (each
warp's rows are computed when that warp arrives), sparse `wgmma.mma_async.sp` and the 1-bit products (refused
by name).
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.findings import ERROR, Finding, make_site
from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Addr, Imm, Reg, Vec
from gpurace.sim import tensor_core as tc
from gpurace.sim import wgmma as wg
from gpurace.sim.async_copies import MAX_COPY
from gpurace.sim.bulk_copies import emit_by_piece
from gpurace.sim.events import AccessKind
from gpurace.sim.memory import Space
from gpurace.sim.tensor_core_ops import WarpSlots, fragment_readers, whole_warps

KIND = "invalid-wgmma-use"
EARLY = (
    "access to an accumulator register of a wgmma.mma_async before the wgmma.wait_group that covers it: the "
    "warpgroup may still write the register until then"
)
UNFENCED = (
    "wgmma.mma_async without a wgmma.fence after its thread last wrote its accumulator or A registers (or before "
    "its first wgmma.mma_async): the product may read the registers' earlier values"
)
_SHAPES = {f"m64n{n}k{k}": (n, k) for n in wg.N_VALUES for k in sorted(set(wg.K_OF.values()))}
_TYPES = (*wg.K_OF, "f32", "s32")
_ALLOWED = {"mma_async", "sync", "aligned", "satfinite", *_TYPES, *_SHAPES}


def _regs(op) -> list[Reg]:
    if isinstance(op, Reg):
        return [op]
    if isinstance(op, Vec):
        return [r for e in op.elems for r in _regs(e)]
    if isinstance(op, Addr) and isinstance(op.base, Reg):
        return [op.base]
    return []


def _is_product(ins) -> bool:
    return ins.opcode == "wgmma" and "mma_async" in ins.modifiers


class WgmmaState:
    """Per thread: the accumulator registers in flight (by group) and whether its registers are fenced."""

    def __init__(self, eng) -> None:
        self.eng = eng
        program = eng.program
        acc, a_regs = set(), set()
        for pc, ins in enumerate(program.instructions):
            if _is_product(ins) and ins.operands:
                fn = program.owner[pc]
                acc.update(eng.state.slot(fn, r) for r in _regs(ins.operands[0]))
                if len(ins.operands) > 1 and isinstance(ins.operands[1], Vec):
                    a_regs.update(eng.state.slot(fn, r) for r in _regs(ins.operands[1]))
        self.slots = sorted(acc)
        self.column = {s: i for i, s in enumerate(self.slots)}
        self.operand_slots = acc | a_regs
        n = eng.geo.nthreads if self.slots else 0
        self.group = np.full((n, len(self.slots)), -1, dtype=np.int32)  # group of the product in flight, or -1
        self.issued_at = np.zeros((n, len(self.slots)), dtype=np.int32)  # its pc
        self.fenced = np.zeros(n, dtype=np.bool_)

    def issue(self, pc: int, threads: np.ndarray, slots: list[int]) -> None:
        cols = [self.column[s] for s in slots]
        group = self.eng.async_copies.wgmma_committed[threads]
        self.group[np.ix_(threads, cols)] = group[:, None]
        self.issued_at[np.ix_(threads, cols)] = pc

    def wait(self, threads: np.ndarray, newest: int) -> None:
        limit = self.eng.async_copies.wgmma_committed[threads] - newest
        rows = self.group[threads]
        rows[rows < limit[:, None]] = -1
        self.group[threads] = rows


def guard_registers(eng, handlers: list) -> None:
    """Wrap the handler of every instruction (other than a product) that touches an accumulator or A register of
    a `wgmma.mma_async`: an access to an accumulator in flight is a finding; a write unfences the thread."""
    state = eng.wgmma
    if not state.slots:
        return
    program = eng.program
    for pc, ins in enumerate(program.instructions):
        if ins.opcode == "wgmma":
            continue
        fn = program.owner[pc]
        touched = [(i, eng.state.slot(fn, r)) for i, op in enumerate(ins.operands) for r in _regs(op)]
        cols = sorted({state.column[s] for _, s in touched if s in state.column})
        writes = ins.opcode not in ("st", "red", "bra", "setp") and any(i == 0 and s in state.operand_slots for i, s in touched)
        if cols or writes:
            handlers[pc] = _guarded(eng, pc, handlers[pc], np.array(cols, dtype=np.int64), writes)


def _guarded(eng, pc: int, handler, cols: np.ndarray, writes: bool):
    state = eng.wgmma

    def run(idx):
        if len(cols):
            early = (state.group[np.ix_(idx, cols)] >= 0).any(axis=1)
            if early.any():
                lane = int(np.argmax(early))
                g = int(idx[lane])
                col = int(cols[np.argmax(state.group[g, cols] >= 0)])
                sites = (make_site(eng.program, eng.geo, int(state.issued_at[g, col]), g, "wgmma.mma_async"),
                         make_site(eng.program, eng.geo, pc, g, "register access"))  # fmt: skip
                eng.findings.add(Finding(KIND, ERROR, EARLY, sites), int(early.sum()))
        if writes:
            state.fenced[idx] = False
        return handler(idx)

    return run


def wgmma(dec):
    """The handler of one `wgmma.*` instruction (module docstring)."""
    ins = dec.ins
    mods = ins.modifiers
    state = dec.eng.wgmma
    nxt = dec.pc + 1
    if "fence" in mods:
        dec.operands(0)

        def fence(idx):
            state.fenced[idx] = True
            return nxt

        return fence
    if "commit_group" in mods:
        dec.operands(0)
        committed = dec.eng.async_copies.wgmma_committed

        def commit(idx):
            committed[idx] += 1
            return nxt

        return commit
    if "wait_group" in mods:
        (newest,) = dec.operands(1)
        if not (isinstance(newest, Imm) and newest.kind == "int" and newest.value >= 0):
            raise UserError(f"the group count of `{ins.text}` must be a non-negative integer constant")
        n = int(newest.value)
        copies = dec.eng.async_copies

        def wait(idx):
            state.wait(idx, n)
            copies.wgmma_wait(idx, n)
            return nxt

        return wait
    if "mma_async" in mods:
        return _product(dec)
    raise UserError(f"the simulator does not support `{ins.text}`")


def _immediate(dec, op, allowed: tuple[int, ...], what: str) -> int:
    if not (isinstance(op, Imm) and op.kind == "int" and op.value in allowed):
        raise UserError(f"{what} of `{dec.ins.text}` must be the immediate {' or '.join(map(str, allowed))}")
    return int(op.value)


def _types(ins) -> tuple[int, str, str, str]:
    """(N, D's type, A's, B's) of a product, or a UserError naming what the simulator does not run."""
    unknown = [m for m in ins.modifiers if m not in _ALLOWED]
    shapes = [m for m in ins.modifiers if m in _SHAPES]
    types = [m for m in ins.modifiers if m in _TYPES]
    shape = _SHAPES[shapes[0]] if len(shapes) == 1 else None
    if not unknown and shape is not None and len(types) == 3:
        dtype, atype, btype = types
        paired = atype == btype or any({atype, btype} <= kinds for kinds in wg.MIXED)
        saturation = "satfinite" not in ins.modifiers or atype in tc.INTEGER_TYPES  # integer sums only
        if paired and saturation and dtype in wg.ACCUMULATORS.get(atype, ()) and shape[1] == wg.K_OF[atype]:
            return shape[0], dtype, atype, btype
    listed = ", ".join("." + m for m in unknown)
    why = f"modifier(s) {listed}" if unknown else (
        "only m64nNk16 with f16 or bf16 inputs (.f32 accumulators, or .f16 for f16), m64nNk8 with tf32 inputs, "
        "and m64nNk32 with e4m3/e5m2 inputs (.f32 or .f16 accumulators) or s8/u8 inputs (.s32)"
    )
    raise UserError(f"the simulator does not support `{ins.text}`: {why}")


def _product(dec):
    ins = dec.ins
    n, dtype, etype, btype = _types(ins)
    ops = ins.operands
    a_regs = isinstance(ops[1], Vec) if len(ops) > 1 else False
    transposable = tc.ELEMENT_BITS[etype] == 16  # only 16-bit operands have imm-trans operands
    integer = etype in tc.INTEGER_TYPES  # no imm-scale operands either
    dec.operands(4 if integer else (7 if a_regs else 8) if transposable else 6)
    d_frag = wg.d_fragment(n, dtype)
    write_d = [dec.writer(r, "b32") for r in _regs(ops[0])]
    read_d = [dec.reader(r, "b32") for r in _regs(ops[0])]
    if len(write_d) != d_frag.registers:
        raise UserError(f"`{ins.text}`: D needs {d_frag.registers} registers, found {len(write_d)}")
    scale_d = ops[3]
    scale_a = 1 if integer else _immediate(dec, ops[4], (1, -1), "imm-scale-a")
    scale_b = 1 if integer else _immediate(dec, ops[5], (1, -1), "imm-scale-b")
    trans_a, trans_b = [0, 0, *(_immediate(dec, op, (0, 1), "imm-trans") for op in ops[6:])][-2:]
    saturate = "satfinite" in ins.modifiers
    read_scale = dec.reader(scale_d, "pred") if isinstance(scale_d, Reg) else None
    if read_scale is None and not isinstance(scale_d, Imm):
        raise UserError(f"`{ins.text}`: scale-d must be a predicate or an immediate")
    a_frag = wg.a_fragment(etype) if a_regs else None
    read_a = fragment_readers(dec, ops[1], a_frag, "the A fragment") if a_regs else None
    read_a_desc = None if a_regs else dec.reader(ops[1], "b64")
    read_b_desc = dec.reader(ops[2], "b64")
    eng = dec.eng
    state = eng.wgmma
    pc, what = dec.pc, "wgmma.mma_async"
    d_slots = [eng.state.slot(dec.fn, r) for r in _regs(ops[0])]
    dec._strength = (False, None, None)

    def compute(go, masks, present):
        if not whole_warps(dec, go, what):
            return
        unfenced = ~state.fenced[go]
        if unfenced.any():
            g = int(go[np.argmax(unfenced)])
            eng.findings.add(Finding(KIND, ERROR, UNFENCED, (make_site(eng.program, eng.geo, pc, g, what),)), int(unfenced.sum()))
        slots = WarpSlots(dec, go)
        nwarps = len(slots.warps)
        leader = np.zeros(nwarps, dtype=np.int64)
        leader[slots.row] = go  # any lane of the warp: descriptors are warp-uniform
        b = _operand(dec, go, slots, read_b_desc, np.arange(n), n, btype, trans_b)  # [warps, n, K]
        if a_regs:
            a = tc.decode(a_frag.gather(slots.gather(read_a)), etype)
        else:
            warp_in_group = (eng.geo.warp_of[leader] % wg.WARPS).astype(np.int64)
            a = _operand(dec, go, slots, read_a_desc, None, wg.ROWS, etype, trans_a, warp_in_group)
        if not integer:
            a = a * np.float32(scale_a)
            b = b * np.float32(scale_b)
        c = tc.decode(d_frag.gather(slots.gather(read_d)), dtype)
        if read_scale is not None:
            keep = np.zeros(nwarps, dtype=np.bool_)
            keep[slots.row] = read_scale(go).astype(np.bool_)
            c = np.where(keep[:, None, None], c, c.dtype.type(0))
        elif not scale_d.value:
            c = np.zeros_like(c)
        d = wg.product(a, b, c, saturate)
        slots.scatter(write_d, d_frag.scatter(tc.encode(d, dtype)), "b32")
        state.issue(pc, go, d_slots)

    return dec.collective(compute, None, what)


def _operand(dec, go, slots, read_desc, rows, nrows: int, etype: str, mn_major: int, warp_in_group=None):
    """An operand read through its descriptor (`sim.wgmma`, K-major or MN-major): `[warps, nrows, 16]` values;
    its 16-byte chunks are read events of the warp's lanes (chunk j by lane j % 32) and stay in flight until
    the wait (`sim.async_copies`)."""
    eng = dec.eng
    descs = np.zeros(len(slots.warps), dtype=np.uint64)
    descs[slots.row] = read_desc(go).astype(np.uint64)
    out = np.zeros((len(slots.warps), nrows, wg.K_OF[etype]), dtype=np.int64 if etype in tc.INTEGER_TYPES else np.float32)
    for w in range(len(slots.warps)):
        r = rows if rows is not None else wg.ROWS * int(warp_in_group[w]) + np.arange(nrows)
        chunks = wg.Descriptor.decode(int(descs[w])).chunk_addresses(r, bool(mn_major))
        addrs = chunks.reshape(-1)
        lanes_of_warp = go[slots.row == w][np.argsort(slots.lane[slots.row == w])]
        piece = np.arange(len(addrs))
        threads = lanes_of_warp[piece % tc.WARP]
        acc = eng.mem.resolve(Space.SHARED, addrs, threads, eng.geo.block_of[threads], MAX_COPY)
        ok = dec.check_access(acc, threads, "read", MAX_COPY)
        data = eng.mem.load(acc, 1, MAX_COPY).reshape(*chunks.shape, MAX_COPY)
        emit_by_piece(dec, AccessKind.READ, threads, acc, ok, piece // tc.WARP)
        if eng.proxy_fences.active:
            eng.proxy_fences.check_read(dec.pc, threads[ok], acc.canonical[ok], MAX_COPY)
        eng.async_copies.issue_operands(dec.pc, threads[ok], acc.canonical[ok])
        out[w] = wg.chunks_to_matrix(data, etype, bool(mn_major))
    return out
