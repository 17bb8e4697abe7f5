# @launch --grid 2 --block 64 --arg f32:128:iota --arg f32:1
# @expect clean
# The largest value with cuda.atomic.max on float32: Numba lowers it to a
# compare-and-swap loop that starts with an ld.volatile of the slot, which is
# not a race with the other threads' atom.cas under the PTX memory model.
# float_max_plain.py is the racy twin.
from numba import cuda


@cuda.jit
def largest(values, best):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.max(best, 0, values[i])
