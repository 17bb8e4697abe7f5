# @launch --kernel histogram --grid 4 --arg i32:512:iota --arg i32:8 --arg 512 --meta NBINS=8 --meta BLOCK=128
# @expect clean
# Launch: gpurace.triton.check(histogram, (n // BLOCK,), values, bins, n, NBINS=..., BLOCK=...)
# (tests/frontend/test_triton.py). Programs count into shared bins with
# atomic adds, which never race with each other.
import triton
import triton.language as tl


@triton.jit
def histogram(values_ptr, bins_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    values = tl.load(values_ptr + offsets, mask=mask)
    tl.atomic_add(bins_ptr + values % NBINS, 1, mask=mask)
