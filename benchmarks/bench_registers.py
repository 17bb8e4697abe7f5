"""Register slots shared by registers never live together (`sim.register_slots`) against one slot per register.

Run: `python benchmarks/bench_registers.py [--min-log2 16] [--max-log2 18] [--mode simulate|check]`.
The kernel is a diffusion stencil of the kind image-processing programs launch over a whole picture
(16×16 blocks, the four neighbours through shared memory, a barrier, a coefficient per pixel written out):
nvcc's PTX gives it a few hundred virtual registers, of which a few dozen are live at once. Per size, each
way runs in its own process (`harness.measure`): register slots and bytes per thread, seconds, peak resident
memory, and the ratios one slot per register / shared slots (above 1: sharing is cheaper).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness import compile_all, measure

STENCIL = r"""
#define SIDE 16
__global__ void diffuse(const float* image, float* coefficient, float* out, int rows, int cols, float q0)
{
    __shared__ float here[SIDE][SIDE], north[SIDE][SIDE], south[SIDE][SIDE], west[SIDE][SIDE], east[SIDE][SIDE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * SIDE + ty, col = blockIdx.x * SIDE + tx;
    int up = row > 0 ? row - 1 : row, down = row < rows - 1 ? row + 1 : row;
    int left = col > 0 ? col - 1 : col, right = col < cols - 1 ? col + 1 : col;
    here[ty][tx] = image[row * cols + col];
    north[ty][tx] = image[up * cols + col];
    south[ty][tx] = image[down * cols + col];
    west[ty][tx] = image[row * cols + left];
    east[ty][tx] = image[row * cols + right];
    __syncthreads();
    float j = here[ty][tx];
    float dn = north[ty][tx] - j, ds = south[ty][tx] - j, dw = west[ty][tx] - j, de = east[ty][tx] - j;
    float g2 = (dn * dn + ds * ds + dw * dw + de * de) / (j * j + 1e-6f);
    float l = (dn + ds + dw + de) / (j + 1e-6f);
    float num = 0.5f * g2 - 0.0625f * l * l;
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den + 1e-6f);
    float c = 1.0f / (1.0f + (qsqr - q0) / (q0 * (1.0f + q0)));
    c = c < 0.0f ? 0.0f : (c > 1.0f ? 1.0f : c);
    coefficient[row * cols + col] = c;
    __syncthreads();
    out[row * cols + col] = j + 0.25f * c * (dn + ds + dw + de);
}
"""

CHILD = r"""
import json, resource, sys, time
import gpurace.sim.program as program
from gpurace.check import check
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.sim.launch import simulate
ptx, mode, launch = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if launch["way"] == "one per register":
    program.share_slots = lambda *args: None
module = parse_ptx(open(ptx).read())
built = program.build_program(module, next(name for name, fn in module.functions.items() if fn.is_entry))
limits = Limits(max_threads=1 << 26, max_memory=64 << 30, timeout=10**6)
start = time.perf_counter()
if mode == "simulate":
    findings = simulate(ptx, grid=launch["grid"], block=launch["block"], args=launch["args"], limits=limits).findings
else:
    findings = check(ptx, grid=launch["grid"], block=launch["block"], args=launch["args"], limits=limits).findings
print(json.dumps({"seconds": time.perf_counter() - start, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "slots": len(built.reg_types), "bytes": sum(dt.itemsize for dt in built.reg_types),
                  "findings": sorted({f.kind for f in findings})}))
"""

WAYS = ("one per register", "shared")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-log2", type=int, default=16)
    parser.add_argument("--max-log2", type=int, default=18)
    parser.add_argument("--mode", choices=("simulate", "check"), default="simulate")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ptx = compile_all({"diffuse": STENCIL}, Path(tmp))["diffuse"]
        print(f"mode: {opts.mode}; 16x16 threads per block")
        print(f"{'threads':>10}  {'registers':<18}{'slots':>6}{'B/thread':>9}{'seconds':>9}{'peak MB':>9}  findings")
        for log2 in range(opts.min_log2, opts.max_log2 + 1, 2):
            side = 1 << (log2 // 2)
            n = side * side
            args = [f"buf:{n}:rand", f"buf:{n}", f"buf:{n}", str(side), str(side), "0.05"]
            rows = {}
            for way in WAYS:
                launch = {"grid": [side // 16, side // 16, 1], "block": [16, 16, 1], "args": args, "way": way}
                r = rows[way] = measure(CHILD, ptx, opts.mode, launch)
                print(f"{n:>10}  {way:<18}{r['slots']:>6}{r['bytes']:>9}{r['seconds']:>9.2f}{r['rss'] / 2**20:>9.0f}  {','.join(r['findings']) or '-'}")
            before, after = rows["one per register"], rows["shared"]
            print(
                f"{n:>10}  ratio one-per-register/shared: register bytes {before['bytes'] / after['bytes']:.1f}x, "
                f"time {before['seconds'] / after['seconds']:.2f}x, peak memory {before['rss'] / after['rss']:.2f}x"
            )


if __name__ == "__main__":
    main()
