"""Decoding of the bulk reductions (`cp.reduce.async.bulk`, sm_90) into handlers (`sim.execute.Decoder`).

Forms simulated, as the PTX ISA writes them:

- `cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp.type [dst], [src], size{, policy}`
  (and `.add.noftz` for `.f16`/`.bf16`): shared memory of this block reduced into global memory, completing
  through `cp.async.bulk.commit_group` and `cp.async.bulk.wait_group`;
- `cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.redOp.type [dst], [src], size,
  [mbar]`: into (distributed) shared memory of a block of the cluster, completing `size` bytes on the mbarrier
  there;
- `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp{.tile}.bulk_group [tensorMap, {c0, ...}], [src]`: the
  box of a tensor map, in its element type (`sim.tensor_copies`).

Each element of the destination is reduced with the element at the same offset of the source, by `.redOp` (`.add`,
`.min`, `.max`, `.inc`, `.dec`, `.and`, `.or`, `.xor`) in `.type`, as `atom` does it (`.inc`/`.dec` with the source
element as the bound); `.add.f32` flushes subnormal inputs and results to sign-preserving zero, as the ISA says
`cp.reduce.async.bulk` does (it says nothing of the kind for the tensor form, which rounds only). Each element's
reduction is an atomic of its own with `.relaxed.gpu` semantics (or the `.relaxed.scope` the instruction names): two
reductions onto the same bytes never race, while a plain access to them does, unless ordered. The simulator runs a
reduction as the bulk copy it is (`sim.bulk_copies`): the source is read at issue (an async-proxy read, so
`fence.proxy.async` must follow the generic writes to it, `sim.proxy_fences`), the pieces stay in flight in
`sim.async_copies`' table (an access to their destination before completion races with them, save another atomic),
and at completion each element becomes an atomic event of the issuing thread (`Reduction.land`). Combinations of
operation and type that the ISA's table lacks are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import type_size
from gpurace.sim.bulk_copies import COMPLETE_TX, SPACES, copier, copy_form
from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.sim.memory import Space
from gpurace.sim.memory.floats import UINT_OF_SIZE

OPERATIONS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
_BITWISE = frozenset({"b32", "u32", "s32", "b64", "u64", "s64"})  # the ISA's own examples use .xor.s32
VALID = {
    Space.GLOBAL: {
        "add": frozenset({"u32", "s32", "u64", "f32", "f64", "f16", "bf16"}),
        "min": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16"}),
        "max": frozenset({"u32", "s32", "u64", "s64", "f16", "bf16"}),
        "inc": frozenset({"u32"}),
        "dec": frozenset({"u32"}),
        "and": _BITWISE,
        "or": _BITWISE,
        "xor": _BITWISE,
    },
    Space.SHARED_CLUSTER: {
        "add": frozenset({"u32", "s32", "u64"}),
        "min": frozenset({"u32", "s32"}),
        "max": frozenset({"u32", "s32"}),
        "inc": frozenset({"u32"}),
        "dec": frozenset({"u32"}),
        "and": frozenset({"b32", "u32", "s32"}),
        "or": frozenset({"b32", "u32", "s32"}),
        "xor": frozenset({"b32", "u32", "s32"}),
    },
}
"""The element types of each reduction, by destination space (the PTX ISA's table of valid combinations)."""
TYPES = frozenset().union(*VALID[Space.GLOBAL].values())
SCOPES = ("cta", "cluster", "gpu", "sys")
_MODIFIERS = (
    frozenset({"reduce", "async", "bulk", COMPLETE_TX, "bulk_group", "L2::cache_hint", "noftz", "relaxed"})
    | frozenset(SPACES) | frozenset(OPERATIONS) | TYPES | frozenset(SCOPES)
)  # fmt: skip
_FORMS = {(Space.GLOBAL, Space.SHARED, "bulk_group"), (Space.SHARED_CLUSTER, Space.SHARED, COMPLETE_TX)}


@dataclass(frozen=True)
class Reduction:
    """What one `cp.reduce.async.bulk` instruction does to each element of its destination."""

    op: str
    type: str
    scope: str = "gpu"
    ftz: bool = True  # `.add.f32` flushes subnormals (what the ISA says of cp.reduce.async.bulk, not of .tensor)

    def land(self, eng, pc: int, threads: np.ndarray, space: Space, dst: np.ndarray, data: np.ndarray) -> None:
        """Reduce the rows of `data` (bytes, one row per thread) into the destinations `dst` (addresses of `space`):
        one atomic per element, each an event of the issuing threads (`sim.async_copies` calls this where a copy
        would store)."""
        esize = type_size(self.type)
        udt = UINT_OF_SIZE[esize]
        memory_op = "add.ftz" if self.ftz and (self.op, self.type) == ("add", "f32") else self.op
        blocks = eng.geo.block_of[threads]
        for e in range(data.shape[1] // esize):
            acc = eng.mem.resolve(space, dst + np.uint64(e * esize), threads, blocks, esize, write=True)
            operand = np.ascontiguousarray(data[:, e * esize : (e + 1) * esize]).view(udt).reshape(-1)
            old = eng.mem.atomic(acc, memory_op, self.type, operand)
            eng.emit(AccessBatch(eng.next_seq(), pc, AccessKind.ATOMIC, threads, acc.canonical, esize, acc.space, True,
                                 self.scope, "relaxed", self.op, old, operand))  # fmt: skip
            if eng.watching:
                eng.parking.wrote(threads, acc, esize)


def reduction_of(dec, dst_space: Space) -> Reduction:
    """The operation, type and scope of a `cp.reduce.async.bulk{.tensor}` into `dst_space`; combinations the PTX ISA
    does not define are refused by name."""
    ins = dec.ins
    op = dec.one_of(OPERATIONS, "reduction operation")
    rtype = dec.one_of(tuple(sorted(TYPES)), "element type")
    valid = VALID[Space.SHARED_CLUSTER if dst_space == Space.SHARED_CLUSTER else Space.GLOBAL]
    if rtype not in valid[op]:
        raise UserError(f"`{ins.text}`: cp.reduce.async.bulk has no .{op} on .{rtype} into this state space")
    half = rtype in ("f16", "bf16")
    if op == "add" and half != ("noftz" in ins.modifiers):
        raise UserError(f"`{ins.text}`: .add needs .noftz exactly on .f16 and .bf16 elements")
    scope = ins.scope or "gpu"
    if ins.semantics not in (None, "relaxed") or scope not in SCOPES:
        raise UserError(f"`{ins.text}`: a bulk reduction is .relaxed, with scope .cta, .cluster, .gpu or .sys")
    return Reduction(op, rtype, scope)


def bulk_reduce(dec):
    """The handler of one `cp.reduce.async.bulk` instruction (module docstring)."""
    dst_space, src_space, completion = copy_form(dec, _MODIFIERS)
    if (dst_space, src_space, completion) not in _FORMS:
        raise UserError(f"the simulator does not support `{dec.ins.text}`: not a form of cp.reduce.async.bulk it knows")
    dec.eng.async_copies.reductions[dec.pc] = reduction_of(dec, dst_space)
    return copier(dec, dst_space, src_space, completion, AccessKind.ATOMIC)
