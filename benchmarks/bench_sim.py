"""Simulator throughput: simulated thread-instructions per second, and a comparison with Numba's CUDA simulator.

Run: python benchmarks/bench_sim.py  (prints a table).

Launches are timed, compilation excluded, in CPU seconds of this process
(`time.process_time`, the fastest of a few runs): on a loaded machine wall time
counts the other processes too.

(a) converged: a saxpy with a short arithmetic loop over 4096 x 256 threads,
    no divergence. This is the vectorised fast path (target: >= 200 M/s).
(b) barrier-heavy: a shared-memory tree reduction on 4 x 256 threads, a
    barrier after every step. The same reduction, written for Numba
    (`numba.cuda.jit`), runs under Numba's CUDA simulator
    (`NUMBA_ENABLE_CUDASIM=1`, one Python thread per CUDA thread) in the same
    process; both do the same work, so the ratio of their times is the ratio
    of their speeds (target: >= 1000x). Numba is optional: without it the
    Numba column is skipped with a note.
(c) the same reduction over 4096 x 256 threads, a launch large enough for
    `auto` to compile.
(d) a straight-line stencil over 4096 x 256 threads: five global loads, two
    global stores and a shared-memory store and load between barriers, no
    loop (the loads and stores run inside compiled runs).

Each launch runs under each executor (GPURACE_EXECUTOR=interpreter and
=native: straight-line runs of register-only instructions, loads and stores
compiled with LLVM, `sim.native`),
side by side with their ratio; (a) and (b) are given under the default
executor, `auto`. A last table gives the compile time of each kernel's runs
(empty on-disk cache) and the time to load them from the cache.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # must precede any numba.cuda import

from gpurace.frontend.load import load_module
from gpurace.sim.launch import simulate

SAXPY_LOOP = r"""
__global__ void saxpy_loop(float a, const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float acc = y[i];
#pragma unroll 1
        for (int k = 0; k < 8; ++k)
            acc = a * v + acc * 0.5f;
        y[i] = acc;
    }
}
"""

TREE_REDUCE = r"""
__global__ void reduce_tree(const float* in, float* out)
{
    __shared__ float partial[256];
    unsigned tid = threadIdx.x;
    partial[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = partial[0];
}
"""

STENCIL = r"""
__global__ void stencil(const float* in, float* out, float* diff, int n)
{
    __shared__ float centre[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = in[(i + n - 2) % n], b = in[(i + n - 1) % n], c = in[i];
    float d = in[(i + 1) % n], e = in[(i + 2) % n];
    float v = 0.1f * a + 0.2f * b + 0.4f * c + 0.2f * d + 0.1f * e;
    out[i] = v;
    centre[threadIdx.x] = v;
    __syncthreads();
    diff[i] = v - centre[threadIdx.x ^ 1];
}
"""

# The Numba version of TREE_REDUCE. It must live at module level: the simulator
# swaps the kernel's global `cuda` for its own implementation.
try:
    from numba import config as numba_config
    from numba import cuda, float32
except ImportError:
    numba_reduce_tree = None
else:

    @cuda.jit
    def numba_reduce_tree(inp, out):
        partial = cuda.shared.array(256, float32)
        tid = cuda.threadIdx.x
        partial[tid] = inp[cuda.blockIdx.x * cuda.blockDim.x + tid]
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 0:
            if tid < s:
                partial[tid] += partial[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = partial[0]


CONVERGED = (4096, 256)
REDUCTION = (4, 256)
LARGE_REDUCTION = (4096, 256)
STENCIL_GEOMETRY = (4096, 256)


def best_of(repeat: int, fn):
    """The fastest of `repeat` calls (CPU seconds of this process) and the last call's result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def under(executor: str):
    """Run what follows with GPURACE_EXECUTOR set to `executor`."""
    os.environ["GPURACE_EXECUTOR"] = executor


def kernel(workdir: Path, name: str, source: str):
    """The module of CUDA `source`, written to `workdir` as NAME.cu."""
    path = workdir / f"{name}.cu"
    path.write_text(source)
    return load_module(path)


def bench_converged(workdir: Path, repeat: int = 3) -> tuple[float, int]:
    module = kernel(workdir, "saxpy_loop", SAXPY_LOOP)
    grid, block = CONVERGED
    n = grid * block
    x = np.arange(n, dtype=np.float32) % 1000

    def once():
        y = np.ones(n, dtype=np.float32)
        res = simulate(module, grid=grid, block=block, args=[np.float32(2.0), x, y, n])
        assert not res.findings and y[1] != 1.0
        return res

    seconds, res = best_of(repeat, once)
    return seconds, res.stats.thread_instructions


def bench_reduction(workdir: Path, repeat: int = 5, geometry: tuple[int, int] = REDUCTION) -> tuple[float, int, np.ndarray]:
    module = kernel(workdir, "reduce_tree", TREE_REDUCE)
    grid, block = geometry
    data = (np.arange(grid * block) % 97).astype(np.float32)

    def once():
        out = np.zeros(grid, dtype=np.float32)
        res = simulate(module, grid=grid, block=block, args=[data, out])
        assert not res.findings
        return res, out

    seconds, (res, out) = best_of(repeat, once)
    np.testing.assert_array_equal(out, data.reshape(grid, block).sum(axis=1))
    return seconds, res.stats.thread_instructions, out


def bench_stencil(workdir: Path, repeat: int = 1) -> tuple[float, int]:
    module = kernel(workdir, "stencil", STENCIL)
    grid, block = STENCIL_GEOMETRY
    n = grid * block
    data = (np.arange(n) % 89).astype(np.float32)

    def once():
        out, diff = np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)
        res = simulate(module, grid=grid, block=block, args=[data, out, diff, n])
        assert not res.findings and out[5] != 0.0
        return res

    seconds, res = best_of(repeat, once)
    return seconds, res.stats.thread_instructions


def bench_numba_reduction() -> float | str:
    """CPU seconds for the same reduction under Numba's CUDA simulator, or why it was skipped."""
    if numba_reduce_tree is None:
        return "skipped: numba is not installed (pip install numba)"
    if not numba_config.ENABLE_CUDASIM:
        return "skipped: NUMBA_ENABLE_CUDASIM is set to 0 in the environment"
    grid, block = REDUCTION
    data = (np.arange(grid * block) % 97).astype(np.float32)

    def once():
        out = np.zeros(grid, dtype=np.float32)
        numba_reduce_tree[grid, block](data, out)
        return out

    seconds, out = best_of(3, once)
    np.testing.assert_array_equal(out, data.reshape(grid, block).sum(axis=1))
    return seconds


def bench_compile(workdir: Path, source: str, name: str, grid: int, block: int, args) -> tuple[float, float]:
    """(compile seconds with an empty cache, seconds to load from the cache) of one kernel's compiled runs."""
    from gpurace.sim.native import jit

    module = kernel(workdir, name, source)
    os.environ["XDG_CACHE_HOME"] = str(workdir / f"cache-{name}")
    under("native")
    times = []
    for _ in range(2):  # the first run compiles and fills the cache, the second loads from it (as a new process)
        jit.LOADED.clear()
        simulate(module, grid=grid, block=block, args=args())
        times.append(jit.LAST.seconds)
    return times[0], times[1]


def main() -> None:
    from gpurace.sim.native import chosen_executor

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(workdir / "cache")
        under("native")
        bench_converged(workdir, repeat=1)  # compile once: the timed native runs load their code
        bench_reduction(workdir, repeat=1)
        bench_stencil(workdir)
        best: dict[tuple[str, str], float] = {}
        work: dict[str, int] = {}
        for _ in range(3):  # alternate the executors, so that both see the same load on the machine
            for executor in ("interpreter", "native"):
                under(executor)
                for launch, (seconds, ti, *_) in (
                    ("conv", bench_converged(workdir, repeat=1)),
                    ("red", bench_reduction(workdir, repeat=3)),
                    ("large", bench_reduction(workdir, repeat=1, geometry=LARGE_REDUCTION)),
                    ("stencil", bench_stencil(workdir)),
                ):
                    best[executor, launch] = min(best.get((executor, launch), seconds), seconds)
                    work[launch] = ti
        red_n = REDUCTION[0] * REDUCTION[1]
        compiles = [
            ("saxpy loop", *bench_compile(workdir, SAXPY_LOOP, "saxpy", 16, 256, lambda: [np.float32(2), np.ones(4096, np.float32), np.ones(4096, np.float32), 4096])),
            ("tree reduction", *bench_compile(workdir, TREE_REDUCE, "reduce", *REDUCTION, lambda: [np.ones(red_n, np.float32), np.zeros(REDUCTION[0], np.float32)])),
        ]
    numba = bench_numba_reduction()

    os.environ.pop("GPURACE_EXECUTOR", None)  # the default, auto, picks per launch size
    launches = [
        ("(a) converged saxpy loop", "conv", CONVERGED, ">= 200 M/s"),
        ("(b) shared tree reduction", "red", REDUCTION, ">= 1000x Numba"),
        ("(c) the reduction, larger", "large", LARGE_REDUCTION, ""),
        ("(d) straight-line stencil", "stencil", STENCIL_GEOMETRY, ""),
    ]
    print(f"{'launch':<28}{'threads':>10}{'thread-instr':>14}{'executor':>12}{'CPU s':>9}{'M thr-instr/s':>15}  target")
    for name, launch, (grid, block), target in launches:
        executor = chosen_executor(grid * block)
        s = best[executor, launch]
        print(f"{name:<28}{f'{grid}x{block}':>10}{work[launch]:>14,}{executor:>12}{s:>9.4f}{work[launch] / s / 1e6:>15.2f}  {target}")
    print()
    red_s = best[chosen_executor(red_n), "red"]
    if isinstance(numba, str):
        print(f"Numba CUDA simulator, (b): {numba}")
    else:
        print(f"Numba CUDA simulator, (b): {numba:.4f} CPU s for the same launch")
        print(f"gpurace speed / Numba simulator speed, (b): {numba / red_s:.1f}x")
    print()
    print(f"{'executors':<28}{'interpreter M/s':>16}{'native M/s':>12}{'native/interp':>15}")
    for name, launch, _, _ in launches:
        ti, s, native_s = work[launch], best["interpreter", launch], best["native", launch]
        print(f"{name:<28}{ti / s / 1e6:>16.2f}{ti / native_s / 1e6:>12.2f}{s / native_s:>14.2f}x")
    print()
    print(f"{'compiled runs of':<28}{'compile s':>12}{'cache hit s':>14}")
    for name, compile_s, hit_s in compiles:
        print(f"{name:<28}{compile_s:>12.4f}{hit_s:>14.4f}")


if __name__ == "__main__":
    main()
