# @expect clean
# Launch: gpurace.triton.check(matmul, (M // BM, N // BN), a, b, c, M, N, K, BM=..., BN=..., BK=...)
# (tests/frontend/test_triton.py). tl.dot compiles to ldmatrix and mma on
# sm_80, with the tiles staged through shared memory between barriers, and to
# wgmma on swizzled shared memory at cc=90; each program writes its own tile of c.
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + ks)[None, :])
        b = tl.load(b_ptr + (k + ks)[:, None] * N + cols[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)
