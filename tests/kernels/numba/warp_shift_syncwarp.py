# @launch --grid 1 --block 32 --arg f32:32:iota --arg f32:32
# @expect clean
# The race-free twin of warp_shift.py: cuda.syncwarp() orders every lane's
# store before any lane's read.
from numba import cuda, float32


@cuda.jit
def shift_left(x, out):
    s = cuda.shared.array(33, float32)
    lane = cuda.threadIdx.x
    if lane == 0:
        s[32] = 0
    cuda.syncthreads()
    s[lane] = x[lane]
    cuda.syncwarp()
    out[lane] = s[lane + 1]
