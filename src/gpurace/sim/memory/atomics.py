"""Atomic read-modify-write on a batch of lanes, with the result of applying them one at a time.

Hardware serialises the atomics of one instruction in some order; the
simulator fixes that order to the batch order (ascending thread index), so
each lane's returned old value and the final memory contents are exactly what
a Python loop over the lanes would give. Nothing here loops over lanes:

1. lanes are stable-sorted by element index, giving address *groups* (in batch
   order inside each group) and each lane's *rank* within its group;
2. associative operations become segmented scans: integer `add` a prefix sum
   (exact under wrap-around), `and`/`or`/`xor`/`min`/`max` and float `add`
   an `ufunc.accumulate` over a (groups x rank) matrix per power-of-two group
   size class, so the loop count is at most log2(N) + 1. `accumulate` applies
   the operation left to right in the element dtype, so float sums round in
   exactly the serial order;
3. `exch` is a shift (each lane sees its predecessor's value);
4. `cas` jumps from one successful compare to the next: the loop count is the
   largest number of *successful* CASes on one address (2 for a lock that
   every lane tries to take);
5. `inc`/`dec` with one bound per address have a closed form (the counter
   walks a cycle of length bound+1);
6. everything else (bf16 and packed f16x2/bf16x2 add, `add.ftz` on f32, `inc`/`dec` with
   differing bounds) runs in rounds, one lane per address per round: the loop
   count is the largest number of lanes hitting one address.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpurace.frontend.ptx.ir import type_size
from gpurace.sim.memory.floats import FLOAT_OF_TYPE, SINT_OF_SIZE, UINT_OF_SIZE, bf16_to_f32, f32_to_bf16

OPS = frozenset({"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas", "add.ftz"})
"""The operations of `apply`: PTX's atomics, and `add.ftz`, an f32 add that flushes subnormal inputs and results to
sign-preserving zero (what the PTX ISA says `cp.reduce.async.bulk.add.f32` does)."""


@dataclass
class Groups:
    """Lanes sorted by element index: `order` maps sorted position to lane; groups are runs of equal index."""

    order: np.ndarray  # (M,) lane of each sorted position
    index: np.ndarray  # (G,) element index of each group
    start: np.ndarray  # (G,) first sorted position of each group
    size: np.ndarray  # (G,) lanes in each group
    group_of: np.ndarray  # (M,) group of each sorted position
    rank: np.ndarray  # (M,) position within its group

    @staticmethod
    def of(elem_index: np.ndarray) -> Groups:
        order = np.argsort(elem_index, kind="stable")
        s = elem_index[order]
        m = len(s)
        head = np.empty(m, dtype=np.bool_)
        head[:1] = True
        np.not_equal(s[1:], s[:-1], out=head[1:])
        start = np.flatnonzero(head)
        size = np.diff(np.append(start, m))
        group_of = np.cumsum(head) - 1
        rank = np.arange(m) - start[group_of]
        return Groups(order, s[start], start, size, group_of, rank)


def _segmented_scan(ufunc: np.ufunc, first: np.ndarray, ops: np.ndarray, g: Groups) -> tuple[np.ndarray, np.ndarray]:
    """Exclusive scan per group seeded with `first` (G,): (value before each lane (M,), final value per group (G,))."""
    before = np.empty(len(ops), dtype=ops.dtype)
    final = np.empty(len(first), dtype=ops.dtype)
    size_class = np.ceil(np.log2(g.size)).astype(np.int64)
    classes = np.unique(size_class)
    for c in classes:
        if len(classes) == 1:
            gs, lanes = np.arange(len(first)), np.arange(len(ops))
        else:
            gs = np.flatnonzero(size_class == c)
            lanes = np.flatnonzero(size_class[g.group_of] == c)
        row = np.empty(len(first), dtype=np.int64)
        row[gs] = np.arange(len(gs))
        lane_rows, lane_cols = row[g.group_of[lanes]], g.rank[lanes]
        mat = np.zeros((len(gs), int(g.size[gs].max()) + 1), dtype=ops.dtype)
        mat[:, 0] = first[gs]
        mat[lane_rows, lane_cols + 1] = ops[lanes]
        acc = ufunc.accumulate(mat, axis=1)
        before[lanes] = acc[lane_rows, lane_cols]
        final[gs] = acc[np.arange(len(gs)), g.size[gs]]
    return before, final


def _rounds(
    first: np.ndarray, a: np.ndarray, b: np.ndarray, g: Groups, step: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Apply `step(old, a, b) -> new` one rank at a time (one lane per address per round)."""
    cur = first.copy()
    before = np.empty(len(a), dtype=first.dtype)
    by_rank = np.argsort(g.rank, kind="stable")
    bounds = np.searchsorted(g.rank[by_rank], np.arange(int(g.rank.max()) + 2))
    for r in range(len(bounds) - 1):
        sel = by_rank[bounds[r] : bounds[r + 1]]
        grp = g.group_of[sel]
        old = cur[grp]
        before[sel] = old
        cur[grp] = step(old, a[sel], b[sel])
    return before, cur


def _cas(first: np.ndarray, cmp: np.ndarray, new: np.ndarray, g: Groups) -> tuple[np.ndarray, np.ndarray]:
    """compare-and-swap, jumping from one successful lane of each group to the next."""
    cur = first.copy()
    before = np.empty(len(cmp), dtype=first.dtype)
    start = g.start.copy()
    end = g.start + g.size
    active = np.arange(len(first))
    while active.size:
        lens = end[active] - start[active]
        offsets = np.cumsum(lens) - lens
        pos = np.repeat(start[active] - offsets, lens) + np.arange(int(lens.sum()))
        grp = np.repeat(active, lens)
        match = cmp[pos] == cur[grp]
        hit_pos, hit_grp = pos[match], grp[match]
        firsts = np.empty(len(hit_grp), dtype=np.bool_)
        firsts[:1] = True
        np.not_equal(hit_grp[1:], hit_grp[:-1], out=firsts[1:])
        hit_pos, hit_grp = hit_pos[firsts], hit_grp[firsts]
        limit = end.copy()
        limit[hit_grp] = hit_pos + 1
        done = pos < limit[grp]
        before[pos[done]] = cur[grp[done]]
        cur[hit_grp] = new[hit_pos]
        start[hit_grp] = hit_pos + 1
        active = hit_grp[start[hit_grp] < end[hit_grp]]
    return before, cur


def _inc_dec(op: str, first: np.ndarray, bound: np.ndarray, g: Groups) -> tuple[np.ndarray, np.ndarray] | None:
    """Closed form of inc/dec when every lane of a group has the same bound; None otherwise."""
    gb = bound[g.start].astype(np.int64)
    if not np.array_equal(bound, bound[g.start][g.group_of]):
        return None
    o = first.astype(np.int64)
    m = gb + 1

    def nth(k: np.ndarray, grp: np.ndarray) -> np.ndarray:
        og, bg, mg = o[grp], gb[grp], m[grp]
        if op == "inc":
            in_cycle, wrapped = (og + k) % mg, (k - 1) % mg
        else:
            in_cycle, wrapped = (og - k) % mg, (bg - (k - 1)) % mg
        return np.where(og <= bg, in_cycle, np.where(k == 0, og, wrapped))

    before = nth(g.rank, g.group_of).astype(first.dtype)
    final = nth(g.size.astype(np.int64), np.arange(len(first))).astype(first.dtype)
    return before, final


def _inc_step(old, _a, b):
    return np.where(old >= b, 0, old + 1).astype(old.dtype)


def _dec_step(old, _a, b):
    return np.where((old == 0) | (old > b), b, old - 1).astype(old.dtype)


def _flush_f32(bits: np.ndarray) -> np.ndarray:
    """f32 bit patterns with subnormals replaced by a zero of their sign (exponent bits all zero: keep the sign)."""
    return np.where((bits & np.uint32(0x7F800000)) == 0, bits & np.uint32(0x80000000), bits).astype(np.uint32)


def _f32_ftz_add_step(old, a, _b):
    with np.errstate(all="ignore"):
        total = _flush_f32(old).view(np.float32) + _flush_f32(a).view(np.float32)
    return _flush_f32(total.view(np.uint32))


def _bf16_add_step(old, a, _b):
    return f32_to_bf16(bf16_to_f32(old) + bf16_to_f32(a))


def _packed_add_step(half: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """Add of two packed halves (f16x2 or bf16x2): each 16-bit half independently."""

    def add16(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if half == "f16":
            return (x.view(np.float16) + y.view(np.float16)).view(np.uint16)
        return f32_to_bf16(bf16_to_f32(x) + bf16_to_f32(y))

    def step(old, a, _b):
        lo = add16((old & np.uint32(0xFFFF)).astype(np.uint16), (a & np.uint32(0xFFFF)).astype(np.uint16))
        hi = add16((old >> np.uint32(16)).astype(np.uint16), (a >> np.uint32(16)).astype(np.uint16))
        return lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))

    return step


def _float_domain(ptx_type: str, raw: np.ndarray) -> np.ndarray:
    """Raw bits as numbers, for min/max and add."""
    if ptx_type == "bf16":
        return bf16_to_f32(raw)
    return raw.view(FLOAT_OF_TYPE[ptx_type])


def _from_float_domain(ptx_type: str, values: np.ndarray) -> np.ndarray:
    if ptx_type == "bf16":
        return f32_to_bf16(values)
    return values.view(UINT_OF_SIZE[type_size(ptx_type)])


def apply(view: np.ndarray, elem_index: np.ndarray, op: str, ptx_type: str, a: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """Perform the atomics of a batch on `view` (a typed view of a backing store); return each lane's old raw value.

    `elem_index` are element indices into `view` (all in bounds and aligned).
    `a` is the operand (the compare value of `cas`, the bound of `inc`/`dec`),
    `b` the new value of `cas`; both are raw bit patterns, truncated to the
    element width.
    """
    if op not in OPS:
        raise ValueError(f"unknown atomic operation {op!r}")
    udt = view.dtype
    a = np.asarray(a).astype(udt, copy=False)
    b = a if b is None else np.asarray(b).astype(udt, copy=False)
    if len(elem_index) == 0:
        return np.zeros(0, dtype=udt)
    g = Groups.of(elem_index)
    a_s, b_s = a[g.order], b[g.order]
    first = view[g.index]
    integer = ptx_type[0] in "usb" and ptx_type[1:].isdigit()
    kind = ptx_type[0] if integer else "f"
    floaty = ptx_type in ("f16", "f32", "f64", "bf16")

    if op == "add" and integer:
        incl = np.cumsum(a_s, dtype=udt)
        excl = incl - a_s
        before = first[g.group_of] + (excl - excl[g.start][g.group_of])
        final = first + (incl[g.start + g.size - 1] - excl[g.start])
    elif op == "add" and ptx_type in FLOAT_OF_TYPE:
        with np.errstate(all="ignore"):
            fb, ff = _segmented_scan(np.add, _float_domain(ptx_type, first), _float_domain(ptx_type, a_s), g)
        before, final = _from_float_domain(ptx_type, fb), _from_float_domain(ptx_type, ff)
    elif op == "add.ftz" and ptx_type == "f32":
        before, final = _rounds(first, a_s, b_s, g, _f32_ftz_add_step)
    elif op == "add" and ptx_type == "bf16":
        before, final = _rounds(first, a_s, b_s, g, _bf16_add_step)
    elif op == "add" and ptx_type in ("f16x2", "bf16x2"):
        before, final = _rounds(first, a_s, b_s, g, _packed_add_step(ptx_type[:-2]))
    elif op in ("min", "max") and floaty:
        ufunc = np.fmin if op == "min" else np.fmax
        fb, ff = _segmented_scan(ufunc, _float_domain(ptx_type, first), _float_domain(ptx_type, a_s), g)
        before, final = _from_float_domain(ptx_type, fb), _from_float_domain(ptx_type, ff)
    elif op in ("min", "max") and kind in "us":
        ufunc = np.minimum if op == "min" else np.maximum
        if kind == "s":
            sdt = SINT_OF_SIZE[udt.itemsize]
            sb, sf = _segmented_scan(ufunc, first.view(sdt), a_s.view(sdt), g)
            before, final = sb.view(udt), sf.view(udt)
        else:
            before, final = _segmented_scan(ufunc, first, a_s, g)
    elif op in ("and", "or", "xor") and integer:
        ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        before, final = _segmented_scan(ufunc, first, a_s, g)
    elif op == "exch":
        before = np.empty_like(a_s)
        before[1:] = a_s[:-1]
        before[g.start] = first
        final = a_s[g.start + g.size - 1]
    elif op == "cas" and integer:
        before, final = _cas(first, a_s, b_s, g)
    elif op in ("inc", "dec") and ptx_type == "u32":
        res = _inc_dec(op, first, a_s, g)
        if res is None:
            res = _rounds(first, a_s, a_s, g, _inc_step if op == "inc" else _dec_step)
        before, final = res
    else:
        raise ValueError(f"atom.{op}.{ptx_type} is not a PTX atomic")
    view[g.index] = final
    out = np.empty(len(elem_index), dtype=udt)
    out[g.order] = before
    return out
