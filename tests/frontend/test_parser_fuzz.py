"""Fuzzing the PTX parser: whatever the input, a Module or a PtxSyntaxError, nothing else.

Mutations start from real nvcc output (tests/frontend/ptx/stage_lineinfo.ptx)
so that most inputs get deep into the parser before they break.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpurace.errors import PtxSyntaxError
from gpurace.frontend.ptx.ir import Module
from gpurace.frontend.ptx.parser import parse_ptx

PTX = (Path(__file__).parent / "ptx" / "stage_lineinfo.ptx").read_text()
# Words, numbers, whitespace runs and single punctuation characters.
PIECES = re.findall(r"[\w.%$:]+|\s+|.", PTX, flags=re.DOTALL)
PUNCTUATION = "{}()[],;:+-=<>|!@._%$\"/*#\\\n\t 0fdx"

mutation = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, len(PIECES) - 1)),
    st.tuples(st.just("duplicate"), st.integers(0, len(PIECES) - 1)),
    st.tuples(st.just("swap"), st.integers(0, len(PIECES) - 1), st.integers(0, len(PIECES) - 1)),
    st.tuples(st.just("insert"), st.integers(0, len(PIECES)), st.text(PUNCTUATION, min_size=1, max_size=3)),
    st.tuples(st.just("replace"), st.integers(0, len(PIECES) - 1), st.sampled_from(sorted(set(PIECES)))),
)


def mutate(pieces: list[str], steps) -> str:
    out = list(pieces)
    for step in steps:
        kind, at = step[0], min(step[1], max(len(out) - 1, 0))
        if not out:
            break
        if kind == "delete":
            del out[at]
        elif kind == "duplicate":
            out.insert(at, out[at])
        elif kind == "swap":
            other = min(step[2], len(out) - 1)
            out[at], out[other] = out[other], out[at]
        elif kind == "insert":
            out.insert(step[1], step[2])
        else:
            out[at] = step[2]
    return "".join(out)


def parses_or_raises_syntax_error(text: str) -> None:
    try:
        result = parse_ptx(text, "fuzz.ptx")
    except PtxSyntaxError as error:
        assert error.line >= 1
        assert str(error).startswith("fuzz.ptx:")
    else:
        assert isinstance(result, Module)


def test_the_seed_parses():
    assert parse_ptx(PTX).kernels


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutation, min_size=1, max_size=6))
def test_mutated_ptx(steps):
    parses_or_raises_syntax_error(mutate(PIECES, steps))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(PTX)))
def test_truncated_ptx(cut):
    parses_or_raises_syntax_error(PTX[:cut])


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_random_text(text):
    parses_or_raises_syntax_error(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(sorted(set(PIECES))), max_size=60))
def test_shuffled_ptx_pieces(pieces):
    parses_or_raises_syntax_error(".version 8.0\n.target sm_75\n" + "".join(pieces))
