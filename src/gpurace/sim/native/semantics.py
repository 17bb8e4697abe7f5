"""LLVM IR for the ALU semantics the compiling executor handles, bit-identical to `sim.alu`.

Each function here takes an `Emitter` (which names SSA values) and the raw
source values as integer SSA values of the operand types' widths (`i1` for
predicates) and returns the raw destination values, exactly as the matching
`sim.alu` builder's `fn` does with NumPy arrays: integer arithmetic wraps,
shifts clamp their amount, float results with a NaN become the GPU's
canonical NaN, float comparisons follow PTX's ordered/unordered split.

`semantics_of` recognises an instruction form (opcode and modifiers) and
returns its IR builder, or None for every form it does not handle, which the
interpreter then runs: this table is the whole of what is compiled.
"""

from __future__ import annotations

from typing import Callable

from gpurace.frontend.ptx.ir import TYPES, Instruction, PredPair
from gpurace.sim.alu.rawtypes import CANONICAL_NAN, HALF_FAMILY, is_int, is_signed, width

INT_TYPES = frozenset({"u16", "u32", "u64", "s16", "s32", "s64"})
BIT_TYPES = INT_TYPES | {"b16", "b32", "b64"}
CVT_INTS = frozenset({"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64"})
FLOATS = {"f32": "float", "f64": "double"}


def ir_type(ptx_type: str) -> str:
    """The LLVM integer type holding a value of `ptx_type` as raw bits."""
    return f"i{width(ptx_type)}"


class Emitter:
    """Appends instructions to one basic block, naming each result with a fresh SSA name."""

    def __init__(self, lines: list[str], prefix: str):
        self.lines = lines
        self.prefix = prefix
        self.count = 0

    def __call__(self, expr: str) -> str:
        self.count += 1
        name = f"%{self.prefix}{self.count}"
        self.lines.append(f"  {name} = {expr}")
        return name

    # integer width changes, as `sim.state.convert_width` and `astype` do them
    def resize(self, v: str, src_bits: int, dst_bits: int, signed: bool) -> str:
        if src_bits == dst_bits:
            return v
        if dst_bits == 1:
            return self(f"icmp ne i{src_bits} {v}, 0")
        if src_bits == 1:
            return self(f"zext i1 {v} to i{dst_bits}")
        if src_bits > dst_bits:
            return self(f"trunc i{src_bits} {v} to i{dst_bits}")
        return self(f"{'sext' if signed else 'zext'} i{src_bits} {v} to i{dst_bits}")

    def to_float(self, v: str, fmt: str) -> str:
        return self(f"bitcast {ir_type(fmt)} {v} to {FLOATS[fmt]}")

    def canonical_bits(self, f: str, fmt: str) -> str:
        """Float value -> raw bits, any NaN replaced by the canonical NaN (`rounding.canonical`)."""
        it = ir_type(fmt)
        bits = self(f"bitcast {FLOATS[fmt]} {f} to {it}")
        nan = self(f"fcmp uno {FLOATS[fmt]} {f}, {f}")
        return self(f"select i1 {nan}, {it} {CANONICAL_NAN[fmt]}, {it} {bits}")


Semantics = Callable[[Emitter, list[str]], list[str]]


def _flags(ins: Instruction) -> tuple[set[str], list[str]]:
    """(non-type modifiers, type modifiers in order); packed types such as .u16x2 count as flags, so no form matches."""
    types = [m for m in ins.modifiers if m in TYPES]
    return {m for m in ins.modifiers if m not in TYPES}, types


# ------------------------------------------------------------------ integer


def _int_binary(op: str, t: str) -> Semantics:
    it = ir_type(t)
    return lambda e, s: [e(f"{op} {it} {s[0]}, {s[1]}")]


def _product(mode: str, t: str):
    """(emitter, a, b) -> the .lo/.hi/.wide product of `integer._product`."""
    n = width(t)
    ext = "sext" if is_signed(t) else "zext"

    def product(e, a, b):
        if mode == "lo":
            return e(f"mul i{n} {a}, {b}")
        wa = e(f"{ext} i{n} {a} to i{2 * n}")
        wb = e(f"{ext} i{n} {b} to i{2 * n}")
        p = e(f"mul i{2 * n} {wa}, {wb}")
        if mode == "wide":
            return p
        return e(f"trunc i{2 * n} {e(f'lshr i{2 * n} {p}, {n}')} to i{n}")

    return product


def _mul(flags: set[str], t: str) -> Semantics | None:
    mode = flags.pop() if flags else "lo"
    if flags or mode not in ("lo", "hi", "wide") or t not in INT_TYPES:
        return None
    product = _product(mode, t)
    return lambda e, s: [product(e, s[0], s[1])]


def _mad(flags: set[str], t: str) -> Semantics | None:
    mode = flags.pop() if flags else "lo"
    if flags or mode not in ("lo", "hi", "wide") or t not in INT_TYPES:
        return None
    product = _product(mode, t)
    out = 2 * width(t) if mode == "wide" else width(t)
    return lambda e, s: [e(f"add i{out} {product(e, s[0], s[1])}, {s[2]}")]


def _minmax_int(t: str, is_max: bool) -> Semantics:
    it = ir_type(t)
    cond = ("sgt" if is_max else "slt") if is_signed(t) else ("ugt" if is_max else "ult")

    def fn(e, s):
        first = e(f"icmp {cond} {it} {s[0]}, {s[1]}")
        return [e(f"select i1 {first}, {it} {s[0]}, {it} {s[1]}")]

    return fn


def _abs_neg_int(t: str, neg: bool) -> Semantics:
    it = ir_type(t)

    def fn(e, s):
        negated = e(f"sub {it} 0, {s[0]}")
        if neg:
            return [negated]
        below = e(f"icmp slt {it} {s[0]}, 0")
        return [e(f"select i1 {below}, {it} {negated}, {it} {s[0]}")]

    return fn


def _shift(t: str, left: bool) -> Semantics:
    """`bits.shl`/`bits.shr` and the arithmetic shr: the amount is a u32, clamped to the width."""
    n = width(t)
    it = f"i{n}"

    def fn(e, s):
        if is_signed(t) and not left:  # arithmetic: the amount saturates at n - 1
            big = e(f"icmp ugt i32 {s[1]}, {n - 1}")
            clamped = e.resize(e(f"select i1 {big}, i32 {n - 1}, i32 {s[1]}"), 32, n, signed=False)
            return [e(f"ashr {it} {s[0]}, {clamped}")]
        big = e(f"icmp uge i32 {s[1]}, {n}")
        safe = e.resize(e(f"select i1 {big}, i32 0, i32 {s[1]}"), 32, n, signed=False)
        shifted = e(f"{'shl' if left else 'lshr'} {it} {s[0]}, {safe}")
        return [e(f"select i1 {big}, {it} 0, {it} {shifted}")]

    return fn


def _logic(op: str, t: str) -> Semantics:
    it = "i1" if t == "pred" else ir_type(t)
    if op == "not":
        return lambda e, s: [e(f"xor {it} {s[0]}, -1")]
    return lambda e, s: [e(f"{op} {it} {s[0]}, {s[1]}")]


def _cvt_int(src: str, dst: str) -> Semantics:
    """`convert._int_to_int` without .sat: extend by the source's signedness, or truncate."""
    return lambda e, s: [e.resize(s[0], width(src), width(dst), is_signed(src))]


# ------------------------------------------------------------------ floating point


def _float_binary(op: str, fmt: str) -> Semantics:
    ft = FLOATS[fmt]

    def fn(e, s):
        r = e(f"{op} {ft} {e.to_float(s[0], fmt)}, {e.to_float(s[1], fmt)}")
        return [e.canonical_bits(r, fmt)]

    return fn


def _fma(fmt: str) -> Semantics:
    """Correctly rounded a*b + c (`floating.build_fma` in round-to-nearest), via LLVM's fma intrinsic."""
    ft = FLOATS[fmt]
    intrinsic = f"@llvm.fma.{'f32' if fmt == 'f32' else 'f64'}"

    def fn(e, s):
        a, b, c = (e.to_float(x, fmt) for x in s)
        return [e.canonical_bits(e(f"call {ft} {intrinsic}({ft} {a}, {ft} {b}, {ft} {c})"), fmt)]

    return fn


def _abs_neg_float(fmt: str, neg: bool) -> Semantics:
    """Sign-bit operations on raw bits (`floating.build_absneg` without .ftz): NaNs keep their payload."""
    it = ir_type(fmt)
    sign = 1 << (width(fmt) - 1)
    if neg:
        return lambda e, s: [e(f"xor {it} {s[0]}, {_signed_literal(sign, width(fmt))}")]
    return lambda e, s: [e(f"and {it} {s[0]}, {_signed_literal(sign - 1, width(fmt))}")]


def _signed_literal(value: int, bits: int) -> int:
    """An unsigned constant as LLVM prints integer literals (two's complement, signed)."""
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _minmax_float(fmt: str, is_max: bool) -> Semantics:
    """`floating.float_minmax` without .NaN: a NaN operand is ignored, -0.0 < +0.0."""
    ft = FLOATS[fmt]
    it = ir_type(fmt)

    def fn(e, s):
        x, y = e.to_float(s[0], fmt), e.to_float(s[1], fmt)
        strict = e(f"fcmp {'ogt' if is_max else 'olt'} {ft} {x}, {y}")
        equal = e(f"fcmp oeq {ft} {x}, {y}")
        negative = e(f"icmp slt {it} {s[0]}, 0")
        tie = e(f"and i1 {equal}, {e(f'xor i1 {negative}, true') if is_max else negative}")
        first = e(f"or i1 {strict}, {tie}")
        y_nan = e(f"fcmp uno {ft} {y}, {y}")
        pick_x = e(f"or i1 {first}, {y_nan}")
        return [e.canonical_bits(e(f"select i1 {pick_x}, {ft} {x}, {ft} {y}"), fmt)]

    return fn


# ------------------------------------------------------------------ comparisons

_FLOAT_CMP = {
    "eq": "oeq", "ne": "one", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge",
    "equ": "ueq", "neu": "une", "ltu": "ult", "leu": "ule", "gtu": "ugt", "geu": "uge",
    "num": "ord", "nan": "uno",
}  # fmt: skip
_UNSIGNED_CMP = {"lo": "ult", "ls": "ule", "hi": "ugt", "hs": "uge", "eq": "eq", "ne": "ne"}
_SIGNED_CMP = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_BOOL_OPS = ("and", "or", "xor")


def _compare(cmp: str, t: str):
    """(emitter, a, b) -> i1, as `compare.comparison` without .ftz; None if the pair is not defined."""
    if t in FLOATS:
        pred = _FLOAT_CMP.get(cmp)
        if pred is None:
            return None
        ft = FLOATS[t]
        return lambda e, a, b: e(f"fcmp {pred} {ft} {e.to_float(a, t)}, {e.to_float(b, t)}")
    if not is_int(t) or t in HALF_FAMILY or t == "pred" or width(t) == 8:
        return None
    if cmp in _UNSIGNED_CMP:
        pred = _UNSIGNED_CMP[cmp]
    elif cmp in _SIGNED_CMP:
        pred = _SIGNED_CMP[cmp] if is_signed(t) else "u" + _SIGNED_CMP[cmp][1:]
    else:
        return None
    it = ir_type(t)
    return lambda e, a, b: e(f"icmp {pred} {it} {a}, {b}")


def _setp(ins: Instruction, flags: set[str], t: str) -> Semantics | None:
    cmps = [f for f in flags if f in _FLOAT_CMP or f in _UNSIGNED_CMP or f in _SIGNED_CMP]
    boolops = [f for f in flags if f in _BOOL_OPS]
    if len(cmps) != 1 or len(boolops) > 1 or len(flags) != 1 + len(boolops):
        return None
    compare = _compare(cmps[0], t)
    if compare is None:
        return None
    boolop = boolops[0] if boolops else None
    pair = bool(ins.operands) and isinstance(ins.operands[0], PredPair)

    def fn(e, s):
        r = compare(e, s[0], s[1])
        first, second = r, e(f"xor i1 {r}, true")
        if boolop is not None:
            first, second = e(f"{boolop} i1 {first}, {s[2]}"), e(f"{boolop} i1 {second}, {s[2]}")
        return [first, second] if pair else [first]

    return fn


def _selp(t: str) -> Semantics:
    it = ir_type(t)
    return lambda e, s: [e(f"select i1 {s[2]}, {it} {s[0]}, {it} {s[1]}")]


# ------------------------------------------------------------------ the table


def semantics_of(ins: Instruction) -> Semantics | None:
    """The IR builder of `ins`'s ALU operation (its `fn`), or None when the form is not compiled."""
    flags, types = _flags(ins)
    op = ins.opcode
    if op == "cvt":
        if flags or len(types) != 2 or types[0] not in CVT_INTS or types[1] not in CVT_INTS:
            return None
        return _cvt_int(types[1], types[0])
    if len(types) != 1:
        return None
    (t,) = types
    if t in FLOATS:
        return _float_semantics(ins, op, flags, t)
    if op in ("add", "sub") and not flags and t in INT_TYPES:
        return _int_binary(op, t)
    if op == "mul":
        return _mul(flags, t)
    if op == "mad":
        return _mad(flags, t)
    if op in ("min", "max") and not flags and t in INT_TYPES:
        return _minmax_int(t, op == "max")
    if op in ("abs", "neg") and not flags and t in ("s16", "s32", "s64"):
        return _abs_neg_int(t, op == "neg")
    if op == "shl" and not flags and t in ("b16", "b32", "b64"):
        return _shift(t, left=True)
    if op == "shr" and not flags and t in BIT_TYPES:
        return _shift(t, left=False)
    if op in ("and", "or", "xor", "not") and not flags and (t in BIT_TYPES or t == "pred"):
        return _logic(op, t)
    if op == "setp":
        return _setp(ins, flags, t)
    if op == "selp" and not flags and t != "pred" and t not in ("b128",):
        return _selp(t)
    return None


def _float_semantics(ins: Instruction, op: str, flags: set[str], fmt: str) -> Semantics | None:
    rounding = flags <= {"rn"}  # round to nearest, stated or implied; no .ftz/.sat
    if op in ("add", "sub", "mul") and rounding:
        return _float_binary({"add": "fadd", "sub": "fsub", "mul": "fmul"}[op], fmt)
    if op in ("fma", "mad") and rounding and len(ins.operands) == 4:
        return _fma(fmt)
    if op in ("abs", "neg") and not flags:
        return _abs_neg_float(fmt, op == "neg")
    if op in ("min", "max") and not flags and len(ins.operands) == 3:
        return _minmax_float(fmt, op == "max")
    if op == "setp":
        return _setp(ins, flags, fmt)
    if op == "selp" and not flags:
        return _selp(fmt)
    return None
