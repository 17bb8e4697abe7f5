"""What the default check costs and finds, against one schedule of happens-before, on the labelled corpus.

    python benchmarks/bench_default.py [--only DIR ...]

Runs every kernel of `tests/kernels/` and `examples/` that has an `@launch`
header twice through the command line, with the header's launch minus any
`--detector`/`--schedules` choice: once as `--detector hb --schedules 1`
(the happens-before detector on the default schedule) and once with no choice
at all (the default check: `interval` and one schedule for kernels without
atomics, fences or strong accesses; `gwcp` and three schedules for the
others). Prints, per corpus folder and in total, the seconds each took and
their ratio, and the files where the two disagree, with each side's findings.
Figures come from one run, so ratios are comparable and absolute times are not.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from corpus import read_header  # noqa: E402

from gpurace.cli import cli  # noqa: E402

CHOICES = re.compile(r"--(?:detector|schedules)[ =]\S+")
CONFIGS = {"hb, 1 schedule": ["--detector", "hb", "--schedules", "1"], "default": []}


def findings(path: Path, launch: list[str], extra: list[str]) -> tuple[set, float]:
    """The (kind, space, lines) of every finding, and the seconds the check took."""
    start = time.perf_counter()
    result = CliRunner().invoke(cli, ["check", str(path), *launch, "--format", "json", *extra])
    seconds = time.perf_counter() - start
    if result.exit_code not in (0, 1):
        return {("refused", result.output.strip().splitlines()[-1] if result.output.strip() else "?")}, seconds
    report = json.loads(result.stdout)
    return {(f["kind"], f["space"], tuple(sorted(a["line"] for a in f["accesses"]))) for f in report["findings"]}, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="corpus folders to run (names under tests/kernels)")
    opts = ap.parse_args()
    files = sorted([*ROOT.glob("tests/kernels/**/*.cu"), *ROOT.glob("examples/*.cu")])
    seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    differ = []
    for path in files:
        folder = path.parent.name
        if opts.only is not None and folder not in opts.only:
            continue
        header = read_header(path)
        if not header.launches or not header.expect:
            continue
        launch = shlex.split(CHOICES.sub("", header.launches[0]))
        seen = {}
        for name, extra in CONFIGS.items():
            seen[name], took = findings(path, launch, extra)
            seconds[folder][name] += took
        counts[folder] += 1
        if len({frozenset(v) for v in seen.values()}) > 1:
            differ.append((path.relative_to(ROOT), seen))
    names = list(CONFIGS)
    print(f"{'folder':<14} {'kernels':>7} " + " ".join(f"{n:>16}" for n in names) + f" {'ratio':>7}")
    total = defaultdict(float)
    for folder in sorted(seconds):
        row = seconds[folder]
        for n in names:
            total[n] += row[n]
        print(f"{folder:<14} {counts[folder]:>7} " + " ".join(f"{row[n]:>15.1f}s" for n in names) + f" {row[names[1]] / row[names[0]]:>6.2f}x")
    print(f"{'total':<14} {sum(counts.values()):>7} " + " ".join(f"{total[n]:>15.1f}s" for n in names) + f" {total[names[1]] / total[names[0]]:>6.2f}x")
    print(f"\n{len(differ)} kernels where the findings differ:")
    for rel, seen in differ:
        print(f"  {rel}")
        for n in names:
            print(f"    {n}: {sorted(seen[n])}")


if __name__ == "__main__":
    main()
