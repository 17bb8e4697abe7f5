// Thin wrappers over the sm_90 bulk-copy instructions and the mbarrier operations they complete through,
// written in inline PTX as hand-written Hopper kernels do.
#pragma once

__device__ __forceinline__ unsigned smem(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bar_init(unsigned long long* bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}

// arrive on the barrier and raise its tx-count by `bytes`
__device__ __forceinline__ void bar_arrive_expect_tx(unsigned long long* bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void bar_wait(unsigned long long* bar, unsigned parity)
{
    asm volatile("{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT;\n}"
                 ::"r"(smem(bar)), "r"(parity)
                 : "memory");
}

// The copies are macros, so that reports name the line of the kernel that issues them.

// global -> shared, completing `bytes` transactions on `bar`
#define bulk_load(dst, src, bytes, bar)                                                                        \
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"    \
                 ::"r"(smem(dst)), "l"(src), "r"(unsigned(bytes)), "r"(smem(bar))                                       \
                 : "memory")

// shared -> global, in the thread's current bulk group
#define bulk_store(dst, src, bytes)                                                                            \
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smem(src)),    \
                 "r"(unsigned(bytes))                                                                                  \
                 : "memory")

// TMA: the box of `map` at column c0, row c1 -> shared, completing the box's bytes on `bar`
#define tma_load_2d(dst, map, c0, c1, bar)                                                                     \
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"            \
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem(dst)), "l"(map), "r"(int(c0)), "r"(int(c1)),         \
                 "r"(smem(bar))                                                                                \
                 : "memory")

// TMA: shared -> the box of `map` at column c0, row c1, in the thread's current bulk group
#define tma_store_2d(map, c0, c1, src)                                                                         \
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map),     \
                 "r"(int(c0)), "r"(int(c1)), "r"(smem(src))                                                    \
                 : "memory")

__device__ __forceinline__ void bulk_commit()
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

__device__ __forceinline__ void bulk_wait_all()
{
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__device__ __forceinline__ void bulk_wait_read_all()
{
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// make this thread's generic-proxy writes to shared memory visible to the async proxy
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
