# @launch --grid 1 --block 32 --arg f32:32:iota --arg f32:32
# @expect data-race shared 16 17
# Each lane stores its value in shared memory and reads its neighbour's with
# no warp barrier between: lanes of one warp are scheduled independently
# (Volta and later), so the read may come before the neighbour's store.
from numba import cuda, float32


@cuda.jit
def shift_left(x, out):
    s = cuda.shared.array(33, float32)
    lane = cuda.threadIdx.x
    if lane == 0:
        s[32] = 0
    cuda.syncthreads()
    s[lane] = x[lane]
    out[lane] = s[lane + 1]
