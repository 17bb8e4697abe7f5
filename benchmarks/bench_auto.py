"""Kernels run without arguments: peak memory and time with automatic buffers.

    python benchmarks/bench_auto.py

Automatic buffers reserve 64 MiB of address space each and commit only the
pages a kernel touches; the hb detector shadows only touched global pages.
So a kernel that writes far into a few automatic buffers must stay small
(`far`: elements 1,000,000 and 10,000,000 of three buffers, one warp), and a
dense kernel must cost about what it costs with explicit buffers (`saxpy`,
1M threads, auto against explicit). Each configuration runs in its own
process so that its peak resident memory (`ru_maxrss`) is its own.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness import compile_all, measure

KERNELS = {
    "far": (
        r"""
        __global__ void far(int* a, float* b, double* c) {
          int i = threadIdx.x;
          a[i] = i; b[i] = 1.0f; c[i] = 2.0;
          if (i == 0) { a[1000000] = 1; b[10000000] = 2.0f; c[1000000] += a[1000000]; }
        }
        """,
        {"auto": dict(grid=(1,), block=(32,), args=None)},
    ),
    "saxpy": (
        r"""
        __global__ void saxpy(const float* x, float* y, float a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) { float v = y[i]; for (int k = 0; k < 8; ++k) v = a * x[i] + v * 0.5f; y[i] = v; }
        }
        """,
        {
            "auto": dict(grid=(4096,), block=(256,), args=None),
            "explicit": dict(grid=(4096,), block=(256,), args=["f32:1048576:ones", "f32:1048576", "1.0", "1048576"]),
        },
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
    findings = len(simulate(module, **launch).findings)
else:
    findings = len(check(module, detector=mode, **launch).findings)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(dict(seconds=seconds, findings=findings, peak=peak)))
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ptxs = compile_all({name: source for name, (source, _) in KERNELS.items()}, Path(tmp))
        print(f"{'kernel':<7} {'args':<9} {'mode':<9} {'seconds':>8} {'peak MB':>8} {'findings':>8}")
        for name, (_, launches) in KERNELS.items():
            for args, launch in launches.items():
                for mode in ("plain", "interval", "hb"):
                    m = measure(CHILD, ptxs[name], mode, launch)
                    print(f"{name:<7} {args:<9} {mode:<9} {m['seconds']:>8.3f} {m['peak'] / 2**20:>8.0f} {m['findings']:>8}")


if __name__ == "__main__":
    main()
