"""The compiled form of one ALU instruction, as the execution engine calls it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class AluOp:
    """Per-thread arithmetic for one static instruction, vectorised over threads.

    `fn` takes one raw-bits array per source (dtype by size: uint8/16/32/64,
    bool for predicates) plus `carry=` when `carry_in`; it returns one array
    per destination (a tuple when there are several) followed, when
    `carry_out`, by the carry-out bool array.
    """

    src_types: tuple[str, ...]
    dst_types: tuple[str, ...]
    fn: Callable
    carry_in: bool = False
    carry_out: bool = False
