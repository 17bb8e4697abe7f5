# @launch --kernel tag --grid 3 --arg f32:256:iota --arg f32:256 --arg 256 --meta BLOCK=128
# @expect data-race global 17 17
# Launch: gpurace.triton.check(tag, (n // (BLOCK // 2) - 1,), x, out, n, BLOCK=...)
# (tests/frontend/test_triton.py). Each program stores x + its id over a
# whole block but programs step by half a block, so neighbouring programs
# store different values into the same elements.
import triton
import triton.language as tl


@triton.jit
def tag(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * (BLOCK // 2) + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + pid, mask=mask)
