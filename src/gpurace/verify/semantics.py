"""Integer PTX instructions as z3 bit-vector terms, exactly as the PTX ISA defines them (wrapping at the width).

Only what decides *where* a thread accesses memory and *whether* it gets
there needs to be exact: integer arithmetic, comparisons, selects, width
conversions and pointer conversions. Everything else (floating point,
bit-manipulation the ISA defines through tables, warp exchanges) returns None
and the caller puts an approximation in its place, labelled with the
instruction, so that the report can say which value made an alarm uncertain.
"""

from __future__ import annotations

import z3

from gpurace.frontend.ptx.ir import Instruction, type_size
from gpurace.verify.terms import Value, fit

COMPARE = {
    "eq": lambda a, b, s: a == b,
    "ne": lambda a, b, s: a != b,
    "lt": lambda a, b, s: a < b if s else z3.ULT(a, b),
    "le": lambda a, b, s: a <= b if s else z3.ULE(a, b),
    "gt": lambda a, b, s: a > b if s else z3.UGT(a, b),
    "ge": lambda a, b, s: a >= b if s else z3.UGE(a, b),
    "lo": lambda a, b, s: z3.ULT(a, b),
    "ls": lambda a, b, s: z3.ULE(a, b),
    "hi": lambda a, b, s: z3.UGT(a, b),
    "hs": lambda a, b, s: z3.UGE(a, b),
}
"""PTX comparison operators; `s` says the operands are signed (`.s32`), for the operators that depend on it."""

FLOAT_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32"})


def int_type(ins: Instruction) -> tuple[int, bool] | None:
    """(width in bits, signed) of an integer instruction's first type; None for float or typeless ones."""
    types = ins.types
    if not types or types[0] in FLOAT_TYPES or types[0] == "pred":
        return None
    return type_size(types[0]) * 8, types[0].startswith("s")


def _same_base(values: list[Value]) -> str | None | bool:
    """The common object of pointer operands (None when none is a pointer); False when they differ."""
    bases = {v.base for v in values}
    return bases.pop() if len(bases) == 1 else False


def arith(ins: Instruction, srcs: list[Value]) -> Value | None:
    """The result of an integer ALU instruction on `srcs`, or None when it is not modelled exactly."""
    shape = int_type(ins)
    if shape is None:
        return None
    width, signed = shape
    op, mods = ins.opcode, ins.modifiers
    if any(m in ("sat", "cc") for m in mods) or ins.opcode in ("addc", "subc", "madc"):
        return None
    if op in ("add", "sub"):
        a, b = srcs
        ta, tb = fit(a.term, width), fit(b.term, width)
        if op == "add":
            if a.base and b.base:
                return None
            return Value(ta + tb, a.base or b.base)
        if b.base and a.base != b.base:
            return None
        return Value(ta - tb, a.base if not b.base else None)
    if op in ("mul", "mad"):
        return _multiply(op, mods, width, signed, srcs)
    if any(v.base for v in srcs) and op not in ("min", "max"):
        return None
    terms = [fit(v.term, width) if not z3.is_bool(v.term) else v.term for v in srcs]
    if op in ("and", "or", "xor"):
        a, b = terms
        return Value({"and": a & b, "or": a | b, "xor": a ^ b}[op])
    if op == "not":
        return Value(~terms[0])
    if op == "neg":
        return Value(-terms[0])
    if op == "abs":
        return Value(z3.If(terms[0] < 0, -terms[0], terms[0]))
    if op in ("min", "max"):
        base = _same_base(srcs)
        if base is False:
            return None
        a, b = terms
        less = a < b if signed else z3.ULT(a, b)
        return Value(z3.If(less, a, b) if op == "min" else z3.If(less, b, a), base)
    if op in ("shl", "shr"):
        a, b = terms[0], fit(srcs[1].term, 32)
        amount = fit(z3.If(z3.UGT(b, width), z3.BitVecVal(width, 32), b), width)
        if op == "shl":
            return Value(a << amount)
        return Value(a >> amount if signed else z3.LShR(a, amount))
    if op in ("div", "rem"):
        a, b = terms
        if op == "div":
            return Value(a / b if signed else z3.UDiv(a, b))
        return Value(z3.SRem(a, b) if signed else z3.URem(a, b))
    if op == "bfi":
        return _insert_field(width, terms)
    return None


def _insert_field(width: int, terms: list) -> Value | None:
    """`bfi f, a, b, pos, len`: `b` with its bits from `pos` replaced by the low `len` bits of `a`, as the ISA
    defines it (`pos` and `len` taken modulo 256, the field cut at the top bit); only for constant `pos` and
    `len` (a 64-bit value built from two halves, such as the grid workspace's address)."""
    a, b = terms[0], terms[1]
    pos, length = (z3.simplify(t) for t in terms[2:4])
    if not (z3.is_bv_value(pos) and z3.is_bv_value(length)):
        return None
    pos, length = pos.as_long() & 0xFF, length.as_long() & 0xFF
    length = min(length, width - pos) if pos < width else 0
    if length == 0:
        return Value(b)
    mask = z3.BitVecVal(((1 << length) - 1) << pos, width)
    return Value((b & ~mask) | ((a << pos) & mask))


def _multiply(op: str, mods: tuple[str, ...], width: int, signed: bool, srcs: list[Value]) -> Value | None:
    """`mul`/`mad` with `.lo`, `.hi` or `.wide`; for `mad` only the addend may be a pointer."""
    a, b = srcs[0], srcs[1]
    if a.base or b.base:
        return None
    addend = srcs[2] if op == "mad" else None
    if "wide" in mods:
        wa, wb = fit(a.term, width), fit(b.term, width)
        prod = fit(wa, 2 * width, signed) * fit(wb, 2 * width, signed)
        out_width = 2 * width
    elif "hi" in mods:
        full = fit(fit(a.term, width), 2 * width, signed) * fit(fit(b.term, width), 2 * width, signed)
        prod = z3.Extract(2 * width - 1, width, full)
        out_width = width
    else:
        prod = fit(a.term, width) * fit(b.term, width)
        out_width = width
    if addend is None:
        return Value(prod)
    return Value(prod + fit(addend.term, out_width), addend.base)


def compare(ins: Instruction, a: Value, b: Value) -> z3.BoolRef | None:
    """The condition a `setp`/`set` tests, or None for floating point and pointers into different objects."""
    shape = int_type(ins)
    if shape is None:
        return None
    width, signed = shape
    if a.base != b.base:
        return None
    cmp = next((m for m in ins.modifiers if m in COMPARE), None)
    if cmp is None:
        return None
    return COMPARE[cmp](fit(a.term, width), fit(b.term, width), signed)


def combine(ins: Instruction, cond: z3.BoolRef, other: z3.BoolRef | None) -> z3.BoolRef:
    """`setp.cmp.and/.or/.xor` folds a third predicate operand into the comparison."""
    if other is None:
        return cond
    if ins.has("and"):
        return z3.And(cond, other)
    if ins.has("or"):
        return z3.Or(cond, other)
    if ins.has("xor"):
        return z3.Xor(cond, other)
    return cond


def convert(ins: Instruction, src: Value) -> Value | None:
    """`cvt.to.from` between integer types: truncation, zero or sign extension; None when floats are involved."""
    types = ins.types
    if len(types) != 2 or any(t in FLOAT_TYPES for t in types) or ins.has("sat"):
        return None
    to, frm = types
    src_width = type_size(frm) * 8
    term = fit(fit(src.term, src_width), type_size(to) * 8, frm.startswith("s"))
    return Value(term, src.base)
