"""Fuzzing the simulator with mutated PTX: `gpurace check` ends with 0, 1 or 2, never a crash.

Each case takes one seed (nvcc's PTX for a small kernel, `ptx/*.ptx`),
applies a few instruction-level edits (`ptx_mutations`) and runs the default
check on a small launch with a small step budget, through the CLI. A PTX
program the simulator cannot handle must say so (exit 2 with a message);
anything else that escapes is a bug in gpurace.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from fuzz.fuzzing import FUZZ, assert_handled
from fuzz.ptx_mutations import apply, edit_declaration, edit_instruction, edit_structure, seeds
from hypothesis import given
from hypothesis import strategies as st

SEEDS = seeds()
BLOCKS = ("32", "48", "64")  # 48: a partial last warp


def check_mutant(seed, edits, block: str) -> None:
    """Write the mutant and run the default check on it, asserting that it is handled."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{seed.name}.ptx"
        path.write_text(apply(seed, edits))
        assert_handled(["check", str(path), "--grid", "2", "--block", block, "--max-steps", "2000"])


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: s.name)
def test_the_seeds_are_handled(seed):
    check_mutant(seed, [], "32")


def mutants(edit):
    """(seed, edits, block) with one to four edits drawn by `edit(seed)`."""
    return st.sampled_from(SEEDS).flatmap(
        lambda seed: st.tuples(st.just(seed), st.lists(edit(seed), min_size=1, max_size=4), st.sampled_from(BLOCKS))
    )


@FUZZ
@given(mutants(edit_instruction))
def test_edited_instructions(case):
    check_mutant(*case)


@FUZZ
@given(mutants(edit_structure))
def test_moved_deleted_and_retargeted_lines(case):
    check_mutant(*case)


@FUZZ
@given(mutants(edit_declaration))
def test_resized_declarations(case):
    check_mutant(*case)
