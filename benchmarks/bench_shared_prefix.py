"""What the default check costs over one plain simulation, with the reverse and flip schedules forked from
schedule 0's run (`sim.shared_prefix`) and with every schedule run from the start.

Run: `python benchmarks/bench_shared_prefix.py [--only NAME]`. Prints, per kernel and launch, the seconds of
a plain simulation (`run`), of the default check as it is (forked) and as it was (`share_prefix=False`:
every schedule from the start), each check's ratio to the plain simulation, the steps schedule 0 shares with
the forked ones, and the peak resident memory of the checking process and of the largest process it forked.
Each figure is one run in a fresh process (`harness.measure`), so compare ratios within a row.

Kernels (256 threads per block):

- `reduce_then_ticket`: a grid-stride load and a shared-memory tree reduction per block, then the last-block
  ticket (fence, `atomicInc`, fence), and the last block sums the partial sums the same way: nearly all the
  work comes before the fork point;
- `lock_leader` and `lock_lanes` (`bench_scale.py`'s): the lock is taken at once, so schedules share
  almost nothing.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench_scale import KERNELS as SCALE_KERNELS
from bench_scale import arguments
from harness import compile_all, measure

BLOCK = 256

REDUCE_THEN_TICKET = r"""
    __device__ unsigned int retired = 0;
    __global__ void reduce_then_ticket(const float* in, float* partial, unsigned int n)
    {
        __shared__ float sums[256];
        __shared__ bool last;
        unsigned int t = threadIdx.x;
        float mine = 0;
        for (unsigned int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x)
            mine += in[i];
        sums[t] = mine;
        __syncthreads();
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (t < s) sums[t] = mine = mine + sums[t + s];
            __syncthreads();
        }
        if (t == 0) {
            partial[blockIdx.x] = mine;
            __threadfence();
            last = atomicInc(&retired, gridDim.x) == gridDim.x - 1;
            __threadfence();
        }
        __syncthreads();
        if (last) {  // the last block sums the partial sums as it summed its slice
            mine = 0;
            for (unsigned int b = t; b < gridDim.x; b += blockDim.x)
                mine += partial[b];
            sums[t] = mine;
            __syncthreads();
            for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
                if (t < s) sums[t] = mine = mine + sums[t + s];
                __syncthreads();
            }
            if (t == 0)
                partial[0] = mine;
        }
    }
"""

KERNELS = {"reduce_then_ticket": REDUCE_THEN_TICKET, **{k: SCALE_KERNELS[k] for k in ("lock_leader", "lock_lanes")}}
THREADS = {"reduce_then_ticket": 1 << 19, "lock_leader": 1 << 16, "lock_lanes": 1 << 15}


def launch_args(name: str, n: int) -> list[str]:
    if name == "reduce_then_ticket":
        elements = 8 * n
        return [f"buf:{elements}:rand", f"buf:{n // BLOCK}", str(elements)]
    return arguments(name, n)


CHILD = r"""
import json, resource, sys, time
from gpurace.check import check
from gpurace.sim.launch import simulate
from gpurace.limits import Limits
ptx, mode, launch = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
limits = Limits(max_threads=1 << 26, max_memory=64 << 30, timeout=10**6)
start = time.perf_counter()
shared = 0
if mode == "run":
    simulate(ptx, grid=launch["grid"], block=launch["block"], args=launch["args"], limits=limits, max_steps=10**9)
else:
    report = check(ptx, grid=launch["grid"], block=launch["block"], args=launch["args"], limits=limits,
                   max_steps=10**9, share_prefix=mode == "forked")
    shared = max((r.get("min_pc_steps", 0) for r in report.stats["schedules"]), default=0)
    steps = report.stats["schedules"][0]["steps"]
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "shared": f"{shared}/{steps}" if mode != "run" else "",
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "child_rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(KERNELS))
    opts = parser.parse_args()
    names = opts.only or list(KERNELS)
    with tempfile.TemporaryDirectory() as tmp:
        ptx = compile_all({n: KERNELS[n] for n in names}, Path(tmp))
        print(
            f"{'kernel':<20}{'threads':>9}{'run s':>8}{'forked s':>10}{'x run':>7}{'fresh s':>9}{'x run':>7}"
            f"{'shared steps':>14}{'peak MB':>9}{'fork MB':>9}"
        )
        for name in names:
            n = THREADS[name]
            launch = {"grid": n // BLOCK, "block": BLOCK, "args": launch_args(name, n)}
            run = measure(CHILD, ptx[name], "run", launch)
            forked = measure(CHILD, ptx[name], "forked", launch)
            fresh = measure(CHILD, ptx[name], "fresh", launch)
            base = run["seconds"]
            print(
                f"{name:<20}{n:>9}{base:>8.2f}{forked['seconds']:>10.2f}{forked['seconds'] / base:>7.1f}"
                f"{fresh['seconds']:>9.2f}{fresh['seconds'] / base:>7.1f}{forked['shared']:>14}"
                f"{forked['rss'] / 2**20:>9.0f}{forked['child_rss'] / 2**20:>9.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
