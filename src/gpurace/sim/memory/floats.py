"""Bit-level conversions for the element types NumPy lacks or stores as raw bits.

Memory holds raw little-endian bits; atomics and initializers need to turn
them into numbers and back. bfloat16 has no NumPy dtype, so it goes through
float32 (exact in that direction) and back with round-to-nearest-even.
"""

from __future__ import annotations

import numpy as np

UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SINT_OF_SIZE = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
FLOAT_OF_TYPE = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16) to float32 values (exact: bf16 is the top half of f32)."""
    return (np.asarray(raw).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 values to bfloat16 bits (uint16), rounding to nearest even; NaNs stay (quiet) NaNs."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    quiet = (bits >> np.uint32(16)) | np.uint32(0x40)
    return np.where(nan, quiet, rounded).astype(np.uint16)
