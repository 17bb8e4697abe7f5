# @launch --kernel histogram --grid 4 --arg i32:512:iota --arg i32:8 --arg 512 --meta NBINS=8 --meta BLOCK=128
# @expect data-race global 17 18
# @expect data-race global 18 18
# Launch as histogram_atomic.py. The bins are read, incremented and stored
# without atomics: programs (and the lanes of one program) that meet the same
# bin race, and counts are lost.
import triton
import triton.language as tl


@triton.jit
def histogram(values_ptr, bins_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    values = tl.load(values_ptr + offsets, mask=mask)
    bins = bins_ptr + values % NBINS
    count = tl.load(bins, mask=mask)
    tl.store(bins, count + 1, mask=mask)
