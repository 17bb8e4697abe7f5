"""Counting words in messages: `1 byte`, `2 bytes`, `1 thread`, `0 findings`.

A count whose value comes from the input ("the grid has 1 blocks") must read
right for every value, so any message that puts a number before a noun goes
through `plural` (sizes that may be large go through `gpurace.limits.format_size`).
"""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and `noun`, the noun in the plural unless `count` is 1: `plural(1, "byte")` is `1 byte`.

    `many` is the plural form where adding `s` is wrong (`plural(n, "candidate input")` is fine as is,
    `plural(n, "match", "matches")` needs it). The count is written as it is, so exact values stay exact.
    """
    word = noun if count == 1 else (many or noun + "s")
    return f"{count} {word}"
