# @launch --grid 2 --block 64 --arg i32:128:rand --arg i32:5
# @expect clean
# Other atomics, on shared and global memory: max, min, exch,
# compare_and_swap, and a per-block count in shared memory published with a
# fence and one atomic per block.
from numba import cuda, int32


@cuda.jit
def atomic_ops(values, out):
    count = cuda.shared.array(1, int32)
    i = cuda.grid(1)
    if cuda.threadIdx.x == 0:
        count[0] = 0
    cuda.syncthreads()
    v = values[i]
    cuda.atomic.max(out, 0, v)
    cuda.atomic.min(out, 1, v)
    cuda.atomic.exch(out, 2, 7)
    cuda.atomic.compare_and_swap(out[3:4], 0, i + 1)
    if v % 2 == 0:
        cuda.atomic.add(count, 0, 1)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.threadfence()
        cuda.atomic.add(out, 4, count[0])
