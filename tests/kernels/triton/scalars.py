# @expect clean
# Launch: gpurace.triton.check(select, 1, out, flag, half, big, scale, BLOCK=...)
# (tests/frontend/test_triton.py). Scalars of Triton's types i1, fp16, i64
# (an int past 32 bits) and fp32 reach the kernel as their own bytes.
import triton
import triton.language as tl


@triton.jit
def select(out_ptr, flag, half, big, scale, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    value = tl.where(flag, half.to(tl.float32), scale) * offsets
    tl.store(out_ptr + offsets, value + (big - (1 << 40)).to(tl.float32))
