// Thin wrappers over the mbarrier instructions, written in inline PTX as CUTLASS-style kernels do.
#pragma once

__device__ __forceinline__ unsigned smem(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bar_init(unsigned long long* bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void bar_arrive(unsigned long long* bar)
{
    asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}" ::"r"(smem(bar)) : "memory");
}

__device__ __forceinline__ bool bar_try_wait(unsigned long long* bar, unsigned parity)
{
    unsigned done;
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}

__device__ __forceinline__ void bar_wait(unsigned long long* bar, unsigned parity)
{
    while (!bar_try_wait(bar, parity)) {
    }
}
