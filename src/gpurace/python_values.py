"""How reports show the arguments of kernels launched from Python (CuPy, Triton).

`check.describe_arg` shows arrays by type and size and other values by
`repr`; a NumPy scalar has a shape too (`()`), which would show it as a
one-element array. Kernels launched from Python take typed NumPy scalars
often (CuPy passes their bytes as they are), so their type is worth seeing.
"""

from __future__ import annotations

import numpy as np

from gpurace.check import describe_arg


def describe_value(arg) -> str:
    """`float32[256]` for an array, `int32(256)` for a NumPy scalar, `256` or `True` for a Python value."""
    return f"{arg.dtype.name}({arg.item()!r})" if isinstance(arg, np.generic) else describe_arg(arg)
