"""Decoding of the bulk asynchronous copies (`cp.async.bulk`, sm_90) into handlers (`sim.execute.Decoder`).

Forms simulated, as the PTX ISA writes them:

- `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{.L2::cache_hint} [dst], [src], size, [mbar]`
  (and `.shared::cta` destinations): global to shared memory, completing through the mbarrier's tx-count;
- `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]`: shared
  memory of this block to (distributed) shared memory of a block of the cluster;
- `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [dst], [src], size, [mbar],
  ctaMask`: global memory to the same offset in every block of the cluster that ctaMask names, each completing
  on its mbarrier at the same offset (`multicast_targets`);
- `cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint} [dst], [src], size`: shared to global memory,
  completing through `cp.async.bulk.commit_group` and `cp.async.bulk.wait_group{.read} N`;
- `cp.async.bulk.prefetch{.tensor}...`: a hint that moves data into the L2 cache, a no-op for memory;
- `cp.async.bulk.tensor` (TMA): `sim.tensor_copies`.

The size must be a multiple of 16 and both addresses 16-byte aligned; a misaligned address is a
`misaligned-access` finding, a size that is not a multiple of 16 stops the run (exit status 2). The copy is split
into 16-byte pieces, its unit, which go into `sim.async_copies`' table of copies in flight: the source is read at
issue (a read event of the issuing thread per piece; a write to it before completion races with the copy), and
the destination is written at completion (the mbarrier phase, or the wait for the bulk group). A copy that reads
shared memory is an async-proxy read (`sim.proxy_fences`). The bulk reductions (`cp.reduce.async.bulk`,
`sim.bulk_reductions`) are made here too (`copier`). Refused by name: `.cp_mask` and `.ignore_oob`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Imm
from gpurace.sim.async_copies import BULK_GROUP, BULK_MBARRIER, MAX_COPY
from gpurace.sim.clusters import map_shared
from gpurace.sim.events import AccessKind
from gpurace.sim.mbarriers import OBJECT_SIZE
from gpurace.sim.memory import Space

SPACES = {"global": Space.GLOBAL, "shared": Space.SHARED, "shared::cta": Space.SHARED, "shared::cluster": Space.SHARED_CLUSTER}
COMPLETE_TX = "mbarrier::complete_tx::bytes"
MULTICAST = "multicast::cluster"
_COPY_MODIFIERS = frozenset({"async", "bulk", COMPLETE_TX, "bulk_group", "L2::cache_hint", MULTICAST}) | frozenset(SPACES)
_FORMS = {
    (Space.SHARED_CLUSTER, Space.GLOBAL, COMPLETE_TX),
    (Space.SHARED, Space.GLOBAL, COMPLETE_TX),
    (Space.SHARED_CLUSTER, Space.SHARED, COMPLETE_TX),
    (Space.GLOBAL, Space.SHARED, "bulk_group"),
}


def bulk(dec):
    """The handler of one `cp.async.bulk.*` instruction (module docstring)."""
    ins = dec.ins
    mods = ins.modifiers
    if "prefetch" in mods:
        return dec.op_nop()
    if "commit_group" in mods:
        dec.operands(0)
        return _step(dec, dec.eng.async_copies.bulk_commit)
    if "wait_group" in mods:
        (newest,) = dec.operands(1)
        if not (isinstance(newest, Imm) and newest.kind == "int" and newest.value >= 0):
            raise UserError(f"the group count of `{ins.text}` must be a non-negative integer constant")
        n, read_only = int(newest.value), "read" in mods
        wait = dec.eng.async_copies.bulk_wait
        return _step(dec, lambda idx: wait(idx, n, read_only))
    return _copy(dec)


def _step(dec, fn):
    nxt = dec.pc + 1

    def step(idx):
        fn(idx)
        return nxt

    return step


def copy_form(dec, allowed: frozenset[str]) -> tuple[Space, Space, str]:
    """(destination space, source space, completion) of a bulk copy; other forms and modifiers are refused."""
    ins = dec.ins
    unknown = [m for m in ins.modifiers if m not in allowed]
    if unknown:
        listed = ", ".join("." + m for m in unknown)
        raise UserError(f"the simulator does not support `{ins.text}`: modifier(s) {listed} not supported for cp.async.bulk")
    spaces = [SPACES[m] for m in ins.modifiers if m in SPACES]
    completion = [m for m in ins.modifiers if m in (COMPLETE_TX, "bulk_group")]
    form = (*spaces, *completion)
    if len(form) != 3 or form not in _FORMS:
        raise UserError(f"the simulator does not support `{ins.text}`: not a form of cp.async.bulk it knows")
    return form  # type: ignore[return-value]


def lanes(acc, mask: np.ndarray):
    """The accesses of `acc` (a `memory.Access`) at `mask`."""
    picked = {f.name: getattr(acc, f.name)[mask] for f in dataclasses.fields(acc) if isinstance(getattr(acc, f.name), np.ndarray)}
    return dataclasses.replace(acc, **picked)


def pieces(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lane, byte offset, number) of every 16-byte piece of copies of `sizes` bytes, lane by lane."""
    count = sizes // MAX_COPY
    lane = np.repeat(np.arange(len(sizes)), count)
    number = number_within(count)
    return lane, (number * MAX_COPY).astype(np.uint64), number


def number_within(count: np.ndarray) -> np.ndarray:
    """0, 1, ..., count[0] - 1, 0, 1, ..., count[1] - 1, ...: the number of each item within its run."""
    return np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)


def read_pieces(dec, space: Space, addrs, threads, number) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read the 16-byte pieces at `addrs` of `space` for `threads`: (ok mask, canonical addresses, data (n, 16)).

    Each piece is a read event of its thread, one event per piece number (an event names each thread once);
    a read of shared memory is an async-proxy read (`sim.proxy_fences`)."""
    eng = dec.eng
    acc = eng.mem.resolve(space, addrs, threads, eng.geo.block_of[threads], MAX_COPY)
    ok = dec.check_access(acc, threads, "read", MAX_COPY)
    data = eng.mem.load(acc, 1, MAX_COPY).reshape(len(threads), MAX_COPY)
    emit_by_piece(dec, AccessKind.READ, threads, acc, ok, number)
    if eng.proxy_fences.active and space != Space.GLOBAL:
        shared = ok & (acc.space != int(Space.GLOBAL))
        eng.proxy_fences.check_read(dec.pc, threads[shared], acc.canonical[shared], MAX_COPY)
    return ok, acc.canonical, data


def emit_by_piece(dec, kind: AccessKind, threads, acc, ok, number, size: int = MAX_COPY) -> None:
    """The access events of the pieces (of `size` bytes), one per piece number."""
    for k in np.unique(number).tolist():
        sel = number == k
        dec.emit_access(kind, threads[sel], lanes(acc, sel), ok[sel], size)


def barriers_at(dec, space: Space):
    """(idx, addresses) -> (usable mask, canonical address) of the mbarrier objects a copy into `space` completes
    on, at `addresses` (of `space`, or generic)."""
    eng = dec.eng
    mb = eng.mbarriers
    pc = dec.pc
    what = f"{dec.ins.opcode}.async.bulk complete_tx"

    def resolve(idx, addrs):
        acc = eng.mem.resolve(space, addrs, idx, eng.geo.block_of[idx], OBJECT_SIZE, write=True)
        ok = dec.check_access(acc, idx, "mbarrier", OBJECT_SIZE)
        ok[ok] = mb.usable(pc, what, idx[ok], acc.canonical[ok])
        return ok, acc.canonical

    return resolve


def issue(dec, mode: int, threads, dst_space: Space, daddrs, src_ok, src_canon, src_space: Space, data, barriers,
          size: int = MAX_COPY, src_size: int = MAX_COPY, kind: AccessKind = AccessKind.WRITE) -> None:  # fmt: skip
    """Put the pieces in flight (`sim.async_copies`): those whose source was read and whose destination resolves.
    `kind`: how the pieces will access their destination (`ATOMIC` for a bulk reduction, `sim.bulk_reductions`)."""
    eng = dec.eng
    copies = eng.async_copies
    dacc = eng.mem.resolve(dst_space, daddrs, threads, eng.geo.block_of[threads], size, write=True)
    go = dec.check_access(dacc, threads, "write", size) & src_ok
    if not go.any():
        return
    t, canon = threads[go], dacc.canonical[go]
    if copies.pending:  # another copy in flight to the same bytes: PTX orders none of them
        copies.check(dec.pc, kind, t, canon, size)
    copies.issue_bulk(dec.pc, mode, t, dacc.space_address[go], dst_space, canon, src_canon[go], src_space, data[go],
                      None if barriers is None else barriers[go], size, src_size)  # fmt: skip
    if barriers is not None:
        for a in np.unique(barriers[go]).tolist():
            eng.mbarriers.settle(a)


def copy_sizes(dec, op):
    """idx -> the byte counts of a copy's `size` operand, which must be multiples of 16."""
    read = dec.reader(op, "u32")
    where, text = dec.ins.where(), dec.ins.text

    def sizes(idx):
        s = read(idx).astype(np.int64)
        bad = s % MAX_COPY != 0
        if bad.any():
            raise UserError(f"{where}: the size of `{text}` is {int(s[bad][0])} at run time: it must be a multiple of 16")
        return s

    return sizes


def _copy(dec):
    return copier(dec, *copy_form(dec, _COPY_MODIFIERS))


def copier(dec, dst_space: Space, src_space: Space, completion: str, kind: AccessKind = AccessKind.WRITE):
    """The handler of a bulk copy (or, with `kind` `ATOMIC`, a bulk reduction) of the form given, with its operands
    `[dst], [src], size{, [mbar]{, ctaMask}}{, cache-policy}`; `.multicast::cluster` copies go to every block of the
    cluster that ctaMask names (`multicast_targets`)."""
    ins = dec.ins
    hint = "L2::cache_hint" in ins.modifiers
    multicast = MULTICAST in ins.modifiers
    if multicast and (dst_space, src_space, completion) != (Space.SHARED_CLUSTER, Space.GLOBAL, COMPLETE_TX):
        raise UserError(
            f"the simulator does not support `{ins.text}`: .multicast::cluster copies global memory to .shared::cluster"
        )
    ops = dec.operands(3 + (completion == COMPLETE_TX) + multicast + hint)
    resolve_barrier = barriers_at(dec, dst_space) if completion == COMPLETE_TX else None
    baddr = dec.address(ops[3]) if completion == COMPLETE_TX else None
    masks = dec.reader(ops[4], "u16") if multicast else None
    daddr, saddr = dec.address(ops[0]), dec.address(ops[1])
    sizes = copy_sizes(dec, ops[2])
    mode = BULK_MBARRIER if completion == COMPLETE_TX else BULK_GROUP
    dec._strength = (False, None, None)
    nxt = dec.pc + 1

    def copy(idx):
        lanes, dst = np.arange(len(idx)), daddr(idx)
        barriers = None
        if masks is not None:
            lanes, dst, bar = multicast_targets(masks(idx), dst, baddr(idx))
        elif baddr is not None:
            bar = baddr(idx)
        if resolve_barrier is not None:
            usable, barriers = resolve_barrier(idx[lanes], bar)
            # a copy towards no usable mbarrier is not made (a finding says why)
            lanes, dst, barriers = lanes[usable], dst[usable], barriers[usable]
        # the source is read once per lane that copies anywhere, whatever the number of its destinations
        copying = np.zeros(len(idx), dtype=np.bool_)
        copying[lanes] = True
        per_lane = np.where(copying, sizes(idx), 0) // MAX_COPY
        lane, offset, number = pieces(per_lane * MAX_COPY)
        threads = idx[lane]
        src_ok, src_canon, data = read_pieces(dec, src_space, saddr(idx)[lane] + offset, threads, number)
        # each destination of a lane takes every piece of its lane's source
        count = per_lane[lanes]
        row = np.repeat((np.cumsum(per_lane) - per_lane)[lanes], count) + number_within(count)
        target = np.repeat(np.arange(len(lanes)), count)
        issue(dec, mode, threads[row], dst_space, dst[target] + offset[row], src_ok[row], src_canon[row], src_space,
              data[row], None if barriers is None else barriers[target], kind=kind)  # fmt: skip
        return nxt

    return copy


def multicast_targets(masks: np.ndarray, dst: np.ndarray, barriers: np.ndarray):
    """(lane, destination address, mbarrier address) of every destination of `.multicast::cluster` copies: the
    same offset in the shared memory of each block whose `%cluster_ctarank` is a bit of the lane's ctaMask, for the
    data and the mbarrier alike (ranks the cluster lacks resolve out of bounds, a finding at the copy)."""
    bits = (masks.astype(np.uint32)[:, None] >> np.arange(16, dtype=np.uint32)[None, :]) & np.uint32(1)
    lane, rank = np.nonzero(bits)
    rank = rank.astype(np.uint64)
    return lane, map_shared(dst[lane], rank), map_shared(barriers[lane], rank)
