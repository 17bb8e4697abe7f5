# @launch --grid 2,2 --block 8,8 --arg f32:16,16:rand --arg f32:16,16:rand --arg f32:16,16
# @expect data-race shared 19 23
# @expect data-race shared 20 23
# The tiled matrix product without the barrier after using the tiles: the
# next tile's loads overwrite elements other threads are still reading.
from numba import cuda, float32

TILE = 8


@cuda.jit
def matmul(a, b, c):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    acc = float32(0)
    for tile in range(cuda.gridDim.x):
        sa[ty, tx] = a[y, tx + tile * TILE]
        sb[ty, tx] = b[ty + tile * TILE, x]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
    c[y, x] = acc
