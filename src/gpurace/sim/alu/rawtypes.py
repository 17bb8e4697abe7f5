"""PTX types and the NumPy dtypes that carry their raw bits.

Every value crosses the ALU boundary as raw bits in the unsigned integer dtype
of the type's size, so registers can be stored untyped (PTX registers are
untyped bit containers too); arithmetic reinterprets them with free views.
"""

from __future__ import annotations

import numpy as np

from gpurace.frontend.ptx.ir import type_size

UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
HALF_FAMILY = frozenset({"f16", "bf16", "f16x2", "bf16x2"})

#: Canonical NaN bit patterns the GPU produces for NaN results.
CANONICAL_NAN = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}


def width(ptx_type: str) -> int:
    """Size in bits (`pred` counts as 1)."""
    return 1 if ptx_type == "pred" else type_size(ptx_type) * 8


def raw_dtype(ptx_type: str) -> type:
    """The dtype that carries `ptx_type`'s raw bits (`np.bool_` for predicates)."""
    return np.bool_ if ptx_type == "pred" else UNSIGNED[width(ptx_type)]


def is_signed(ptx_type: str) -> bool:
    return ptx_type[0] == "s"


def is_int(ptx_type: str) -> bool:
    return ptx_type[0] in "usb" and ptx_type not in ("bf16", "bf16x2") and ptx_type != "b128"


def int_view(x: np.ndarray, ptx_type: str) -> np.ndarray:
    """`x` (raw bits) viewed as the signed or unsigned integer it holds."""
    table = SIGNED if is_signed(ptx_type) else UNSIGNED
    return x.view(table[width(ptx_type)])


def int_range(ptx_type: str) -> tuple[int, int]:
    n = width(ptx_type)
    if is_signed(ptx_type):
        return -(1 << (n - 1)), (1 << (n - 1)) - 1
    return 0, (1 << n) - 1
