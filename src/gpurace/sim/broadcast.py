"""Per-thread values that are the same for every thread, held once."""

from __future__ import annotations

import numpy as np


def same_for_all(n: int, value, dtype) -> np.ndarray:
    """A read-only array of `n` copies of `value` that holds one: special registers such as `%ntid` are
    indexed per thread like the others, but need no memory per thread."""
    return np.broadcast_to(np.array(value, dtype=dtype), (n,))
