# A test module written for a GPU, run by tests/frontend/test_numba.py as
# `pytest -p gpurace.numba.pytest_plugin` on a machine without one: the
# kernel with an explicit signature is compiled at import, the others when
# launched. test_scale passes; test_racy_histogram fails with the race on
# line 21.
import numpy as np
from numba import cuda


@cuda.jit("void(float32[::1], float32)")
def scale(x, factor):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor


@cuda.jit
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        bins[values[i] % bins.size] += 1


def test_scale():
    x = np.arange(1000, dtype=np.float32)
    d_x = cuda.to_device(x)
    scale.forall(x.size)(d_x, np.float32(3))
    np.testing.assert_array_equal(d_x.copy_to_host(), x * 3)


def test_racy_histogram():
    values = cuda.to_device(np.arange(256, dtype=np.int64))
    bins = cuda.device_array(16, np.int64)
    histogram[4, 64](values, bins)
    cuda.synchronize()
