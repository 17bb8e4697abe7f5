"""Parse time of large PTX modules (target: well under 1 s for 10,000 lines).

Run: python benchmarks/bench_parse.py

The modules are nvcc's output for tests/frontend/ptx/stage_lineinfo.ptx
repeated with renamed symbols, so they hold what real PTX holds: `.loc` lines
with inlining chains, call sequences in nested blocks, labels, shared
variables and a `.debug_str` section.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from gpurace.frontend.ptx.parser import parse_ptx

SEED = Path(__file__).resolve().parents[1] / "tests" / "frontend" / "ptx" / "stage_lineinfo.ptx"
REPEAT = 5


def build_module(min_lines: int) -> str:
    """The seed's functions and variables, copied with a suffix on every symbol until `min_lines` is reached."""
    text = SEED.read_text()
    header_end = text.index(".address_size")
    header_end = text.index("\n", header_end) + 1
    tail_start = text.index(".file")
    header, body, tail = text[:header_end], text[header_end:tail_start], text[tail_start:]
    symbols = sorted(set(re.findall(r"\b(_Z\w+|counter|table|where|dyn)\b", body)), key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, symbols)) + r")\b")
    per_copy = body.count("\n")
    copies = [pattern.sub(lambda m, i=i: f"{m.group(1)}_{i}", body) for i in range(-(-min_lines // per_copy))]
    return header + "".join(copies) + tail


def time_parse(text: str) -> float:
    best = float("inf")
    for _ in range(REPEAT):
        start = time.perf_counter()
        parse_ptx(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    print(f"{'lines':>8} {'functions':>10} {'instructions':>13} {'best of 5 (s)':>14} {'lines/s':>12}")
    for target in (10_000, 50_000, 100_000):
        text = build_module(target)
        module = parse_ptx(text)
        lines = text.count("\n")
        instructions = sum(len(f.body) for f in module.functions.values())
        seconds = time_parse(text)
        print(f"{lines:>8} {len(module.functions):>10} {instructions:>13} {seconds:>14.3f} {lines / seconds:>12,.0f}")


if __name__ == "__main__":
    main()
