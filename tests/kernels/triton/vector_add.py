# @launch --kernel add --grid 4 --arg f32:1000:rand --arg f32:1000:rand --arg f32:1000 --arg 1000 --meta BLOCK=256
# @expect clean
# Launch: gpurace.triton.check(add, (triton.cdiv(n, BLOCK),), x, y, out, n, BLOCK=...)
# (tests/frontend/test_triton.py). Each program adds its own block of elements.
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
