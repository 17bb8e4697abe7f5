"""Integer instructions as verify computes them (`verify.semantics`), against the PTX ISA's pseudocode."""

from __future__ import annotations

import random

import pytest
import z3

from gpurace.frontend.ptx.ir import Instruction
from gpurace.verify.semantics import arith
from gpurace.verify.terms import Value


def _bfi_reference(a: int, b: int, pos: int, length: int, width: int) -> int:
    """`bfi` as the ISA writes it: f = b; f[pos + i] = a[i] for i < len while pos + i <= msb."""
    pos, length, f = pos & 0xFF, length & 0xFF, b
    for i in range(length):
        if pos + i > width - 1:
            break
        bit = (a >> i) & 1
        f = (f & ~(1 << (pos + i))) | (bit << (pos + i))
    return f


def _bfi(a: int, b: int, pos: int, length: int, width: int) -> int:
    ins = Instruction("bfi", (f"b{width}",), ())
    srcs = [Value(z3.BitVecVal(v, w)) for v, w in ((a, width), (b, width), (pos, 32), (length, 32))]
    return z3.simplify(arith(ins, srcs).term).as_long()


@pytest.mark.parametrize("width", [32, 64])
def test_bfi_with_constant_position_and_length_is_exact(width):
    rng = random.Random(width)
    cases = [(32, 32), (0, 0), (0, width), (width - 1, 8), (width, 4), (300, 8), (4, 260)]
    cases += [(rng.randrange(0, 80), rng.randrange(0, 80)) for _ in range(40)]
    for pos, length in cases:
        a, b = rng.getrandbits(width), rng.getrandbits(width)
        assert _bfi(a, b, pos, length, width) == _bfi_reference(a, b, pos, length, width), (pos, length)


def test_bfi_with_a_variable_position_is_not_modelled():
    ins = Instruction("bfi", ("b32",), ())
    srcs = [Value(z3.BitVecVal(1, 32)), Value(z3.BitVecVal(0, 32)), Value(z3.BitVec("pos", 32)), Value(z3.BitVecVal(4, 32))]
    assert arith(ins, srcs) is None
