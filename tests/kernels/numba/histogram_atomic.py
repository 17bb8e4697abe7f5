# @launch --grid 2 --block 64 --arg i32:128:iota --arg i32:8
# @expect clean
# Histogram with cuda.atomic.add: the increments of one bin are atomic.
from numba import cuda


@cuda.jit
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        b = values[i] % bins.size
        cuda.atomic.add(bins, b, 1)
