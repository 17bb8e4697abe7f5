"""The arguments of kernels launched from Python (Numba, CuPy, Triton): tensors of other libraries taken as
NumPy arrays, and how reports show arguments.

`check.describe_arg` shows arrays by type and size and other values by
`repr`; a NumPy scalar has a shape too (`()`), which would show it as a
one-element array. Kernels launched from Python take typed NumPy scalars
often (CuPy passes their bytes as they are), so their type is worth seeing.

Triton kernels are written against PyTorch tensors, and tests hand them
`torch.Tensor`s. Any tensor in host memory that speaks DLPack (PyTorch's
and JAX's CPU tensors, ...) is taken as the NumPy array that shares its
memory (`numpy.from_dlpack`), so the kernel's results appear in the tensor,
as on a GPU; no such library is imported. A tensor on a GPU cannot be
shared with a simulator on the host, and is refused by name.
"""

from __future__ import annotations

import numpy as np

from gpurace.check import describe_arg
from gpurace.errors import UserError

DLPACK_CPU = 1
"""DLPack's device type of host memory (`kDLCPU`)."""
_DLPACK_DEVICES = {2: "a CUDA GPU", 3: "pinned host memory of CUDA", 4: "an OpenCL device", 10: "a ROCm GPU",
                   13: "managed memory of CUDA", 14: "a oneAPI device"}  # fmt: skip


def host_array(value, label: str):
    """`value`, or the NumPy array sharing the memory of a host tensor that speaks DLPack (module docstring)."""
    if isinstance(value, (np.ndarray, np.generic)) or not hasattr(value, "__dlpack_device__"):
        return value
    device = value.__dlpack_device__()[0]
    if device != DLPACK_CPU:
        where = _DLPACK_DEVICES.get(int(device), f"DLPack device type {int(device)}")
        raise UserError(
            f"{label}: a {type(value).__name__} on {where}; gpurace simulates the GPU in host memory: pass a "
            "tensor on the CPU (`tensor.cpu()`), whose memory it shares, or a NumPy array"
        )
    try:
        return np.from_dlpack(value)
    except (BufferError, TypeError, ValueError, RuntimeError) as e:
        raise UserError(f"{label}: a {type(value).__name__} NumPy cannot share through DLPack ({e})") from None


def host_arrays(args) -> tuple:
    """`host_array` of each positional argument, labelled by position."""
    return tuple(host_array(a, f"argument {i + 1}") for i, a in enumerate(args))


def describe_value(arg) -> str:
    """`float32[256]` for an array, `int32(256)` for a NumPy scalar, `256` or `True` for a Python value."""
    return f"{arg.dtype.name}({arg.item()!r})" if isinstance(arg, np.generic) else describe_arg(arg)
