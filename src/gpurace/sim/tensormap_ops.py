"""Decoding of the instructions that edit tensor maps in memory and fence them (sm_90a) into handlers
(`sim.execute.Decoder`).

Forms simulated, as the PTX ISA writes them:

- `tensormap.replace.tile.FIELD.SPACE.b1024.TYPE [addr], new_val` and `... [addr], ord, new_val`, SPACE `.global`
  or `.shared::cta`: one field of the 128-byte map at addr is replaced (`tensor_maps.replace_field`):
  `.global_address` and `.rank` (the rank minus one); per dimension ord (an immediate) `.box_dim`,
  `.global_dim`, `.global_stride` (the byte stride of dimension ord + 1) and `.element_stride`; and, from an
  immediate in the ISA's table, `.elemtype`, `.interleave_layout`, `.swizzle_mode` and `.fill_mode`. The
  instruction is a weak generic-proxy read and write of the whole object (two events of its thread, piece by
  piece), so a TMA that uses the map afterwards needs the tensormap proxy fences (`sim.tensormap_proxy`).
  Refused by name: `.swizzle_atomicity` (sm_100), and the values the simulator does not follow
  (`tensor_maps.enumerated_field`).
- `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.SCOPE.sync.aligned [dst], [src], 128`:
  the map at src (shared) is copied to dst (global), then the thread releases its generic writes to the
  tensormap proxy. The warp executes it together: lanes of a warp that name the same (dst, src) make one copy,
  by the lowest of them, and every lane releases.
- `fence.proxy.tensormap::generic.release.SCOPE` and `fence.proxy.tensormap::generic.acquire.SCOPE [addr], 128`:
  the two halves of the proxy fence (`sim.tensormap_proxy`); they order nothing between threads, and the
  acquire's address is not accessed (one that holds no map acquires nothing).

A map that is not in the simulator's layout (`sim.tensor_maps`) is refused when an instruction edits it, except
128 zeroed bytes, which are the map whose every field is zero (`tensor_maps.ZERO_MAP`): Triton builds the maps
of its device-side tensor descriptors that way, zeroing a shared-memory object and replacing each field.
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Imm
from gpurace.sim.bulk_copies import emit_by_piece, lanes, number_within
from gpurace.sim.events import AccessKind
from gpurace.sim.memory import Space
from gpurace.sim.tensor_maps import (
    FIELD_VALUES,
    MAGIC,
    ORDINALS,
    SIZE,
    ZERO_MAP,
    check_magic,
    enumerated_field,
    replace_field,
)

_SCOPES = ("cta", "cluster", "gpu", "sys")
_PIECE = 16
_FIELDS = ("global_address", "rank", *ORDINALS, *FIELD_VALUES)
_REPLACE_SPACES = {"global": Space.GLOBAL, "shared::cta": Space.SHARED, "shared": Space.SHARED}


def tensormap(dec):
    """The handler of one `tensormap.*` instruction (module docstring)."""
    mods = dec.ins.modifiers
    if "replace" in mods:
        return _replace(dec)
    if "cp_fenceproxy" in mods:
        return _copy_release(dec)
    raise UserError(f"the simulator does not support `{dec.ins.text}`: not a form of tensormap it knows")


def _immediate(dec, op, what: str) -> int:
    if not (isinstance(op, Imm) and op.kind == "int"):
        raise UserError(f"`{dec.ins.text}`: {what} must be an integer constant")
    return int(op.value)


def _expect_modifiers(dec, wanted: frozenset[str]) -> None:
    extra = [m for m in dec.ins.modifiers if m not in wanted]
    if extra:
        listed = ", ".join("." + m for m in extra)
        raise UserError(f"the simulator does not support `{dec.ins.text}`: modifier(s) {listed}")


def _objects(dec, space: Space, addrs: np.ndarray, threads: np.ndarray, write: bool):
    """(Access of the 128-byte objects, ok mask) at `addrs` of `space` for `threads`, bad lanes reported."""
    eng = dec.eng
    acc = eng.mem.resolve(space, addrs, threads, eng.geo.block_of[threads], SIZE, write=write)
    return acc, dec.check_access(acc, threads, "tensor map " + ("write" if write else "read"), SIZE)


def emit_object(dec, kind: AccessKind, space: Space, addrs: np.ndarray, threads: np.ndarray) -> None:
    """The access events of `threads`' 128-byte objects at `addrs` of `space`, in 16-byte pieces (the unit of
    bulk copies' events)."""
    eng = dec.eng
    count = np.full(len(threads), SIZE // _PIECE)
    lane = np.repeat(np.arange(len(threads)), count)
    number = number_within(count)
    t = threads[lane]
    acc = eng.mem.resolve(space, addrs[lane] + (number * _PIECE).astype(np.uint64), t, eng.geo.block_of[t], _PIECE,
                          write=kind != AccessKind.READ)  # fmt: skip
    emit_by_piece(dec, kind, t, acc, acc.ok, number, _PIECE)


def _replace(dec):
    ins = dec.ins
    field = dec.one_of(_FIELDS + ("swizzle_atomicity",), "tensormap field")
    if field == "swizzle_atomicity":
        raise UserError(f"the simulator does not support `{ins.text}`: .swizzle_atomicity is sm_100's")
    space = _REPLACE_SPACES[dec.one_of(tuple(_REPLACE_SPACES), "state space")]
    wide = field in ("global_address", "global_stride")
    _expect_modifiers(dec, frozenset({"replace", "tile", field, "b1024", "b64" if wide else "b32", *_REPLACE_SPACES}))
    if not {"tile", "b1024", "b64" if wide else "b32"} <= set(ins.modifiers):
        raise UserError(f"`{ins.text}`: tensormap.replace.tile.{field} is .b1024.{'b64' if wide else 'b32'}")
    ordinal = 0
    if field in ORDINALS:
        addr_op, ord_op, value_op = dec.operands(3)
        ordinal = _immediate(dec, ord_op, "the ordinal")
        if not 0 <= ordinal < ORDINALS[field]:
            raise UserError(f"`{ins.text}`: the ordinal of .{field} is 0 to {ORDINALS[field] - 1}")
    else:
        addr_op, value_op = dec.operands(2)
    what = f"{ins.where()}: `{ins.text}`"
    if field in FIELD_VALUES:
        constant = _immediate(dec, value_op, f"the new value of .{field}")
        enumerated_field(field, constant, what)

        def values(idx):
            return np.full(len(idx), constant, dtype=np.uint64)

    else:
        values = dec.reader(value_op, "u64" if wide else "u32")
    address = dec.address(addr_op)
    eng = dec.eng
    dec._strength = (False, None, None)
    nxt = dec.pc + 1

    def replace(idx):
        addrs = address(idx)
        acc, ok = _objects(dec, space, addrs, idx, write=True)
        if not ok.any():
            return nxt
        t, a, acc = idx[ok], addrs[ok], lanes(acc, ok)
        data = eng.mem.load(acc, 1, SIZE).reshape(len(t), SIZE)
        zeroed = ~data.any(axis=1)
        data[zeroed] = np.frombuffer(ZERO_MAP, dtype=np.uint8)
        foreign = (data[:, : len(MAGIC)] != np.frombuffer(MAGIC, dtype=np.uint8)).any(axis=1)
        if foreign.any():
            check_magic(data[foreign][0], f"{what}: the object at its address")
        emit_object(dec, AccessKind.READ, space, a, t)
        replace_field(data, field, ordinal, values(t), what)
        emit_object(dec, AccessKind.WRITE, space, a, t)
        eng.mem.store(acc, 1, data)
        return nxt

    return replace


def _copy_release(dec):
    ins = dec.ins
    scope = dec.one_of(_SCOPES, "scope")
    wanted = frozenset({"cp_fenceproxy", "global", "shared::cta", "tensormap::generic", "release", scope, "sync", "aligned"})
    _expect_modifiers(dec, wanted)
    if set(ins.modifiers) != wanted:
        raise UserError(f"`{ins.text}` is tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.SCOPE.sync.aligned")
    dst_op, src_op, size_op = dec.operands(3)
    if _immediate(dec, size_op, "the size") != SIZE:
        raise UserError(f"`{ins.text}`: the size of tensormap.cp_fenceproxy is 128")
    dst, src = dec.address(dst_op), dec.address(src_op)
    eng = dec.eng
    proxy = eng.tensormap_proxy
    dec._strength = (False, None, None)
    nxt = dec.pc + 1

    def copy_release(idx):
        daddr, saddr = dst(idx), src(idx)
        # one copy per (warp, dst, src), by its lowest lane (idx is in ascending order)
        key = np.stack([eng.geo.warp_of[idx].astype(np.uint64), daddr, saddr], axis=1)
        _, first = np.unique(key, axis=0, return_index=True)
        copier = np.sort(first)
        t, d, s = idx[copier], daddr[copier], saddr[copier]
        sacc, sok = _objects(dec, Space.SHARED, s, t, write=False)
        dacc, dok = _objects(dec, Space.GLOBAL, d, t, write=True)
        go = sok & dok
        if go.any():
            data = eng.mem.load(lanes(sacc, go), 1, SIZE).reshape(int(go.sum()), SIZE)
            emit_object(dec, AccessKind.READ, Space.SHARED, s[go], t[go])
            emit_object(dec, AccessKind.WRITE, Space.GLOBAL, d[go], t[go])
            eng.mem.store(lanes(dacc, go), 1, data)
        proxy.release(idx, scope)
        return nxt

    return copy_release


def proxy_fence(dec):
    """`fence.proxy.tensormap::generic.release.SCOPE` / `.acquire.SCOPE [addr], 128` (`sim.tensormap_proxy`)."""
    ins = dec.ins
    scope = dec.one_of(_SCOPES, "scope")
    sem = dec.one_of(("release", "acquire"), "semantics")
    _expect_modifiers(dec, frozenset({"proxy", "tensormap::generic", sem, scope}))
    proxy = dec.eng.tensormap_proxy
    nxt = dec.pc + 1
    if sem == "release":
        dec.operands(0)

        def release(idx):
            proxy.release(idx, scope)
            return nxt

        return release
    addr_op, size_op = dec.operands(2)
    if _immediate(dec, size_op, "the size") != SIZE:
        raise UserError(f"`{ins.text}`: the size of fence.proxy.tensormap::generic.acquire is 128")
    address = dec.address(addr_op)
    eng = dec.eng

    def acquire(idx):
        # a fence, not an access: an address that is no map's acquires nothing (CUTLASS's epilogue warps that
        # issue no TMA store acquire a null map)
        acc = eng.mem.resolve(Space.GENERIC, address(idx), idx, eng.geo.block_of[idx], SIZE)
        ok = acc.ok
        proxy.acquire(idx[ok], acc.canonical[ok], SIZE, scope)
        return nxt

    return acquire
