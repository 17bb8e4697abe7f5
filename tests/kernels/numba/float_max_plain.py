# @launch --grid 2 --block 64 --arg f32:128:iota --arg f32:1
# @expect data-race global 15 16
# @expect data-race global 16 16
# float_max_atomic.py without the atomic: each thread reads the slot and
# stores its value when larger, so the reads and stores of different threads
# race.
from numba import cuda


@cuda.jit
def largest(values, best):
    i = cuda.grid(1)
    if i < values.size:
        v = values[i]
        if v > best[0]:
            best[0] = v
