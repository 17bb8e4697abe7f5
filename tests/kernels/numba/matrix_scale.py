# A 2-dimensional array and scalars of three types, for gpurace.numba.check
# (the command line passes 1-dimensional buffers only):
# gpurace.numba.check(scale_rows, (2, 2), (8, 8), m, 3, 0.5, True)
# @expect clean
from numba import cuda


@cuda.jit
def scale_rows(m, rows, factor, enabled):
    r, c = cuda.grid(2)
    if enabled and r < rows and c < m.shape[1]:
        m[r, c] = m[r, c] * factor + r
