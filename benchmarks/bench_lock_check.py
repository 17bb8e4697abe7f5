"""What the default check costs over one plain simulation on lock kernels, from 2^10 threads up, under this
tree's code and under an earlier revision's.

Run: `python benchmarks/bench_lock_check.py [--base main] [--min-log2 10] [--max-log2 16] [--only NAME]
[--repeat 1]`. Prints, per kernel (`bench_scale.py`'s `lock_leader`, every block's leader taking one device
lock, and `lock_lanes`, every lane taking one of n/32 locks) and size, the CPU seconds (this process and the
schedules it forks) of one plain simulation (`simulate`: min-pc, no detector), of the default check (its
schedules with the `gwcp` detector) under the base revision (`git archive` of its `src/`, as
`bench_revisions.py` exports it) and under this tree, each check's ratio to the simulation, the schedules
this tree's check ran and whether both checks found the same; then the fitted exponent of each column's time
against threads. Each figure is the best of `--repeat` runs, each in a fresh process (`harness.measure`).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from bench_revisions import export
from bench_scale import BLOCK, KERNELS, arguments, fitted_exponent
from harness import compile_all, measure

NAMES = ("lock_leader", "lock_lanes")

CHILD = r"""
import json, resource, sys
from gpurace.check import check
from gpurace.sim.launch import simulate
from gpurace.limits import Limits
ptx, mode, launch = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
limits = Limits(max_threads=1 << 26, max_memory=64 << 30, timeout=10**6)
def cpu():  # the schedules forked from schedule 0's run (`sim.shared_prefix`) are children
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
start = cpu()
if mode == "simulate":
    res = simulate(ptx, grid=launch["grid"], block=launch["block"], args=launch["args"], limits=limits, max_steps=10**9)
    runs, findings = 1, res.findings
else:
    report = check(ptx, grid=launch["grid"], block=launch["block"], args=launch["args"], limits=limits, max_steps=10**9)
    runs, findings = len(report.stats.get("schedules", [None])), report.findings
print(json.dumps({"cpu": cpu() - start, "runs": runs, "findings": sorted((f.kind, f.count) for f in findings)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the revision to compare with (default: main)")
    parser.add_argument("--min-log2", type=int, default=10)
    parser.add_argument("--max-log2", type=int, default=16)
    parser.add_argument("--only", action="append", choices=NAMES)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, the best kept")
    opts = parser.parse_args()
    names = opts.only or list(NAMES)
    here = Path(__file__).resolve().parent.parent / "src"
    with tempfile.TemporaryDirectory() as tmp:
        envs = {"base": dict(os.environ, PYTHONPATH=str(export(opts.base, Path(tmp)))), "tree": dict(os.environ, PYTHONPATH=str(here))}
        ptx = compile_all({n: KERNELS[n] for n in names}, Path(tmp))

        def best(name: str, mode: str, launch: dict, env: dict) -> dict:
            return min((measure(CHILD, ptx[name], mode, launch, env=env) for _ in range(opts.repeat)), key=lambda row: row["cpu"])

        print(f"CPU seconds, best of {opts.repeat}; base {opts.base} against this tree; {BLOCK} threads per block")
        print(f"{'kernel':<12}{'threads':>9}{'simulate':>10}{'base check':>12}{'x sim':>7}{'check':>8}{'x sim':>7}{'runs':>6}  same findings")
        for name in names:
            points: dict[str, list] = {"sim": [], "base": [], "tree": []}
            for log2 in range(opts.min_log2, opts.max_log2 + 1):
                n = 1 << log2
                launch = {"grid": n // BLOCK, "block": BLOCK, "args": arguments(name, n)}
                sim = best(name, "simulate", launch, envs["tree"])
                base, tree = (best(name, "check", launch, envs[label]) for label in ("base", "tree"))
                s, b, t = sim["cpu"], base["cpu"], tree["cpu"]
                print(
                    f"{name:<12}{n:>9}{s:>10.2f}{b:>12.2f}{b / s:>7.1f}{t:>8.2f}{t / s:>7.1f}{tree['runs']:>6}  "
                    f"{'yes' if base['findings'] == tree['findings'] else 'NO'}",
                    flush=True,
                )
                if log2 >= opts.min_log2 + 2:
                    for key, seconds in (("sim", s), ("base", b), ("tree", t)):
                        points[key].append((n, seconds))
            ks, kb, kt = (fitted_exponent(points[key]) for key in ("sim", "base", "tree"))
            if ks is not None:
                print(f"{name:<12}{'exponent':>9}{ks:>10.2f}{kb:>12.2f}{'':>7}{kt:>8.2f}\n", flush=True)


if __name__ == "__main__":
    main()
