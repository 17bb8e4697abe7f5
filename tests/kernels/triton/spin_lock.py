# @expect clean
# Launch: gpurace.triton.check(accumulate, (n // BLOCK,), x, acc, lock, n, BLOCK=...)
# (tests/frontend/test_triton.py). Programs add their block into one
# accumulator under a spin lock: tl.atomic_cas and tl.atomic_xchg are
# acq_rel at gpu scope by default, so the lock orders the critical sections.
import triton
import triton.language as tl


@triton.jit
def accumulate(x_ptr, acc_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    acc = tl.load(acc_ptr + tl.arange(0, BLOCK))
    tl.store(acc_ptr + tl.arange(0, BLOCK), acc + x)
    tl.atomic_xchg(lock_ptr, 0)
