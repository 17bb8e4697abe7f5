"""Warpgroup matrix products (`wgmma`, sm_90a): fragment layouts, shared-memory matrix descriptors, arithmetic.

`wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}` computes D (64 x N, f32) = A (64 x 16) * B
(16 x N) + D over the four warps of a warpgroup. Warp w (w = warp index % 4) holds rows 16w..16w+15 of D and,
when A comes from registers, of A; B, and A when it comes from shared memory, are read through *matrix
descriptors*. So each warp's rows depend on its own registers and on shared memory only, and the simulator
computes them when that warp executes the instruction (`sim.wgmma_ops`).

**Register fragments** (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts" of wgmma): D of
m64nNk16 gives each lane N/2 f32 registers; element i of lane (groupID g = lane / 4, threadID_in_group t =
lane % 4) is row 16w + g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2t + i % 2. A from registers is four .b32
registers of two 16-bit elements, laid out within the warp's 16 rows as `mma.m16n8k16`'s A.

**Matrix descriptors** (PTX ISA, "Matrix Descriptor Format"): a 64-bit value whose bits 0-13 hold the start
address, 16-29 the leading dimension byte offset (LBO), 32-45 the stride dimension byte offset (SBO), each
shifted right by 4 (they are multiples of 16), bits 49-51 the matrix base offset and 62-63 the swizzle mode
(0 none, 1 128-byte, 2 64-byte, 3 32-byte). Without swizzling (the *interleave* layout) a K-major operand is
made of *core matrices* of 8 rows by 16 bytes (8 x 8 16-bit elements), each 128 contiguous bytes, row by row;
LBO is the distance between core matrices adjacent in K, SBO between core matrices adjacent in M (A) or N (B).
So element (r, k) of an operand, r its row of M or column of N, lies at

    start + (r / 8) * SBO + (k / 8) * LBO + (r % 8) * 16 + (k % 8) * 2.

Swizzled layouts, nonzero base offsets and transposed (MN-major, `imm-trans-a/b` = 1) operands are refused by
name.

**Arithmetic** follows `sim.tensor_core`: f16 and bf16 products are exact in float32, summed from D (or zero
when `scale-d` is false) for k = 0, 1, ..., 15, rounding to float32 after each addition; `imm-scale-a/b` = -1
negate A or B.
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import UserError
from gpurace.sim import tensor_core as tc

M, K = 64, 16
WARPS = 4
ROWS = M // WARPS  # rows of D per warp
N_VALUES = tuple(range(8, 257, 8))
SWIZZLES = {1: "128-byte", 2: "64-byte", 3: "32-byte"}


def d_fragment(n: int) -> tc.Fragment:
    """A warp's 16 x n slice of D: element i of lane (g, t) at row g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2t + i % 2."""
    return tc.isa_fragment("f32", ROWS, n, n // 2, lambda g, t, i: (g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)))


def a_fragment(etype: str) -> tc.Fragment:
    """A warp's 16 x 16 slice of A from registers: `mma.m16n8k16`'s A layout."""
    return tc.isa_fragment(etype, ROWS, K, 8, tc._a_m16n8k16_16bit)


def decode_descriptor(desc: int, what: str) -> tuple[int, int, int]:
    """(start address, LBO, SBO) of a matrix descriptor; a layout the simulator does not model is refused."""
    swizzle = (desc >> 62) & 3
    if swizzle:
        raise UserError(f"{what}: the matrix descriptor asks for the {SWIZZLES[swizzle]} swizzle, which the simulator "
                        "does not support (only the no-swizzle layout)")  # fmt: skip
    if (desc >> 49) & 7:
        raise UserError(f"{what}: the matrix descriptor has a nonzero base offset, which the simulator does not support")
    return (desc & 0x3FFF) << 4, ((desc >> 16) & 0x3FFF) << 4, ((desc >> 32) & 0x3FFF) << 4


def row_addresses(start: int, lbo: int, sbo: int, rows: np.ndarray) -> np.ndarray:
    """The shared addresses `[len(rows), 2]` of the 16-byte pieces (k 0-7, k 8-15) of operand rows `rows`."""
    r = rows.astype(np.int64)[:, None]
    kb = np.arange(2, dtype=np.int64)[None, :]
    return (start + (r // 8) * sbo + kb * lbo + (r % 8) * 16).astype(np.uint64)


def pieces_to_matrix(data: np.ndarray, etype: str) -> np.ndarray:
    """`[..., rows, 2, 16]` bytes (two 16-byte pieces per row) -> `[..., rows, 16]` values (float32)."""
    halves = data.reshape(*data.shape[:-2], 32).view(np.uint16)
    return tc.decode(halves.astype(np.uint64), etype)


def product(a: np.ndarray, b_rows: np.ndarray, c: np.ndarray) -> np.ndarray:
    """`[warps, 16, 16]` A, `[warps, N, 16]` B as its N rows of K (float32 values), `[warps, 16, N]` C -> D
    (float32), in the order above."""
    return tc.multiply_accumulate(a, np.swapaxes(b_rows, 1, 2), c)
