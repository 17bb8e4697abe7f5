# @launch --grid 1 --block 32 --arg buf:32
# @expect_error has no explicit signature, so a buffer needs its element type
# Without an explicit signature the argument types come from --arg, and
# `buf:` names no element type.
from numba import cuda


@cuda.jit
def fill(x):
    x[cuda.grid(1)] = 1
