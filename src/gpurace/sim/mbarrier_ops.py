"""Decoding of the `mbarrier` instructions and `cp.async.mbarrier.arrive` into handlers (`sim.execute.Decoder`).

The operand forms are the PTX ISA's; the semantics live in `sim.mbarriers`. Forms the ISA does not have are
refused when the instruction is decoded, so a kernel that never executes them still runs: `.shared::cluster` on
anything but `arrive`, `arrive_drop`, `expect_tx` and `complete_tx`, a state asked of a `.shared::cluster` arrive,
and `.cluster` on `cp.async.mbarrier.arrive`. `.cluster` scope (`.release.cluster` arrives, `.acquire.cluster`
waits) widens what the operation orders to the cluster (`sim.mbarriers`). The time limit of `mbarrier.try_wait`
is a hint and is ignored (the wait may return false earlier, which a kernel must handle anyway).
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Sink
from gpurace.sim.memory import Space
from gpurace.sim.mbarriers import MAX_COUNT, OBJECT_SIZE, WAITING

_OPERATIONS = ("init", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait", "try_wait", "inval", "pending_count")
_ALLOWED = frozenset(_OPERATIONS) | {
    "noComplete", "parity", "shared", "shared::cta", "shared::cluster", "b64", "release", "acquire", "relaxed", "cta",
    "cluster",
}  # fmt: skip
_REMOTE = frozenset({"arrive", "arrive_drop", "expect_tx", "complete_tx"})
"""The operations the PTX ISA allows on an object in another block's shared memory (`.shared::cluster`)."""


def mbarrier(dec):
    """The handler of one `mbarrier.*` instruction."""
    ins = dec.ins
    mods = ins.modifiers
    unknown = [m for m in mods if m not in _ALLOWED]
    if unknown:
        listed = ", ".join("." + m for m in unknown)
        raise UserError(f"the simulator does not support `{ins.text}`: modifier(s) {listed} not supported for mbarrier")
    ops = [m for m in mods if m in _OPERATIONS]
    if len(ops) == 2 and ops[0] in ("arrive", "arrive_drop") and ops[1] == "expect_tx":
        return _BUILDERS[f"{ops[0]}_expect_tx"](dec)
    if len(ops) != 1:
        raise UserError(f"`{ins.text}` needs exactly one mbarrier operation ({', '.join('.' + n for n in _OPERATIONS)})")
    if "shared::cluster" in mods and ops[0] not in _REMOTE:
        raise UserError(
            f"`{ins.text}`: mbarrier.{ops[0]} takes no .shared::cluster object (only arrive, arrive_drop, expect_tx "
            "and complete_tx do)"
        )
    return _BUILDERS[ops[0]](dec)


def _object(dec, op):
    """idx -> (lanes that resolved, their canonical object addresses) for the `[addr]` operand."""
    eng = dec.eng
    mem = eng.mem
    space = dec.state_space()
    if space not in (Space.SHARED, Space.SHARED_CLUSTER, Space.GENERIC):
        raise UserError(f"`{dec.ins.text}`: an mbarrier object lives in shared memory (.shared or a generic address)")
    addr = dec.address(op)
    block_of = eng.geo.block_of
    where, text = dec.ins.where(), dec.ins.text

    def resolve(idx):
        acc = mem.resolve(space, addr(idx), idx, block_of[idx], OBJECT_SIZE, write=True)
        ok = dec.check_access(acc, idx, "mbarrier", OBJECT_SIZE)
        if (acc.space[ok] != int(Space.SHARED)).any():
            raise UserError(f"{where}: `{text}` names an mbarrier object outside shared memory")
        return ok, acc.canonical

    return resolve


def _init(dec):
    target, count = dec.operands(2)
    resolve = _object(dec, target)
    read = dec.reader(count, "u32")
    mb = dec.eng.mbarriers
    pc, nxt, where = dec.pc, dec.pc + 1, dec.ins.where()

    def init(idx):
        ok, canon = resolve(idx)
        ok[ok] = mb.local_only(pc, "mbarrier.init", idx[ok], canon[ok])
        mb.init(pc, idx[ok], canon[ok], read(idx)[ok].astype(np.int64), where)
        return nxt

    return init


def _inval(dec):
    (target,) = dec.operands(1)
    resolve = _object(dec, target)
    mb = dec.eng.mbarriers
    pc, nxt = dec.pc, dec.pc + 1

    def inval(idx):
        ok, canon = resolve(idx)
        ok[ok] = mb.local_only(pc, "mbarrier.inval", idx[ok], canon[ok])
        mb.inval(pc, idx[ok], canon[ok])
        return nxt

    return inval


def _arrive_kind(dec, *, drop: bool, expect_tx: bool):
    ins = dec.ins
    no_complete = "noComplete" in ins.modifiers
    ops = dec.operands(3) if (no_complete or expect_tx) else dec.operands(2, 3)
    state, target = ops[0], ops[1]
    count = dec.bounded(ops[2], "the arrival count", 1, MAX_COUNT) if len(ops) == 3 and not expect_tx else None
    tx = dec.reader(ops[2], "u32") if expect_tx else None
    returns = not isinstance(state, Sink)
    if returns and "shared::cluster" in ins.modifiers:
        raise UserError(f"`{ins.text}`: an arrive on a .shared::cluster object returns no state (write the sink `_`)")
    write = dec.writer(state, "b64")
    resolve = _object(dec, target)
    sem = "relaxed" if "relaxed" in ins.modifiers else "release"
    if "acquire" in ins.modifiers:
        raise UserError(f"`{ins.text}`: an arrive has .release or .relaxed semantics")
    scope = _scope(ins)
    mb = dec.eng.mbarriers
    pc, nxt = dec.pc, dec.pc + 1

    def arrive(idx):
        ok, canon = resolve(idx)
        if returns:  # a remote object cannot return a state (the ISA's table of mbarrier support)
            far = np.zeros(len(idx), dtype=np.bool_)
            far[ok] = ~mb.local_only(pc, "mbarrier.arrive returning a state", idx[ok], canon[ok])
            ok &= ~far
        counts = count(idx) if count is not None else np.ones(len(idx), dtype=np.int64)
        txs = tx(idx).astype(np.int64)[ok] if tx is not None else None
        tokens = np.zeros(len(idx), dtype=np.uint64)
        tokens[ok] = mb.arrive(pc, idx[ok], canon[ok], counts[ok], sem=sem, drop=drop, no_complete=no_complete, tx=txs,
                               scope=scope)  # fmt: skip
        write(idx, tokens)
        return nxt

    return arrive


def _arrive(dec):
    return _arrive_kind(dec, drop=False, expect_tx=False)


def _arrive_drop(dec):
    return _arrive_kind(dec, drop=True, expect_tx=False)


def _arrive_expect_tx(dec):
    return _arrive_kind(dec, drop=False, expect_tx=True)


def _arrive_drop_expect_tx(dec):
    return _arrive_kind(dec, drop=True, expect_tx=True)


def _tx(dec, sign: int):
    target, amount = dec.operands(2)
    resolve = _object(dec, target)
    read = dec.reader(amount, "u32")
    mb = dec.eng.mbarriers
    pc, nxt = dec.pc, dec.pc + 1

    def change(idx):
        ok, canon = resolve(idx)
        mb.change_tx(pc, idx[ok], canon[ok], sign * read(idx)[ok].astype(np.int64))
        return nxt

    return change


def _expect_tx(dec):
    return _tx(dec, 1)


def _complete_tx(dec):
    return _tx(dec, -1)


def _wait(dec):
    ins = dec.ins
    ops = dec.operands(3, 4) if ins.has("try_wait") else dec.operands(3)  # try_wait's 4th: a time-limit hint
    done_op, target, wanted_op = ops[:3]
    parity = ins.has("parity")
    if "release" in ins.modifiers:
        raise UserError(f"`{ins.text}`: a wait has .acquire or .relaxed semantics")
    sem = "relaxed" if "relaxed" in ins.modifiers else "acquire"
    scope = _scope(ins)
    wanted = dec.reader(wanted_op, "b32" if parity else "b64")
    write = dec.writer(done_op, "pred")
    resolve = _object(dec, target)
    eng = dec.eng
    mb = eng.mbarriers
    pc, nxt = dec.pc, dec.pc + 1

    def wait(idx):
        ok, canon = resolve(idx)
        done = np.zeros(len(idx), dtype=np.bool_)
        go = ~ok
        lanes = idx[ok]
        if len(lanes):
            done[ok] = mb.wait(pc, lanes, canon[ok], wanted(idx)[ok].astype(np.uint64), parity=parity, sem=sem, scope=scope)
        go |= eng.status[idx] != WAITING  # the blocked lanes stay at the wait, to run it again when woken
        write(idx[go], done[go])
        eng.pc[idx] = np.where(go, nxt, pc)
        return None

    return wait


def _scope(ins) -> str:
    """The scope of an arrive or a wait: `.cta` (the default) or `.cluster`. An arrive in the `.shared::cluster`
    state space (on an object of any block of the cluster: CUTLASS's `ClusterBarrier::arrive(cta_id)` writes
    `mbarrier.arrive.shared::cluster.b64 _, [addr]`) is `.cluster`: libcu++ offers that form with `.cluster`
    scope only, and a `.cta` release could reach no thread that may wait on another block's object."""
    return "cluster" if "cluster" in ins.modifiers or "shared::cluster" in ins.modifiers else "cta"


def _pending_count(dec):
    count, state = dec.operands(2)
    read = dec.reader(state, "b64")
    write = dec.writer(count, "u32")
    nxt = dec.pc + 1

    def pending_count(idx):
        write(idx, (read(idx).astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        return nxt

    return pending_count


_BUILDERS = {
    "init": _init,
    "inval": _inval,
    "arrive": _arrive,
    "arrive_drop": _arrive_drop,
    "arrive_expect_tx": _arrive_expect_tx,
    "arrive_drop_expect_tx": _arrive_drop_expect_tx,
    "expect_tx": _expect_tx,
    "complete_tx": _complete_tx,
    "test_wait": _wait,
    "try_wait": _wait,
    "pending_count": _pending_count,
}


def copy_arrive(dec):
    """`cp.async.mbarrier.arrive[.noinc].shared{::cta}.b64 [addr]`: the thread's earlier copies complete with the
    object's current phase, and an arrival follows them (`sim.mbarriers`, module docstring)."""
    ins = dec.ins
    if "cluster" in ins.modifiers or "shared::cluster" in ins.modifiers:
        raise UserError(f"`{ins.text}`: cp.async.mbarrier.arrive takes a .shared::cta object and no scope")
    (target,) = dec.operands(1)
    resolve = _object(dec, target)
    owed = 0 if "noinc" in ins.modifiers else 1
    eng = dec.eng
    mb, copies = eng.mbarriers, eng.async_copies
    pc, nxt = dec.pc, dec.pc + 1

    def arrive(idx):
        ok, canon = resolve(idx)
        usable = np.zeros(len(idx), dtype=np.bool_)
        usable[ok] = mb.usable(pc, "cp.async.mbarrier.arrive", idx[ok], canon[ok])
        if usable.any():
            copies.tie(idx[usable], canon[usable])
            mb.arrive(pc, idx[usable], canon[usable], np.full(int(usable.sum()), owed), sem="release", drop=False,
                      no_complete=False, deferred=True)  # fmt: skip
        return nxt

    return arrive
