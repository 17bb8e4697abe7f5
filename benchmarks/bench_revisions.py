"""The default check of whole-application-shaped kernels under this tree's code and an earlier revision's, side by side.

Run: `python benchmarks/bench_revisions.py [--base main] [--only NAME] [--repeat 1]`.
The base revision's `src/` is exported (`git archive`) into a temporary
folder and each measurement runs in its own interpreter with that `src/` or
this tree's first on its path (`harness.measure`), so both columns come from
one run on the same machine. Per kernel: CPU seconds (user + system, which a
busy machine inflates less than wall time), wall seconds, the base's CPU
seconds over this tree's (above 1: faster now), the peak resident memory of
each (its ratio likewise), and whether the two reports agree (the same
findings, kinds and counts, and the same thread-instructions).

The kernels have the shapes that dominate classic GPU benchmark programs and
the CUDA samples at their usual sizes:

- `stencil`: a 2-D five-point stencil with clamped borders, each border a
  branch of its own (an image filter's update: the threads of a block diverge
  into several groups at every border test);
- `block_sum`: `bench_sim.py`'s shared-memory tree reduction, whose active
  threads halve each step (the first stage of a sum over a large array);
- `neighbours`: each block stages 27 neighbouring boxes of particles in shared
  memory, one after the other, with a barrier before and after each, and
  accumulates pairwise terms (a molecular-dynamics force kernel);
- `tail_sum`: a tree sum per block in shared memory where the last, partial
  block takes a loop of its own, so its barriers complete apart from the
  others' and every interval closes while other blocks run on (a statistics
  reduction over an image whose size is no multiple of the block);
- `distance`: each thread sums squared differences between its point and one
  chosen point over many dimensions of a column-major array no thread writes,
  behind a bounds test that leaves the last block partly idle (a clustering
  cost kernel);
- `histogram`: each block counts bytes of a large array into 256 bins in
  shared memory with atomics (a grid-stride loop: millions of shared
  accesses in one barrier interval), then writes its partial histogram;
- `bitonic`: each block sorts 1,024 keys in shared memory by a bitonic
  network, 55 barrier phases each comparing and swapping pairs (a sorting
  network's shared-memory stage: many small intervals);
- `copy_loop`: 64 blocks copy an array of 8-byte structs aligned to 4 bytes
  (two 4-byte loads and stores each) in a grid-stride loop, checked
  `COPY_LAUNCHES` times in one process (NVIDIA's alignedTypes sample: a small
  grid that makes millions of accesses per thread block, launch after launch);
- `waves_update`: each of `WAVE_THREADS` threads adds a factor to its own
  element five times, a launch four times the threads simulated at once, so
  it runs in four waves and each wave's accesses are remembered for the next
  (NVIDIA's simpleStreams sample at its usual size).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from bench_sim import TREE_REDUCE
from harness import compile_all, measure

KERNELS = {
    "stencil": r"""
        __global__ void stencil(const float* in, float* out, int rows, int cols)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= rows * cols)
                return;
            int r = i / cols, c = i % cols;
            int n = r == 0 ? i : i - cols;
            int s = r == rows - 1 ? i : i + cols;
            int w = c == 0 ? i : i - 1;
            int e = c == cols - 1 ? i : i + 1;
            float d = in[n] + in[s] + in[w] + in[e] - 4.0f * in[i];
            float q = d / (in[i] * in[i] + 1.0f);
            if (q < 0.0f)
                q = 0.0f;
            else if (q > 1.0f)
                q = 1.0f;
            out[i] = in[i] + 0.25f * q * d;
        }
    """,
    "block_sum": TREE_REDUCE,
    "neighbours": r"""
        __global__ void neighbours(const float4* pos, float* energy, int boxes1d, int per_box)
        {
            __shared__ float4 other[128];
            int box = blockIdx.x, t = threadIdx.x;
            int bx = box % boxes1d, by = box / boxes1d % boxes1d, bz = box / (boxes1d * boxes1d);
            float4 me = pos[box * per_box + t];
            float acc = 0.0f;
            for (int k = 0; k < 27; k++) {
                int nx = bx + k % 3 - 1, ny = by + k / 3 % 3 - 1, nz = bz + k / 9 - 1;
                if (nx < 0 || ny < 0 || nz < 0 || nx >= boxes1d || ny >= boxes1d || nz >= boxes1d)
                    continue;
                int nb = (nz * boxes1d + ny) * boxes1d + nx;
                other[t] = pos[nb * per_box + t];
                __syncthreads();
                for (int j = 0; j < per_box; j++) {
                    float dx = me.x - other[j].x, dy = me.y - other[j].y, dz = me.z - other[j].z;
                    acc += other[j].w / (dx * dx + dy * dy + dz * dz + 1.0f);
                }
                __syncthreads();
            }
            energy[box * per_box + t] = acc;
        }
    """,
    "tail_sum": r"""
        __global__ void tail_sum(float* sums, long n)
        {
            __shared__ float part[512];
            int t = threadIdx.x;
            long i = (long)blockIdx.x * blockDim.x + t;
            part[t] = i < n ? sums[i] : 0.0f;
            __syncthreads();
            if (blockIdx.x != gridDim.x - 1) {
                for (int s = 1; s < blockDim.x; s *= 2) {
                    if ((t + 1) % (2 * s) == 0)
                        part[t] += part[t - s];
                    __syncthreads();
                }
            } else {
                int used = (int)(n - (long)blockIdx.x * blockDim.x);
                for (int s = 1; s < used; s *= 2) {
                    if ((t + 1) % (2 * s) == 0 && t < used)
                        part[t] += part[t - s];
                    __syncthreads();
                }
            }
            if (t == blockDim.x - 1)
                sums[(long)blockIdx.x * blockDim.x] = part[t];
        }
    """,
    "distance": r"""
        __global__ void distance(const float* coord, const float* weight, float* cost, int num, int dim, int x)
        {
            int tid = blockIdx.x * blockDim.x + threadIdx.x;
            if (tid < num) {
                float d = 0.0f;
                for (int i = 0; i < dim; i++) {
                    float diff = coord[i * num + tid] - coord[i * num + x];
                    d += diff * diff;
                }
                cost[tid] = d * weight[tid];
            }
        }
    """,
    "histogram": r"""
        __global__ void histogram(const unsigned int* data, unsigned int* partial, int words)
        {
            __shared__ unsigned int bins[256];
            for (int b = threadIdx.x; b < 256; b += blockDim.x)
                bins[b] = 0;
            __syncthreads();
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += blockDim.x * gridDim.x) {
                unsigned int w = data[i];
                atomicAdd(&bins[w & 0xFFU], 1);
                atomicAdd(&bins[(w >> 8) & 0xFFU], 1);
                atomicAdd(&bins[(w >> 16) & 0xFFU], 1);
                atomicAdd(&bins[w >> 24], 1);
            }
            __syncthreads();
            for (int b = threadIdx.x; b < 256; b += blockDim.x)
                partial[blockIdx.x * 256 + b] = bins[b];
        }
    """,
    "bitonic": r"""
        __global__ void bitonic(unsigned int* keys)
        {
            __shared__ unsigned int s[1024];
            unsigned int* base = keys + blockIdx.x * 1024;
            s[threadIdx.x] = base[threadIdx.x];
            s[threadIdx.x + 512] = base[threadIdx.x + 512];
            for (unsigned int size = 2; size <= 1024; size <<= 1) {
                bool up = (threadIdx.x & (size / 2)) == 0;
                for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
                    __syncthreads();
                    unsigned int pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
                    unsigned int a = s[pos], b = s[pos + stride];
                    if ((a > b) == up) {
                        s[pos] = b;
                        s[pos + stride] = a;
                    }
                }
            }
            __syncthreads();
            base[threadIdx.x] = s[threadIdx.x];
            base[threadIdx.x + 512] = s[threadIdx.x + 512];
        }
    """,
    "waves_update": r"""
        __global__ void waves_update(int* data, const int* factor)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            for (int k = 0; k < 5; k++)
                data[i] += *factor;
        }
    """,
    "copy_loop": r"""
        struct pair { unsigned int l, a; };
        __global__ void copy_loop(pair* out, const pair* in, int n)
        {
            int stride = blockDim.x * gridDim.x;
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
                out[i] = in[i];
        }
    """,
}

ROWS, COLS, SUM_N, BOXES1D, PER_BOX = 502, 458, 229_888, 4, 128
POINTS, DIMS = 65_000, 64
HIST_WORDS, HIST_BLOCKS, SORT_BLOCKS = 1 << 21, 2048, 512
COPY_PAIRS, COPY_LAUNCHES = 3 << 20, 3
WAVE_THREADS = 4 << 20


def launch(name: str) -> dict:
    """Grid, block and `--arg` values of each kernel's launch."""
    if name == "stencil":
        n = ROWS * COLS
        return {"grid": -(-n // 512), "block": 512, "args": [f"buf:{n}:rand", f"buf:{n}", str(ROWS), str(COLS)]}
    if name == "block_sum":
        return {"grid": SUM_N // 256, "block": 256, "args": [f"buf:{SUM_N}:rand", f"buf:{SUM_N // 256}"]}
    if name == "tail_sum":
        n = ROWS * COLS
        return {"grid": -(-n // 512), "block": 512, "args": [f"buf:{n}:rand", str(n)]}
    if name == "histogram":
        args = [f"u32:{HIST_WORDS}:rand", f"buf:{HIST_BLOCKS * 256}", str(HIST_WORDS)]
        return {"grid": HIST_BLOCKS, "block": 128, "args": args}
    if name == "bitonic":
        return {"grid": SORT_BLOCKS, "block": 512, "args": [f"u32:{SORT_BLOCKS * 1024}:rand"]}
    if name == "waves_update":
        return {"grid": WAVE_THREADS // 512, "block": 512, "args": [f"i32:{WAVE_THREADS}", "i32:1:ones"]}
    if name == "copy_loop":
        words = 2 * COPY_PAIRS
        return {"grid": 64, "block": 256, "args": [f"u32:{words}", f"u32:{words}:rand", str(COPY_PAIRS)], "launches": COPY_LAUNCHES}
    if name == "distance":
        args = [f"buf:{POINTS * DIMS}:rand", f"buf:{POINTS}:rand", f"buf:{POINTS}", str(POINTS), str(DIMS), "7"]
        return {"grid": -(-POINTS // 512), "block": 512, "args": args}
    boxes = BOXES1D**3
    return {
        "grid": boxes,
        "block": PER_BOX,
        "args": [f"f32:{4 * boxes * PER_BOX}:rand", f"buf:{boxes * PER_BOX}", str(BOXES1D), str(PER_BOX)],
    }


CHILD = r"""
import json, resource, sys, time
from gpurace.check import check
from gpurace.frontend.load import load_module
from gpurace.limits import Limits
ptx, mode, launch = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
def cpu():  # the schedules forked from schedule 0's run (`sim.shared_prefix`) are children
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
limits = Limits(max_memory=64 << 30, timeout=10**6)
wall, used = time.perf_counter(), cpu()
module = load_module(ptx)  # loaded once, as `gpurace exec` loads a program's modules
for _ in range(launch.get("launches", 1)):
    report = check(module, grid=launch["grid"], block=launch["block"], args=launch["args"], limits=limits, max_steps=10**9)
print(json.dumps({"cpu": cpu() - used, "wall": time.perf_counter() - wall, "ti": report.stats["thread_instructions"],
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "findings": sorted((f.kind, f.count) for f in report.findings)}))
"""


def export(revision: str, into: Path) -> Path:
    """`src/` of `revision` under `into`, by `git archive` (the working tree and its index are left alone)."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(root), "archive", revision, "src"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the revision to compare with (default: main)")
    parser.add_argument("--only", action="append", choices=sorted(KERNELS))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, the best kept")
    opts = parser.parse_args()
    names = opts.only or list(KERNELS)
    here = Path(__file__).resolve().parent.parent / "src"
    with tempfile.TemporaryDirectory() as tmp:
        base = export(opts.base, Path(tmp))
        ptx = compile_all({n: KERNELS[n] for n in names}, Path(tmp))
        print(f"default check, base {opts.base} against this tree; best of {opts.repeat}")
        print(
            f"{'kernel':<12}{'threads':>9}{'base cpu s':>12}{'cpu s':>8}{'base wall':>11}{'wall':>8}{'cpu ratio':>11}"
            f"{'base peak MB':>14}{'peak MB':>9}{'peak ratio':>12}  same report"
        )
        for name in names:
            spec = launch(name)
            rows = {}
            for label, src in (("base", base), ("tree", here)):
                env = dict(os.environ, PYTHONPATH=str(src))
                runs = [measure(CHILD, ptx[name], "check", spec, env=env) for _ in range(opts.repeat)]
                rows[label] = min(runs, key=lambda row: row["cpu"])
            b, t = rows["base"], rows["tree"]
            same = b["findings"] == t["findings"] and b["ti"] == t["ti"]
            print(
                f"{name:<12}{spec['grid'] * spec['block']:>9}{b['cpu']:>12.2f}{t['cpu']:>8.2f}{b['wall']:>11.2f}"
                f"{t['wall']:>8.2f}{b['cpu'] / t['cpu']:>11.2f}{b['peak'] / 1e6:>14.0f}{t['peak'] / 1e6:>9.0f}"
                f"{b['peak'] / t['peak']:>12.2f}  {'yes' if same else 'NO'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
