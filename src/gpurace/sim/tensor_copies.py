"""Decoding of the tensor bulk copies (`cp.async.bulk.tensor`, TMA, sm_90) into handlers (`sim.execute.Decoder`).

Forms simulated, tile mode, 1 to 5 dimensions:

- `cp.async.bulk.tensor.Nd.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes{.L2::cache_hint}
  [dst], [tensorMap, {c0, ...}], [mbar]` (and `.shared::cta` destinations): the box of the tensor map
  (`sim.tensor_maps`) at the coordinates is read from global memory, elements outside the tensor as zeros,
  and lands densely in shared memory, completing the box's bytes on the mbarrier's tx-count;
- `cp.async.bulk.tensor.Nd.global.shared::cta{.tile}.bulk_group [tensorMap, {c0, ...}], [src]`: the dense box
  in shared memory is written to the tensor, elements outside it left alone, in the thread's bulk group;
- `.multicast::cluster [dst], [tensorMap, {c0, ...}], [mbar], ctaMask` loads: the box lands at the same offset in
  the shared memory of every block of the cluster whose `%cluster_ctarank` is a bit of ctaMask, completing its
  bytes on the mbarrier at the same offset in each (`bulk_copies.multicast_targets`);
- `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp{.tile}.bulk_group [tensorMap, {c0, ...}], [src]`: each
  element of the box inside the tensor is reduced by `.redOp` in the tensor map's element type, an atomic of its
  own (`sim.bulk_reductions`; the PTX ISA's table of operations and element types applies).

With a swizzled tensor map the box's 16-byte chunks land at (and a store reads them from) the shared addresses
the swizzle gives (`tensor_maps.swizzled` of the shared address itself, so a box that starts mid-pattern
continues the pattern).
Both are bulk copies as `sim.bulk_copies` describes them (in flight in `sim.async_copies`' table, completing
through the mbarrier or `cp.async.bulk.wait_group`; the store's read of shared memory is an async-proxy read).
Each global element is an access of its own (the box's elements lie apart in memory), one event per element
of the box. Not checked: a write to a load's global source while the load is in flight. Refused by name:
`.im2col` and the other load modes, and `.cta_group`.
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Reg, Vec
from gpurace.sim.async_copies import BULK_GROUP, BULK_MBARRIER, MAX_COPY
from gpurace.sim.bulk_copies import (
    COMPLETE_TX,
    MULTICAST,
    SPACES,
    barriers_at,
    copy_form,
    emit_by_piece,
    issue,
    multicast_targets,
    pieces,
    read_pieces,
)
from gpurace.sim.bulk_reductions import OPERATIONS, Reduction
from gpurace.sim.events import AccessKind
from gpurace.sim.memory import Space
from gpurace.sim.tensor_maps import SIZE, TYPES, TensorMap, swizzled
from gpurace.sim.tensormap_ops import emit_object

_DIMS = {f"{n}d": n for n in range(1, 6)}
_MODIFIERS = (
    frozenset({"async", "bulk", "tensor", "tile", COMPLETE_TX, "bulk_group", "L2::cache_hint", MULTICAST})
    | frozenset(SPACES) | frozenset(_DIMS)
)  # fmt: skip
_REDUCE_MODIFIERS = _MODIFIERS - {COMPLETE_TX, MULTICAST} | {"reduce"} | frozenset(OPERATIONS)
_REDUCTION_TYPES = {
    "add": frozenset({"u32", "s32", "u64", "f32", "f16", "bf16"}),
    "min": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16"}),
    "max": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16"}),
    "inc": frozenset({"u32"}),
    "dec": frozenset({"u32"}),
    "and": frozenset({"b32", "b64"}),
    "or": frozenset({"b32", "b64"}),
    "xor": frozenset({"b32", "b64"}),
}
"""The element types of each tensor reduction (the PTX ISA's table for `cp.reduce.async.bulk.tensor`)."""
_PTX_TYPES = {"i8": "s8", "i16": "s16", "i32": "s32", "i64": "s64"}
"""Tensor map element types as PTX names them (the others are spelled alike)."""


def tensor(dec):
    """The handler of one `cp.async.bulk.tensor` instruction (module docstring)."""
    ins = dec.ins
    reduce = "reduce" in ins.modifiers
    dst_space, src_space, completion = copy_form(dec, _REDUCE_MODIFIERS if reduce else _MODIFIERS)
    rank = _DIMS[dec.one_of(tuple(_DIMS), "dimension count")]
    hint = "L2::cache_hint" in ins.modifiers
    multicast = MULTICAST in ins.modifiers
    dec._strength = (False, None, None)
    if completion == COMPLETE_TX:
        if src_space != Space.GLOBAL or (multicast and dst_space != Space.SHARED_CLUSTER):
            raise UserError(f"the simulator does not support `{ins.text}`: not a form of cp.async.bulk.tensor it knows")
        ops = dec.operands(3 + multicast + hint)
        return _load(dec, rank, dst_space, ops[0], ops[1], ops[2], ops[3] if multicast else None)
    dec.operands(3 if hint else 2)
    op = dec.one_of(OPERATIONS, "reduction operation") if reduce else None
    return _store(dec, rank, ins.operands[0], ins.operands[1], op)


def _map_and_coords(dec, op, rank: int):
    """idx -> (tensor map address, coordinates (lanes, rank)) of a `[tensorMap, {c0, ...}]` operand."""
    if not (isinstance(op, Vec) and len(op.elems) == 2 and isinstance(op.elems[0], Reg) and isinstance(op.elems[1], Vec)):
        raise UserError(f"`{dec.ins.text}` needs [tensorMap, {{c0, ...}}] with the tensor map's address in a register")
    coords = op.elems[1].elems
    if len(coords) != rank:
        raise UserError(f"`{dec.ins.text}` is {rank}d and needs {rank} coordinates, found {len(coords)}")
    read_map = dec.reader(op.elems[0], "u64")
    readers = [dec.reader(c, "s32") for c in coords]
    return lambda idx: (read_map(idx).astype(np.uint64), np.stack([r(idx).astype(np.uint32).view(np.int32).astype(np.int64) for r in readers], axis=1))


def _maps(dec, idx, addrs, rank: int):
    """(lanes, TensorMap) for each distinct tensor map the lanes name (read from its 128 bytes in memory).

    A map in global or shared memory is read by the copying thread (read events, piece by piece) through the
    tensormap proxy (`sim.tensormap_proxy`); one passed as a kernel parameter is neither."""
    eng = dec.eng
    acc = eng.mem.resolve(Space.GENERIC, addrs, idx, eng.geo.block_of[idx], SIZE)
    ok = dec.check_access(acc, idx, "tensor map read", SIZE)
    data = eng.mem.load(acc, 1, SIZE).reshape(len(idx), SIZE)
    in_memory = ok & ((acc.space == int(Space.GLOBAL)) | (acc.space == int(Space.SHARED)))
    if in_memory.any():
        emit_object(dec, AccessKind.READ, Space.GENERIC, addrs[in_memory], idx[in_memory])
        if eng.tensormap_proxy.active:
            shared = acc.space[in_memory] == int(Space.SHARED)
            eng.tensormap_proxy.check_use(dec.pc, idx[in_memory], acc.canonical[in_memory], shared)
    out = []
    for a in np.unique(addrs[ok]).tolist():
        sel = np.flatnonzero(ok & (addrs == np.uint64(a)))
        tm = TensorMap.decode(bytes(data[sel[0]]), f"{dec.ins.where()}: the tensor map of `{dec.ins.text}`")
        if tm.rank != rank:
            raise UserError(f"{dec.ins.where()}: `{dec.ins.text}` uses a tensor map of {tm.rank} dimensions")
        out.append((sel, tm))
    return out


def _shared_offsets(tm: TensorMap, base: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Shared addresses of the box's bytes at `offset` from the copies' shared addresses `base`, swizzled when
    the map says so. The swizzle permutes the bits of the shared address itself, as `wgmma`'s descriptors
    read them (`sim.wgmma`): a box that starts past the pattern's repeat (CUTLASS puts its tiles 384 bytes
    into its shared storage) starts mid-pattern."""
    return swizzled(base + offset, tm.swizzle)


def _load(dec, rank, dst_space, dst_op, map_op, bar_op, mask_op):
    eng = dec.eng
    daddr, baddr = dec.address(dst_op), dec.address(bar_op)
    masks = dec.reader(mask_op, "u16") if mask_op is not None else None
    resolve_barrier = barriers_at(dec, dst_space)
    operand = _map_and_coords(dec, map_op, rank)
    nxt = dec.pc + 1

    def load(idx):
        maps, coords = operand(idx)
        lanes, dst, bar = np.arange(len(idx)), daddr(idx), baddr(idx)
        if masks is not None:
            lanes, dst, bar = multicast_targets(masks(idx), dst, bar)
        usable, barriers = resolve_barrier(idx[lanes], bar)
        # a copy towards no usable mbarrier is not made (a finding says why)
        lanes, dst, barriers = lanes[usable], dst[usable], barriers[usable]
        go = np.unique(lanes)
        for sel, tm in _maps(dec, idx[go], maps[go], rank):
            sel = go[sel]
            threads = idx[sel]
            addrs, inside = tm.elements(coords[sel])
            tile = np.zeros((len(sel), tm.box_bytes), dtype=np.uint8)
            lane, elem = np.nonzero(inside)
            if len(lane):
                t = threads[lane]
                acc = eng.mem.resolve(Space.GLOBAL, addrs[lane, elem], t, eng.geo.block_of[t], tm.esize)
                ok = dec.check_access(acc, t, "read", tm.esize)
                values = eng.mem.load(acc, 1, tm.esize).reshape(len(t), tm.esize)
                tile[lane[:, None], elem[:, None] * tm.esize + np.arange(tm.esize)[None, :]] = np.where(ok[:, None], values, 0)
                emit_by_piece(dec, AccessKind.READ, t, acc, ok, elem, tm.esize)
            # every destination of a lane of this map takes the lane's box, piece by piece
            target = np.flatnonzero(np.isin(lanes, sel))
            box = np.searchsorted(sel, lanes[target])
            npieces = tm.box_bytes // MAX_COPY
            rows = np.repeat(np.arange(len(target)), npieces)
            piece = np.tile(np.arange(npieces), len(target))
            offset = (piece * MAX_COPY).astype(np.uint64)
            issue(dec, BULK_MBARRIER, threads[box[rows]], dst_space, _shared_offsets(tm, dst[target][rows], offset),
                  np.ones(len(rows), dtype=np.bool_), np.zeros(len(rows), dtype=np.uint64), Space.GLOBAL,
                  tile.reshape(len(sel), npieces, MAX_COPY)[box[rows], piece], barriers[target][rows], src_size=0)  # fmt: skip
        return nxt

    return load


def _store(dec, rank, map_op, src_op, op: str | None):
    """A tile store, or with `op` a tile reduction (`cp.reduce.async.bulk.tensor`) in the tensor map's type."""
    saddr = dec.address(src_op)
    operand = _map_and_coords(dec, map_op, rank)
    reductions = dec.eng.async_copies.reductions
    pc, nxt = dec.pc, dec.pc + 1
    kind = AccessKind.WRITE if op is None else AccessKind.ATOMIC

    def store(idx):
        maps, coords = operand(idx)
        for sel, tm in _maps(dec, idx, maps, rank):
            if op is not None:
                reductions[pc] = _reduction(dec, op, tm)
            threads = idx[sel]
            lane, offset, number = pieces(np.full(len(sel), tm.box_bytes, dtype=np.int64))
            shared = _shared_offsets(tm, saddr(threads)[lane], offset.astype(np.uint64))
            src_ok, src_canon, data = read_pieces(dec, Space.SHARED, shared, threads[lane], number)
            addrs, inside = tm.elements(coords[sel])
            per_piece = MAX_COPY // tm.esize
            # element e of lane l lies in piece l * npieces + e // per_piece, at byte (e % per_piece) * esize
            npieces = tm.box_bytes // MAX_COPY
            el_lane, elem = np.nonzero(inside)
            piece = el_lane * npieces + elem // per_piece
            at = (elem % per_piece) * tm.esize
            values = np.zeros((len(elem), MAX_COPY), dtype=np.uint8)
            values[:, : tm.esize] = data[piece[:, None], at[:, None] + np.arange(tm.esize)[None, :]]
            issue(dec, BULK_GROUP, threads[el_lane], Space.GLOBAL, addrs[el_lane, elem], src_ok[piece],
                  src_canon[piece] + at.astype(np.uint64), Space.SHARED, values, None, tm.esize, tm.esize, kind)  # fmt: skip
        return nxt

    return store


def _reduction(dec, op: str, tm: TensorMap) -> Reduction:
    """The reduction `op` on the tensor map's elements; a type the ISA's table lacks for `op` is refused. An
    instruction's reductions in flight must all have one type (they are looked up by instruction)."""
    name = next(n for n, (_, code) in TYPES.items() if code == tm.code)
    ptx = _PTX_TYPES.get(name, name)
    bits = f"b{8 * tm.esize}"
    rtype = bits if op in ("and", "or", "xor") and ptx[0] in "us" else ptx
    if rtype not in _REDUCTION_TYPES[op]:
        raise UserError(
            f"{dec.ins.where()}: `{dec.ins.text}` on a tensor map of {name} elements: cp.reduce.async.bulk.tensor has "
            f"no .{op} on .{rtype}"
        )
    reduction = Reduction(op, rtype, ftz=False)
    known = dec.eng.async_copies.reductions.get(dec.pc)
    if known is not None and known != reduction and (dec.eng.async_copies.copies.pc == dec.pc).any():
        raise UserError(
            f"{dec.ins.where()}: `{dec.ins.text}` reduces elements of two types while the first are in flight: "
            "not supported"
        )
    return reduction
