"""What the default check costs and finds on the labelled corpus, against one plain simulation, against one
schedule of happens-before, and against the default check of an earlier revision.

    python benchmarks/bench_default.py [--only DIR ...] [--base REV]

Runs every kernel of `tests/kernels/` and `examples/` that has an `@launch`
header through the command line, with the header's launch minus any
`--detector`/`--schedules` choice, four ways: `gpurace run` (one plain
simulation, no detector), `check --detector hb --schedules 1` (the
happens-before detector on the default schedule), `check` with no choice (the
default check: `interval` and one schedule for kernels without atomics, fences
or strong accesses; `gwcp` and its schedules for the others), and that same
default check under the base revision's `src/` (`git archive`, as
`bench_revisions.py` exports it). Each way runs in a process of its own that
stays up for the whole corpus (so imports are paid once), and each kernel is
compiled (by an untimed `run`) before any of them is timed. Prints, per corpus folder and in total,
the CPU seconds each took (the process and the schedules it forks) and the
ratios, then the files where the default check's findings differ from `hb`'s
and, which should never happen, from the base revision's (JSON findings
compared byte for byte). Figures come from one run, so ratios are comparable
and absolute times are not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bench_revisions import export  # noqa: E402
from corpus import read_header  # noqa: E402

CHOICES = re.compile(r"--(?:detector|schedules)[ =]\S+")
CHECK_ONLY = re.compile(r"--(?:redundant-barriers|search|no-cooperative|cooperative)\b|--(?:population|generations)[ =]\S+")
"""Options of `check` that `run` does not take: the plain simulation runs the same launch without them."""

COLUMNS = ("run", "hb, 1 schedule", "default", "base default")

WORKER = r"""
import json, resource, sys, time
from click.testing import CliRunner
from gpurace.cli import cli
def cpu():
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
for line in sys.stdin:
    argv = json.loads(line)
    start, wall = cpu(), time.perf_counter()
    result = CliRunner().invoke(cli, argv)
    took, wall = cpu() - start, time.perf_counter() - wall
    out = {"cpu": took, "wall": wall, "exit": result.exit_code, "findings": None}
    if argv[0] == "check" and result.exit_code in (0, 1):
        out["findings"] = json.loads(result.stdout)["findings"]
    elif result.exit_code not in (0, 1):
        out["error"] = result.output.strip().splitlines()[-1] if result.output.strip() else "?"
    print(json.dumps(out), flush=True)
"""


class Worker:
    """One long-lived process running `gpurace` commands in-process, under the `src/` on `path`."""

    def __init__(self, path: Path):
        env = dict(os.environ, PYTHONPATH=str(path))
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def __call__(self, argv: list[str]) -> dict:
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def summary(findings: list | None) -> set:
    """The (kind, space, lines) of every finding."""
    return {(f["kind"], f["space"], tuple(sorted(a["line"] for a in f["accesses"]))) for f in findings or []}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="corpus folders to run (names under tests/kernels)")
    ap.add_argument("--base", default="main", help="the revision whose default check to compare with (default: main)")
    opts = ap.parse_args()
    files = sorted([*ROOT.glob("tests/kernels/**/*.cu"), *ROOT.glob("examples/*.cu")])
    seconds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    differ, changed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tree, base = Worker(ROOT / "src"), Worker(export(opts.base, Path(tmp)))
        try:
            for path in files:
                folder = path.parent.name
                if opts.only is not None and folder not in opts.only:
                    continue
                header = read_header(path)
                if not header.launches or not header.expect:
                    continue
                launch = shlex.split(CHOICES.sub("", header.launches[0]))
                plain = ["run", str(path), *shlex.split(CHECK_ONLY.sub("", shlex.join(launch)))]
                tree(plain)  # compiles the kernel into the cache that every run below reads
                runs = {
                    "run": tree(plain),
                    "hb, 1 schedule": tree(["check", str(path), *launch, "--format", "json", "--detector", "hb", "--schedules", "1"]),
                    "default": tree(["check", str(path), *launch, "--format", "json"]),
                    "base default": base(["check", str(path), *launch, "--format", "json"]),
                }
                for name, got in runs.items():
                    seconds[folder][name] += got["cpu"]
                counts[folder] += 1
                rel = path.relative_to(ROOT)
                hb, default = summary(runs["hb, 1 schedule"]["findings"]), summary(runs["default"]["findings"])
                if hb != default:
                    differ.append((rel, hb, default))
                if json.dumps(runs["default"]["findings"]) != json.dumps(runs["base default"]["findings"]):
                    changed.append((rel, summary(runs["base default"]["findings"]), default))
        finally:
            tree.close()
            base.close()
    print(f"CPU seconds; default check of this tree and of {opts.base}, against `run` and `hb` on one schedule")
    print(f"{'folder':<14}{'kernels':>8}" + "".join(f"{n:>16}" for n in COLUMNS) + f"{'default/run':>13}{'base/run':>10}{'default/hb':>12}")
    total: dict[str, float] = defaultdict(float)
    for folder in sorted(seconds):
        row = seconds[folder]
        for n in COLUMNS:
            total[n] += row[n]
        _print_row(folder, counts[folder], row)
    _print_row("total", sum(counts.values()), total)
    print(f"\n{len(differ)} kernels where the default check's findings differ from hb's on one schedule:")
    for rel, hb, default in differ:
        print(f"  {rel}\n    hb: {sorted(hb)}\n    default: {sorted(default)}")
    print(f"\n{len(changed)} kernels where the default check's JSON findings differ from {opts.base}'s:")
    for rel, old, new in changed:
        print(f"  {rel}\n    {opts.base}: {sorted(old)}\n    this tree: {sorted(new)}")


def _print_row(label: str, count: int, row: dict[str, float]) -> None:
    ratios = (row["default"] / row["run"], row["base default"] / row["run"], row["default"] / row["hb, 1 schedule"])
    print(f"{label:<14}{count:>8}" + "".join(f"{row[n]:>15.1f}s" for n in COLUMNS) + "".join(f"{r:>{w}.2f}x" for r, w in zip(ratios, (12, 9, 11))))


if __name__ == "__main__":
    main()
