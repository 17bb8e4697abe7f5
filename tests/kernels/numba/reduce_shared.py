# @launch --grid 2 --block 128 --arg f32:256:iota --arg f32:1
# @expect clean
# Tree reduction in shared memory with a barrier after every step; block
# results are added into out[0] atomically.
from numba import cuda, float32

THREADS = 128


@cuda.jit
def block_sum(x, out):
    s = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])
