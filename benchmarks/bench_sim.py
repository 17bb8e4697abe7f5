"""Simulator throughput: simulated thread-instructions per second, and a comparison with Numba's CUDA simulator.

Run: python benchmarks/bench_sim.py  (prints a table).

Two launches are timed, compilation excluded (best of a few runs):

(a) converged: a saxpy with a short arithmetic loop over 4096 x 256 threads,
    no divergence. This is the vectorised fast path (target: >= 20 M/s).
(b) barrier-heavy: a shared-memory tree reduction on 4 x 256 threads, a
    barrier after every step. The same reduction, written for Numba
    (`numba.cuda.jit`), runs under Numba's CUDA simulator
    (`NUMBA_ENABLE_CUDASIM=1`, one Python thread per CUDA thread) in the same
    process; both do the same work, so the ratio of their times is the ratio
    of their speeds (target: >= 100x). Numba is optional: without it the
    Numba column is skipped with a note.
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


def best_of(repeat: int, fn):
    """The fastest of `repeat` calls (seconds) and the last call's result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def bench_converged(workdir: Path) -> tuple[float, int]:
    path = workdir / "saxpy_loop.cu"
    path.write_text(SAXPY_LOOP)
    module = load_module(path)
    grid, block = CONVERGED
    n = grid * block
    x = np.arange(n, dtype=np.float32) % 1000

    def once():
        y = np.ones(n, dtype=np.float32)
        res = simulate(module, grid=grid, block=block, args=[np.float32(2.0), x, y, n])
        assert not res.findings and y[1] != 1.0
        return res

    seconds, res = best_of(3, once)
    return seconds, res.stats.thread_instructions


def bench_reduction(workdir: Path) -> tuple[float, int, np.ndarray]:
    path = workdir / "reduce_tree.cu"
    path.write_text(TREE_REDUCE)
    module = load_module(path)
    grid, block = REDUCTION
    data = (np.arange(grid * block) % 97).astype(np.float32)

    def once():
        out = np.zeros(grid, dtype=np.float32)
        res = simulate(module, grid=grid, block=block, args=[data, out])
        assert not res.findings
        return res, out

    seconds, (res, out) = best_of(5, once)
    np.testing.assert_array_equal(out, data.reshape(grid, block).sum(axis=1))
    return seconds, res.stats.thread_instructions, out


def bench_numba_reduction() -> float | str:
    """Seconds for the same reduction under Numba's CUDA simulator, or why it was skipped."""
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


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        conv_s, conv_ti = bench_converged(workdir)
        red_s, red_ti, _ = bench_reduction(workdir)
    numba = bench_numba_reduction()

    rows = [
        ("(a) converged saxpy loop", f"{CONVERGED[0]}x{CONVERGED[1]}", conv_ti, conv_s, ">= 20 M/s"),
        ("(b) shared tree reduction", f"{REDUCTION[0]}x{REDUCTION[1]}", red_ti, red_s, ">= 100x Numba"),
    ]
    print(f"{'launch':<28}{'threads':>10}{'thread-instr':>14}{'seconds':>10}{'M thr-instr/s':>15}  target")
    for name, geometry, ti, s, target in rows:
        print(f"{name:<28}{geometry:>10}{ti:>14,}{s:>10.4f}{ti / s / 1e6:>15.2f}  {target}")
    print()
    if isinstance(numba, str):
        print(f"Numba CUDA simulator, (b): {numba}")
    else:
        print(f"Numba CUDA simulator, (b): {numba:.4f} s for the same launch")
        print(f"gpurace speed / Numba simulator speed, (b): {numba / red_s:.1f}x")


if __name__ == "__main__":
    main()
