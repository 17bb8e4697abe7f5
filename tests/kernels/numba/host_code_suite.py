# A test module written for a GPU, run by tests/frontend/test_numba.py as
# `pytest -p gpurace.numba.pytest_plugin` on a machine without one: the
# kernel with an explicit signature is compiled at import, the others when
# launched; the device is asked for its compute capability at import and for
# its multiprocessors by a test. test_scale and test_grid_from_the_device
# pass; test_racy_histogram fails with the race on line 25.
import numpy as np
import pytest
from numba import cuda

VOLTA_OR_LATER = cuda.get_current_device().compute_capability >= (7, 0)


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


@pytest.mark.skipif(not VOLTA_OR_LATER, reason="needs independent thread scheduling")
def test_grid_from_the_device():
    device = cuda.current_context().device
    blocks = 2 * device.MULTIPROCESSOR_COUNT
    x = np.ones(blocks * device.WARP_SIZE, dtype=np.float32)
    scale[blocks, device.WARP_SIZE](x, np.float32(2))
    np.testing.assert_array_equal(x, 2)
