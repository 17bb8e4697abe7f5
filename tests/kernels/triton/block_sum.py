# @expect clean
# Launch: gpurace.triton.check(block_sum, (n // BLOCK,), x, out, n, BLOCK=...)
# (tests/frontend/test_triton.py). tl.sum reduces across the program's warps
# through shared memory, with the barriers Triton inserts; one atomic add per
# program.
import triton
import triton.language as tl


@triton.jit
def block_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))
