"""Tensors of other libraries in host memory are taken through DLPack as the NumPy arrays sharing their memory
(`gpurace.python_values.host_array`); tensors on a GPU are refused by name. `Tensor` speaks only the
DLPack protocol (`tests/dlpack_tensor.py`)."""

from __future__ import annotations

import numpy as np
import pytest

from dlpack_tensor import Tensor

from gpurace.errors import UserError
from gpurace.python_values import host_array, host_arrays


def test_a_host_tensor_is_the_array_that_shares_its_memory():
    tensor = Tensor(np.arange(8, dtype=np.float32))
    array = host_array(tensor, "argument 1")
    assert isinstance(array, np.ndarray) and array.dtype == np.float32 and array.shape == (8,)
    array[3] = 42.0
    assert tensor.read()[3] == 42.0


def test_arrays_scalars_and_numbers_pass_unchanged():
    array, scalar = np.zeros(4), np.int32(7)
    assert host_arrays((array, scalar, 5, 2.5)) == (array, scalar, 5, 2.5)
    assert host_arrays((array,))[0] is array


@pytest.mark.parametrize("device, where", [((2, 0), "a CUDA GPU"), ((10, 1), "a ROCm GPU"), ((99, 0), "DLPack device type 99")])
def test_a_tensor_on_a_gpu_is_refused_by_name(device, where):
    with pytest.raises(UserError, match=rf"argument 2: a Tensor on {where}; .*pass a tensor on the CPU \(`tensor.cpu\(\)`\)"):
        host_arrays((np.zeros(2), Tensor(np.zeros(2), device)))
