# @launch --grid 2 --block 64 --arg i32:128:iota --arg i32:8
# @expect data-race global 13 13
# Histogram with a plain read-modify-write: threads whose values fall in the
# same bin race on it.
from numba import cuda


@cuda.jit
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        b = values[i] % bins.size
        bins[b] += 1
