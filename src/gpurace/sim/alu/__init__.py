"""The simulator's ALU: exact PTX semantics of per-thread, non-memory instructions.

`compile_alu(instr)` decodes an instruction's modifiers once and returns an
`AluOp` whose `fn` computes the instruction for a whole batch of threads with
NumPy; the execution engine handles operands, guards, moves, memory and
control flow. Values cross this boundary as raw bits (see `AluOp`).
"""

from __future__ import annotations

from functools import partial
from typing import Callable

from gpurace.frontend.ptx.ir import Instruction, PredPair
from gpurace.sim.alu import bits, compare, convert, floating, half, integer
from gpurace.sim.alu.modifiers import Mods, unsupported
from gpurace.sim.alu.op import AluOp
from gpurace.sim.alu.rawtypes import HALF_FAMILY

__all__ = ["AluOp", "compile_alu"]

Builder = Callable[[Instruction, Mods], AluOp]

# Opcodes whose meaning depends on whether the type is integer, f32/f64 or half.
_BY_FAMILY: dict[str, tuple[Builder | None, Builder | None, Builder | None]] = {
    "add": (integer.build_add, partial(floating.build_arith, kind="add"), partial(half.build_arith, kind="add")),
    "sub": (partial(integer.build_add, sub=True), partial(floating.build_arith, kind="sub"), partial(half.build_arith, kind="sub")),
    "mul": (integer.build_mul, partial(floating.build_arith, kind="mul"), partial(half.build_arith, kind="mul")),
    "mad": (integer.build_mad, floating.build_fma, None),
    "fma": (None, floating.build_fma, partial(half.build_arith, kind="fma")),
    "div": (integer.build_divrem, floating.build_div, None),
    "abs": (integer.build_abs_neg, partial(floating.build_absneg, neg=False), partial(half.build_absneg, neg=False)),
    "neg": (partial(integer.build_abs_neg, neg=True), partial(floating.build_absneg, neg=True), partial(half.build_absneg, neg=True)),
    "min": (integer.build_minmax, partial(floating.build_minmax, is_max=False), partial(half.build_minmax, is_max=False)),
    "max": (partial(integer.build_minmax, is_max=True), partial(floating.build_minmax, is_max=True), partial(half.build_minmax, is_max=True)),
    "ex2": (None, partial(floating.build_approx, opcode="ex2"), partial(half.build_approx, opcode="ex2")),
    "tanh": (None, partial(floating.build_approx, opcode="tanh"), partial(half.build_approx, opcode="tanh")),
}

_SINGLE: dict[str, Builder] = {
    "addc": integer.build_addc,
    "subc": partial(integer.build_addc, sub=True),
    "madc": integer.build_madc,
    "mul24": integer.build_mul24,
    "mad24": partial(integer.build_mul24, mad=True),
    "sad": integer.build_sad,
    "rem": partial(integer.build_divrem, rem=True),
    "dp4a": integer.build_dot,
    "dp2a": partial(integer.build_dot, two_way=True),
    "and": partial(bits.build_logic, op="and"),
    "or": partial(bits.build_logic, op="or"),
    "xor": partial(bits.build_logic, op="xor"),
    "not": partial(bits.build_logic, op="not"),
    "cnot": partial(bits.build_logic, op="cnot"),
    "lop3": bits.build_lop3,
    "shl": partial(bits.build_shift, left=True),
    "shr": partial(bits.build_shift, left=False),
    "shf": bits.build_shf,
    "prmt": bits.build_prmt,
    "popc": bits.build_popc,
    "clz": bits.build_clz,
    "bfind": bits.build_bfind,
    "fns": bits.build_fns,
    "brev": bits.build_brev,
    "bfe": bits.build_bfe,
    "bfi": bits.build_bfi,
    "szext": bits.build_szext,
    "bmsk": bits.build_bmsk,
    "rcp": floating.build_rcp,
    "sqrt": floating.build_sqrt,
    "rsqrt": partial(floating.build_approx, opcode="rsqrt"),
    "sin": partial(floating.build_approx, opcode="sin"),
    "cos": partial(floating.build_approx, opcode="cos"),
    "lg2": partial(floating.build_approx, opcode="lg2"),
    "copysign": floating.build_copysign,
    "testp": compare.build_testp,
    "setp": compare.build_setp,
    "set": compare.build_set,
    "selp": compare.build_selp,
    "slct": compare.build_slct,
    "cvt": convert.build_cvt,
}

ALU_OPCODES = frozenset(_BY_FAMILY) | frozenset(_SINGLE)


def _builder(instr: Instruction) -> Builder | None:
    if instr.opcode in _SINGLE:
        return _SINGLE[instr.opcode]
    family = _BY_FAMILY.get(instr.opcode)
    if family is None:
        return None
    types = instr.types
    t = types[-1] if types else ""
    index = 2 if t in HALF_FAMILY else 1 if t in ("f32", "f64") else 0
    chosen = family[index]
    if chosen is None:
        raise unsupported(instr, f"{instr.opcode} is not defined for .{t or 'this type'}")
    return chosen


def compile_alu(instr: Instruction) -> AluOp | None:
    """The vectorised semantics of `instr`, or None if it is not an ALU instruction.

    Raises UserError (naming the PTX line and source location) for an ALU
    opcode with modifiers or operands this simulator does not implement.
    """
    build = _builder(instr)
    if build is None:
        return None
    mods = Mods(instr)
    op = build(instr, mods)
    mods.finish()
    pair = _has_pair(instr)
    if pair and len(op.dst_types) != 2:
        raise unsupported(instr, "a destination pair p|q is only for instructions with two results")
    expected = len(op.src_types) + (1 if pair else len(op.dst_types))
    if instr.operands and len(instr.operands) != expected:  # an instruction without operands asks for the semantics only
        raise unsupported(instr, f"expected {expected} operands, found {len(instr.operands)}")
    return op


def _has_pair(instr: Instruction) -> bool:
    return bool(instr.operands) and isinstance(instr.operands[0], PredPair)
