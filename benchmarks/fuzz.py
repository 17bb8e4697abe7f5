"""A long fuzzing campaign: the fuzz tests of tests/fuzz/ with many random inputs each.

CI runs every fuzz test with a few dozen derandomised inputs; this script runs
them with `--examples` random inputs each, seeded by `--seed`, and prints a
table: per test, the inputs tried, how many failed (a failure is an exit
status other than 0, 1 or 2, a traceback, or a run past its budget) and the
seconds spent. A failing test also prints Hypothesis's shrunk example, so
that it can be turned into a regression test.

    .venv/bin/python benchmarks/fuzz.py --examples 2000 --seed 7 [-k traces]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Hypothesis's statistics: "- during generate phase (1.23 seconds):" ... "- 40 passing examples, 0 failing examples, 3 invalid examples"
_TEST = re.compile(r"^(tests/fuzz/\S+::\S+):$", re.M)
_COUNTS = re.compile(r"(\d+) passing examples?, (\d+) failing examples?, (\d+) invalid examples?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="random inputs per fuzz test (default 1000)")
    parser.add_argument("--seed", type=int, default=int(time.time()), help="Hypothesis seed (default: the time)")
    parser.add_argument("-k", dest="select", default=None, help="only the fuzz tests whose names match (pytest -k)")
    opts = parser.parse_args()

    env = {**os.environ, "GPURACE_FUZZ_EXAMPLES": str(opts.examples), "GPURACE_FUZZ_SEED": str(opts.seed)}
    cmd = [sys.executable, "-m", "pytest", "tests/fuzz", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
           f"--hypothesis-seed={opts.seed}"]
    if opts.select:
        cmd += ["-k", opts.select]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start

    rows = _statistics(proc.stdout)
    print(f"fuzz campaign: seed {opts.seed}, {opts.examples} inputs per test, {seconds:.0f} s in all")
    print(f"{'test':78} {'tried':>7} {'failed':>7}")
    for name, (passed, failed, invalid) in rows.items():
        print(f"{name:78} {passed + failed + invalid:7d} {failed:7d}")
    total = sum(sum(counts) for counts in rows.values())
    failures = sum(counts[1] for counts in rows.values())
    print(f"{'total':78} {total:7d} {failures:7d}")
    if proc.returncode != 0:
        print("\nfailures (pytest's report):\n" + _failures(proc.stdout))
    return proc.returncode


def _statistics(output: str) -> dict[str, tuple[int, int, int]]:
    """Per test, (passing, failing, invalid) examples summed over Hypothesis's phases."""
    rows: dict[str, list[int]] = {}
    marks = list(_TEST.finditer(output))
    for mark, following in zip(marks, marks[1:] + [None]):
        block = output[mark.end() : following.start() if following else len(output)]
        counts = rows.setdefault(mark.group(1), [0, 0, 0])
        for m in _COUNTS.finditer(block):
            for i in range(3):
                counts[i] += int(m.group(i + 1))
    return {name: tuple(c) for name, c in rows.items()}


def _failures(output: str) -> str:
    start = output.find("= FAILURES =")
    end = output.find("Hypothesis Statistics")
    return output[start if start >= 0 else 0 : end if end > start else len(output)].strip()


if __name__ == "__main__":
    raise SystemExit(main())
