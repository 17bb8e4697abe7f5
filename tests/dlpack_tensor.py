"""A tensor of some library, for tests: it speaks only the DLPack protocol, as PyTorch's and JAX's do."""

from __future__ import annotations

import numpy as np


class Tensor:
    """A stand-in for a library's tensor: its memory is reachable only through `__dlpack__`."""

    def __init__(self, values: np.ndarray, device: tuple[int, int] = (1, 0)):
        self._values, self._device = values, device

    def __dlpack__(self, **kwargs):
        return self._values.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._device

    def read(self) -> np.ndarray:
        return self._values.copy()
