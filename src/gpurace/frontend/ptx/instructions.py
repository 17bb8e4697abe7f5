"""One instruction statement: guard, dotted opcode, operands, up to the `;`.

This is the hot path of the parser (most PTX lines are instructions), so the
operand parser works on the token tuples directly and builds each IR operand
in one step.
"""

from __future__ import annotations

import re

from gpurace.frontend.ptx.cursor import Cursor, describe, hex_float, int_value
from gpurace.frontend.ptx.ir import (
    Addr,
    Guard,
    Imm,
    Instruction,
    Negated,
    Operand,
    ParamList,
    PredPair,
    Reg,
    Sink,
    SourceLoc,
    SpecialReg,
    Sym,
    Vec,
)
from gpurace.frontend.ptx.vocabulary import (
    OPCODES,
    SPECIAL_NUMBERED,
    SPECIAL_SCALARS,
    SPECIAL_VECTORS,
    VECTOR_COMPONENTS,
)

_SINK = Sink()
_TIGHT = re.compile(r"\s*([,)])|(?<=\()\s+")


class InstructionParser:
    """Parses instructions of one function; `registers` holds its register names without `%`.

    PTX lets `.reg` declare names without the `%` sigil (inline assembly often
    does: `.reg .pred p;`), so whether a bare word is a register or a symbol
    depends on the declarations seen so far.
    """

    def __init__(self, cur: Cursor, registers: set[str]):
        self.cur = cur
        self.registers = registers
        self._regs: dict[str, Operand] = {}

    def parse(self, loc: SourceLoc | None) -> Instruction:
        cur = self.cur
        first = cur.peek()
        guard = None
        if first[1] == "@":
            cur.take()
            negated = cur.accept("!")
            guard_tok = cur.expect_kind("word", "a predicate after '@'")
            reg = self._word_operand(guard_tok)
            if not isinstance(reg, Reg):
                raise cur.error(f"the guard {guard_tok[1]} is not a predicate register", first)
            guard = Guard(reg, negated)
        op_tok = cur.take()
        if op_tok[0] != "word":
            raise cur.error(f"expected an instruction, found {describe(op_tok)}", op_tok)
        opcode, *modifiers = op_tok[1].split(".")
        if opcode not in OPCODES:
            raise cur.error(f"unknown instruction opcode {opcode!r}", op_tok)
        operands: list[Operand] = []
        if not cur.accept(";"):
            while True:
                operands.append(self._operand())
                if cur.accept(","):
                    continue
                end = cur.peek()
                if end[1] == ";" and end[0] == "punct":
                    cur.take()
                    break
                raise cur.error(f"expected ',' or ';' after an operand, found {describe(end)}", end)
        end_offset = cur.tokens[cur.i - 1][2]
        text = cur.source.text[first[2] : end_offset]
        if "\n" in text:  # nvcc spreads calls over lines: `call.uni (retval0), \n\t_Z3fooi, \n\t(\n\tparam0\n\t)`
            text = _TIGHT.sub(r"\1", " ".join(text.split()))
        else:
            text = " ".join(text.split())
        return Instruction(
            opcode, tuple(modifiers), tuple(operands), guard, loc, cur.source.line_of(first[2]), text
        )

    # -- operands ---------------------------------------------------------------

    def _operand(self) -> Operand:
        cur = self.cur
        tok = cur.take()
        kind, text = tok[0], tok[1]
        if kind == "word":
            operand = self._word_operand(tok)
            if cur.peek()[1] == "|" and isinstance(operand, Reg):
                cur.take()
                second_tok = cur.expect_kind("word", "a predicate after '|'")
                second = self._word_operand(second_tok)
                if not isinstance(second, Reg):
                    raise cur.error(f"{second_tok[1]} cannot follow '|': it is not a register", tok)
                return PredPair(operand, second)
            return operand
        if kind == "int":
            return Imm(int_value(tok, cur))
        if kind == "punct":
            if text == "[":
                return self._address()
            if text == "{":
                return Vec(self._list("}"))
            if text == "(":
                return ParamList(self._list(")"))
            if text == "-":
                return self._negative()
            if text == "!":
                reg_tok = cur.expect_kind("word", "a predicate after '!'")
                reg = self._word_operand(reg_tok)
                if not isinstance(reg, Reg):
                    raise cur.error(f"{reg_tok[1]} cannot be negated: it is not a register", tok)
                return Negated(reg)
        if kind == "fhex":
            value, fkind, bits = hex_float(text)
            return Imm(value, fkind, bits)
        if kind == "float":
            return Imm(float(text), "f64")
        raise cur.error(f"expected an operand, found {describe(tok)}", tok)

    def _word_operand(self, tok) -> Operand:
        """A register, special register, sink or symbol, from one `word` token."""
        text = tok[1]
        cached = self._regs.get(text)
        if cached is not None:
            return cached
        if text[0] == "%":
            base, _, component = text[1:].partition(".")
            if component in VECTOR_COMPONENTS and base in SPECIAL_VECTORS:
                operand: Operand = SpecialReg(base, component)
            elif not component and (base in SPECIAL_SCALARS or SPECIAL_NUMBERED.fullmatch(base)):
                operand = SpecialReg(base)
            elif base in SPECIAL_VECTORS or base in SPECIAL_SCALARS:
                raise self.cur.error(f"malformed special register {text!r}", tok)
            else:
                operand = Reg(text)
            self._regs[text] = operand
            return operand
        if text == "_":
            return _SINK
        if text in self.registers:
            return Reg(text)
        return Sym(text)

    def _negative(self) -> Imm:
        cur = self.cur
        tok = cur.take()
        if tok[0] == "int":
            return Imm(-int_value(tok, cur))
        if tok[0] == "fhex":
            value, fkind, _ = hex_float(tok[1])
            return Imm(-value, fkind, _negated_bits(tok[1]))
        if tok[0] == "float":
            return Imm(-float(tok[1]), "f64")
        raise cur.error(f"expected a number after '-', found {describe(tok)}", tok)

    def _list(self, close: str) -> tuple[Operand, ...]:
        """Operands separated by commas up to `close` (a vector or a call's parameter list)."""
        cur = self.cur
        items: list[Operand] = []
        if cur.accept(close):
            return ()
        while True:
            items.append(self._operand())
            if cur.accept(close):
                return tuple(items)
            cur.expect(",", f"',' or {close!r}")

    def _address(self) -> Operand:
        """`[%rd1]`, `[%rd1+8]`, `[%rd1+-4]`, `[sym+4]`, `[0x1000]`; `[tex, {coords}]` is a Vec."""
        cur = self.cur
        tok = cur.peek()
        if tok[0] == "word":
            cur.take()
            base = self._word_operand(tok)
            if not isinstance(base, (Reg, Sym)):
                raise cur.error(f"{describe(tok)} cannot be an address", tok)
            offset = 0
            if cur.accept("+"):
                offset = cur.integer("an address offset")
            elif cur.accept("-"):
                offset = -cur.integer("an address offset")
            if cur.accept(","):
                rest = [base]
                while True:
                    rest.append(self._operand())
                    if cur.accept("]"):
                        return Vec(tuple(rest))
                    cur.expect(",", "',' or ']'")
            cur.expect("]", "']' closing an address")
            return Addr(base, offset)
        if tok[0] == "int" or tok[1] == "-":
            value = cur.integer("an address")
            cur.expect("]", "']' closing an address")
            return Addr(None, value)
        raise cur.error(f"expected an address, found {describe(tok)}", tok)


def _negated_bits(text: str) -> int:
    """The bit pattern of `-0f...`/`-0d...`: the literal's bits with the sign bit flipped."""
    bits = int(text[2:], 16)
    return bits ^ (1 << 31 if text[1] in "fF" else 1 << 63)
