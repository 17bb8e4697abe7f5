# @expect data-race global 16 17
# @expect data-race global 17 17
# Launch as spin_lock.py. The lock's atomics are relaxed: taking the lock
# does not acquire what the previous holder released, so the critical
# sections of different programs race on the accumulator.
import triton
import triton.language as tl


@triton.jit
def accumulate(x_ptr, acc_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    while tl.atomic_cas(lock_ptr, 0, 1, sem="relaxed") == 1:
        pass
    acc = tl.load(acc_ptr + tl.arange(0, BLOCK))
    tl.store(acc_ptr + tl.arange(0, BLOCK), acc + x)
    tl.atomic_xchg(lock_ptr, 0, sem="relaxed")
