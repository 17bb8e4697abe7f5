"""How simulation cost grows with the number of threads: time and peak memory from 2^10 threads up.

Run: `python benchmarks/bench_scale.py [--min-log2 10] [--max-log2 20] [--mode simulate|check]
[--only NAME] [--budget SECONDS]`. Prints, per kernel, one row per size (seconds,
peak resident memory, bytes per thread, thread-instructions per second) and
the fitted exponent of time against threads over the sizes measured (1.0 is
linear; the smallest sizes, dominated by fixed costs, are left out of the
fit). A kernel stops growing once one size takes longer than `--budget`
seconds. Each run is its own process (`harness.measure`), so its peak memory
is its own. `--mode check` runs the default check (schedules and detectors)
instead of one plain simulation.

Kernels (256 threads per block):

- `saxpy`: converged arithmetic, no synchronisation (`bench_sim.py`'s);
- `reduction`: a shared-memory tree reduction, a barrier per step (`bench_sim.py`'s);
- `histogram`: shared-memory atomics into 64 bins, then global atomics;
- `lock_leader`: each block's thread 0 takes one device-wide spin lock (the
  serial depth is the number of blocks; the waiters park until the lock word
  changes, `sim.parking`, so its cost is linear in the blocks);
- `lock_lanes`: every thread takes one of n/32 spin locks (lock `i % (n/32)`:
  32 contenders from 32 different warps per lock, so the serial depth stays
  32 whatever n).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import tempfile
from pathlib import Path

from bench_sim import SAXPY_LOOP, TREE_REDUCE
from harness import compile_all, measure

BLOCK = 256

KERNELS = {
    "saxpy": SAXPY_LOOP,
    "reduction": TREE_REDUCE,
    "histogram": r"""
        __global__ void histogram(const unsigned* in, unsigned* bins)
        {
            __shared__ unsigned local[64];
            if (threadIdx.x < 64)
                local[threadIdx.x] = 0;
            __syncthreads();
            atomicAdd(&local[in[blockIdx.x * blockDim.x + threadIdx.x] % 64], 1u);
            __syncthreads();
            if (threadIdx.x < 64)
                atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
        }
    """,
    "lock_leader": r"""
        __global__ void lock_leader(int* mutex, int* total)
        {
            if (threadIdx.x == 0) {
                while (atomicCAS(mutex, 0, 1) != 0) {
                }
                __threadfence();
                *total = *total + 1;
                __threadfence();
                atomicExch(mutex, 0);
            }
        }
    """,
    "lock_lanes": r"""
        __global__ void lock_lanes(int* locks, int* counts, int nlocks)
        {
            int i = (blockIdx.x * blockDim.x + threadIdx.x) % nlocks;
            bool done = false;
            while (!done) {
                if (atomicCAS(&locks[i], 0, 1) == 0) {
                    __threadfence();
                    counts[i] = counts[i] + 1;
                    __threadfence();
                    atomicExch(&locks[i], 0);
                    done = true;
                }
            }
        }
    """,
}


def arguments(name: str, n: int) -> list[str]:
    """The `--arg` values of one launch of `n` threads."""
    return {
        "saxpy": ["2.0", f"buf:{n}:rand", f"buf:{n}", str(n)],
        "reduction": [f"buf:{n}:rand", f"buf:{n // BLOCK}"],
        "histogram": [f"buf:{n}:rand", "buf:64"],
        "lock_leader": ["buf:1", "buf:1"],
        "lock_lanes": [f"buf:{n // 32}", f"buf:{n // 32}", str(n // 32)],
    }[name]


CHILD = r"""
import json, resource, sys, time
from gpurace.check import check
from gpurace.sim.launch import simulate
from gpurace.limits import Limits
ptx, mode, launch = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
args = launch["args"]
limits = Limits(max_threads=1 << 26, max_memory=64 << 30, timeout=10**6)
start = time.perf_counter()
if mode == "simulate":
    res = simulate(ptx, grid=launch["grid"], block=launch["block"], args=args, limits=limits, max_steps=10**9)
    ti, findings = res.stats.thread_instructions, res.findings
else:
    report = check(ptx, grid=launch["grid"], block=launch["block"], args=args, limits=limits, max_steps=10**9)
    ti, findings = report.stats["thread_instructions"], report.findings
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "ti": ti, "findings": sorted({f.kind for f in findings})}))
"""


def fitted_exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) against log(threads)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(s) for _, s in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-log2", type=int, default=10)
    parser.add_argument("--max-log2", type=int, default=20)
    parser.add_argument("--mode", choices=("simulate", "check"), default="simulate")
    parser.add_argument("--only", action="append", choices=sorted(KERNELS))
    parser.add_argument("--budget", type=float, default=60.0, help="stop a kernel's sizes after a run this long")
    opts = parser.parse_args()
    names = opts.only or list(KERNELS)
    with tempfile.TemporaryDirectory() as tmp:
        ptx = compile_all({n: KERNELS[n] for n in names}, Path(tmp))
        print(f"mode: {opts.mode}; {BLOCK} threads per block")
        print(f"{'kernel':<12}{'threads':>10}{'seconds':>10}{'peak MB':>10}{'B/thread':>10}{'M thr-instr/s':>15}  findings")
        for name in names:
            points = []
            for log2 in range(opts.min_log2, opts.max_log2 + 1):
                n = 1 << log2
                launch = {"grid": n // BLOCK, "block": BLOCK, "args": arguments(name, n)}
                try:
                    row = measure(CHILD, ptx[name], opts.mode, launch)
                except subprocess.CalledProcessError as err:
                    print(f"{name:<12}{n:>10}  failed: {err.stderr.strip().splitlines()[-1]}")
                    break
                s = row["seconds"]
                print(
                    f"{name:<12}{n:>10}{s:>10.2f}{row['rss'] / 2**20:>10.0f}{row['rss'] / n:>10.0f}"
                    f"{row['ti'] / s / 1e6:>15.1f}  {', '.join(row['findings']) or '-'}",
                    flush=True,
                )
                if log2 >= opts.min_log2 + 2:
                    points.append((n, s))
                if s > opts.budget:
                    break
            k = fitted_exponent(points)
            print(f"{name:<12}{'exponent':>10}{'' if k is None else f'{k:>10.2f}'}\n", flush=True)


if __name__ == "__main__":
    main()
