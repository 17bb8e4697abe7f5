"""Warpgroup matrix products (`wgmma`, sm_90a): fragment layouts, shared-memory matrix descriptors, arithmetic.

`wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}` computes D (64 x N, f32) = A (64 x 16) * B
(16 x N) + D over the four warps of a warpgroup; `m64nNk8.f32.tf32.tf32` the same over K = 8, and
`m64nNk32` over K = 32 of 8-bit inputs: `.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}` and `.s32.{s8,u8}.{s8,u8}` (32 bytes
of each row of A and column of B, whatever the type). f16 inputs may accumulate in f16 too (`.f16.f16.f16`). Warp w (w = warp index % 4) holds rows 16w..16w+15 of D and,
when A comes from registers, of A; B, and A when it comes from shared memory, are read through *matrix
descriptors*. So each warp's rows depend on its own registers and on shared memory only, and the simulator
computes them when that warp executes the instruction (`sim.wgmma_ops`).

**Register fragments** (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts" of wgmma): D of
m64nNk16 gives each lane N/2 f32 (or s32) registers; element i of lane (groupID g = lane / 4, threadID_in_group
t = lane % 4) is row 16w + g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2t + i % 2; an f16 D holds the same
elements two to a register (N/4 registers, element i in the low half). A from registers is four .b32
registers of two 16-bit elements, laid out within the warp's 16 rows as `mma.m16n8k16`'s A, of one tf32
element, as `mma.m16n8k8`'s A, or of four 8-bit elements, as `mma.m16n8k32`'s A.

**Matrix descriptors** (PTX ISA, "Matrix Descriptor Format", "Shared Memory Matrix Layout", "Canonical
Layouts"): a 64-bit value whose bits 0-13 hold the start address, 16-29 the leading dimension byte offset (LBO),
32-45 the stride dimension byte offset (SBO), each shifted right by 4 (they are multiples of 16), bits 49-51 the
matrix base offset and 62-63 the swizzle mode (0 none, 1 128-byte, 2 64-byte, 3 32-byte). An operand is K-major
(`imm-trans` 0: the 16 k of a row of M or column of N lie together) or MN-major (`imm-trans` 1, for A from
shared memory and for B, 16-bit types only: the rows of M or columns of N of one k lie together). Its elements
sit in 16-byte *chunks* of consecutive elements of the major dimension (8 of 16 bits, 4 of tf32, 16 of 8 bits). With S the
swizzle's span in bytes (32, 64, 128) and E = S / 2 elements, element (r, k), r its row of M or column of N,
of a 16-bit type lies at byte offset (the ISA's canonical layouts, CuTe notation there):

    K-major,  no swizzle: (r / 8) * SBO + (k / 8) * LBO + (r % 8) * 16 + (k % 8) * 2
    K-major,  swizzled:   (r / 8) * SBO + (r % 8) * S + k * 2                      (LBO unused)
    MN-major, no swizzle: (r / 8) * SBO + (k / 8) * LBO + (k % 8) * 16 + (r % 8) * 2
    MN-major, swizzled:   (r / E) * LBO + (k / 8) * SBO + (k % 8) * S + (r % E) * 2

and of tf32 (K-major) at (r / 8) * SBO + (k / 4) * LBO + (r % 8) * 16 + (k % 4) * 4, or (r / 8) * SBO +
(r % 8) * S + k * 4 swizzled, and of 8-bit types (K-major) at (r / 8) * SBO + (k / 16) * LBO + (r % 8) * 16 +
k % 16, or (r / 8) * SBO + (r % 8) * S + k swizzled: for every type, a row's 32 bytes are the same two chunks.

from the start address; a swizzle then permutes the 16-byte chunks of the address a: chunk bits 4.. are XORed
with bits 7.. (log2(S / 16) bits, CuTe's Swizzle<1|2|3, 4, 3>), the same permutation as TMA's
(`sim.tensor_maps.swizzled`). The pattern repeats every 8 x S bytes; the base offset is 0 when it starts at
such a boundary, else (pattern start >> 7) & 7, and the simulator takes the XOR's bits 7.. relative to that
start (bits 7-9 of a minus the base offset); no-swizzle mode ignores the base offset, as the ISA says.

**Arithmetic** follows `sim.tensor_core`: f16, bf16, tf32, e4m3 and e5m2 products are exact in float32 (a tf32
operand is the sign, exponent and top 10 mantissa bits of its 32), summed from D (or zero when `scale-d` is
false) for k = 0, 1, ..., K - 1, rounding to float32 after each addition, and an f16 D rounded once at the end
(to nearest even); `imm-scale-a/b` = -1 negate A or B. Integer products and sums are exact, and the result
wraps modulo 2**32 or, with `.satfinite`, saturates to the s32 range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.errors import UserError
from gpurace.sim import tensor_core as tc

M, K = 64, 16
K_OF = {"f16": K, "bf16": K, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
"""K of a product by input type."""
ACCUMULATORS = {"f16": ("f32", "f16"), "bf16": ("f32",), "tf32": ("f32",), "e4m3": ("f32", "f16"),
                "e5m2": ("f32", "f16"), "s8": ("s32",), "u8": ("s32",)}  # fmt: skip
"""The D types each input type allows."""
MIXED = (frozenset({"e4m3", "e5m2"}), frozenset({"s8", "u8"}))
"""Input types that A and B may mix (A e4m3 with B e5m2, A s8 with B u8); others must be the same."""
WARPS = 4
ROWS = M // WARPS  # rows of D per warp
N_VALUES = tuple(range(8, 257, 8))


def d_fragment(n: int, dtype: str = "f32") -> tc.Fragment:
    """A warp's 16 x n slice of D: element i of lane (g, t) at row g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2t + i % 2."""
    return tc.isa_fragment(dtype, ROWS, n, n // 2, lambda g, t, i: (g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)))


def a_fragment(etype: str) -> tc.Fragment:
    """A warp's 16 x K slice of A from registers: `mma.m16n8k16`'s A layout, `mma.m16n8k8`'s for tf32, or
    `mma.m16n8k32`'s for 8 bits."""
    if etype == "tf32":
        return tc.isa_fragment(etype, ROWS, K_OF[etype], 4, tc._a_m16n8k8_tf32)
    if tc.ELEMENT_BITS[etype] == 8:
        return tc.isa_fragment(etype, ROWS, K_OF[etype], 16, tc._a_m16n8k32_8bit)
    return tc.isa_fragment(etype, ROWS, K, 8, tc._a_m16n8k16_16bit)


@dataclass(frozen=True)
class Descriptor:
    """A decoded matrix descriptor (module docstring): byte address and offsets, swizzle span in bytes (0: none)."""

    start: int
    lbo: int
    sbo: int
    base_offset: int
    span: int

    @staticmethod
    def decode(desc: int) -> Descriptor:
        swizzle = (desc >> 62) & 3
        span = 256 >> swizzle if swizzle else 0  # mode 1: 128 bytes, 2: 64, 3: 32
        return Descriptor((desc & 0x3FFF) << 4, ((desc >> 16) & 0x3FFF) << 4, ((desc >> 32) & 0x3FFF) << 4,
                          (desc >> 49) & 7 if span else 0, span)  # fmt: skip

    def chunk_addresses(self, rows: np.ndarray, mn_major: bool) -> np.ndarray:
        """The shared addresses of the 16-byte chunks holding rows `rows` (of M or columns of N, a multiple of 8
        in number, each run of 8 starting at a multiple of 8) by 16 k: `[len(rows), 2]` (chunk k / 8 of each
        row) for a K-major operand, `[len(rows) / 8, 16]` (chunk of rows 8i.. at each k) for an MN-major one."""
        if mn_major:
            r = rows.astype(np.int64)[::8, None]
            k = np.arange(K, dtype=np.int64)[None, :]
            if self.span:
                e = self.span // 2
                offset = (r // e) * self.lbo + (k // 8) * self.sbo + (k % 8) * self.span + (r % e) * 2
            else:
                offset = (r // 8) * self.sbo + (k // 8) * self.lbo + (k % 8) * 16
        else:
            r = rows.astype(np.int64)[:, None]
            chunk = np.arange(2, dtype=np.int64)[None, :]  # the row's 32 bytes of k
            inner = (r % 8) * (self.span or 16)
            offset = (r // 8) * self.sbo + inner + chunk * (16 if self.span else self.lbo)
        return self.swizzle(self.start + offset).astype(np.uint64)

    def swizzle(self, addresses: np.ndarray) -> np.ndarray:
        """`addresses` with their 16-byte chunks permuted by the swizzle, its pattern from the base offset on."""
        if not self.span:
            return addresses
        phase = ((addresses >> 7) - self.base_offset) & (self.span // 16 - 1)
        return addresses ^ (phase << 4)


def chunks_to_matrix(data: np.ndarray, etype: str, mn_major: bool) -> np.ndarray:
    """The bytes of `Descriptor.chunk_addresses`' chunks, `[..., *its shape, 16]`, as `[..., rows, K]` values
    (float32, or int64 for integers), row r's k = 0..K-1."""
    raw = data.view({32: np.uint32, 16: np.uint16, 8: np.uint8}[tc.ELEMENT_BITS[etype]])
    values = tc.decode(raw.astype(np.uint64), etype)  # [..., a, b, elements per chunk]
    if not mn_major:
        return values.reshape(*values.shape[:-2], K_OF[etype])
    rows = np.swapaxes(values, -1, -2)  # [..., blocks of 8 rows, 8, 16 k]
    return rows.reshape(*rows.shape[:-3], -1, K)


def product(a: np.ndarray, b_rows: np.ndarray, c: np.ndarray, saturate: bool = False) -> np.ndarray:
    """`[warps, 16, K]` A, `[warps, N, K]` B as its N rows of K, `[warps, 16, N]` C -> D, in the order above
    (float32 values, or int64 for integer inputs, wrapped or saturated to s32)."""
    return tc.multiply_accumulate(a, np.swapaxes(b_rows, 1, 2), c, saturate)
