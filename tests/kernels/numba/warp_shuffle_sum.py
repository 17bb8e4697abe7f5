# @launch --grid 2 --block 64 --arg f32:128:iota --arg f32:1
# @expect clean
# Warp-level sum with shuffles, one atomic per warp: the shuffles exchange
# registers, so no memory is shared until the atomic.
from numba import cuda


@cuda.jit
def warp_sum(x, out):
    v = x[cuda.grid(1)]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
