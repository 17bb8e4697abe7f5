# @launch --grid 2 --block 64 --arg buf:100:iota --arg 100 --arg 0.5
# @expect clean
# A kernel with an explicit signature: its argument types come from the
# signature, so `buf:` needs no element type and 100 is an int32. Its name
# is also a PTX instruction's, which reports still use.
from numba import cuda


@cuda.jit("void(float32[::1], int32, float32)")
def mul(x, n, factor):
    i = cuda.grid(1)
    if i < n:
        x[i] = x[i] * factor
