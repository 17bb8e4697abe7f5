# @launch --grid 1 --block 64 --arg f32:64:iota --arg f32:4
# @expect data-race global 11 11
# Every thread stores into out[0] through a device function, with a local
# array on the way: the race is on the device function's line.
from numba import cuda, float32


@cuda.jit(device=True)
def store(a, i, v):
    # the unordered store of every thread
    a[i] = v


@cuda.jit
def last_writer(x, out):
    i = cuda.grid(1)
    window = cuda.local.array(4, float32)
    for k in range(4):
        window[k] = x[(i + k) % x.size]
    store(out, 0, window[0] + window[3])
