"""Detection cost over plain simulation, and peak memory of happens-before (gwcp, tsan) detection with locks.

    python benchmarks/bench_detect.py

Each configuration runs in its own process so that its peak resident memory
(`ru_maxrss`) is its own. Kernels are compiled once up front. Figures are
ratios against the plain simulation measured in the same run.

Targets (issue): detection <= 3x plain simulation for barrier-only kernels
(interval detector), <= 10x with happens-before, < 2 GB peak for 65,536
threads using locks. The predictive `gwcp` detector and ThreadSanitizer's
shadow cells (`tsan`, 4 cells per 8-byte word) are measured beside `hb`: they
share its happens-before, so the difference is their own bookkeeping.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness import compile_all, measure

KERNELS = {
    "saxpy": (
        r"""
        __global__ void saxpy(const float* x, float* y, float a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) { float v = y[i]; for (int k = 0; k < 8; ++k) v = a * x[i] + v * 0.5f; y[i] = v; }
        }
        """,
        dict(grid=(4096,), block=(256,), args=["f32:1048576:ones", "f32:1048576", "2.0", "1048576"]),
    ),
    "reduce": (
        r"""
        __global__ void reduce(const int* in, int* out) {
          __shared__ int s[256];
          int t = threadIdx.x;
          s[t] = in[blockIdx.x * 256 + t];
          __syncthreads();
          for (int k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
          if (t == 0) out[blockIdx.x] = s[0];
        }
        """,
        dict(grid=(4,), block=(256,), args=["buf:1024:iota", "buf:4"]),
    ),
    "locks-65536": (
        r"""
        __global__ void locked_count(int* locks, int* counters) {
          int b = blockIdx.x;
          while (atomicCAS(&locks[b], 0, 1) != 0) {}
          __threadfence();
          counters[b] += 1;
          __threadfence();
          atomicExch(&locks[b], 0);
        }
        """,
        dict(grid=(256,), block=(256,), args=["buf:256", "buf:256"]),
    ),
}

CHILD = r"""
import json, resource, sys, time
from gpurace.check import check
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import simulate
ptx_path, mode, launch = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
module = parse_ptx(open(ptx_path).read(), ptx_path)
start = time.perf_counter()
if mode == "plain":
    result = simulate(module, **launch)
    steps, ti, findings = result.stats.steps, result.stats.thread_instructions, len(result.findings)
else:
    report = check(module, detector=mode, schedules=1, **launch)  # one schedule: the cost of detection alone
    steps, ti, findings = report.stats["steps"], report.stats["thread_instructions"], len(report.findings)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(dict(seconds=seconds, steps=steps, ti=ti, findings=findings, peak=peak)))
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ptxs = compile_all({name: source for name, (source, _) in KERNELS.items()}, Path(tmp))
        print(f"{'kernel':<13} {'mode':<9} {'seconds':>8} {'x plain':>8} {'M thr-instr/s':>14} {'peak MB':>8} {'findings':>8}")
        for name, (_, launch) in KERNELS.items():
            base = measure(CHILD, ptxs[name], "plain", launch)
            for mode in ("plain", "interval", "hb", "gwcp", "tsan"):
                if mode == "interval" and name == "locks-65536":
                    continue  # fences: not a barrier-only kernel
                m = base if mode == "plain" else measure(CHILD, ptxs[name], mode, launch)
                print(
                    f"{name:<13} {mode:<9} {m['seconds']:>8.3f} {m['seconds'] / base['seconds']:>8.2f} "
                    f"{m['ti'] / m['seconds'] / 1e6:>14.2f} {m['peak'] / 2**20:>8.0f} {m['findings']:>8}"
                )


if __name__ == "__main__":
    main()
