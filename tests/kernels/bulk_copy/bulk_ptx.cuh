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

// shared -> global reduction `op_type` (e.g. "add.u32") of `bytes` bytes, in the thread's current bulk group
#define bulk_reduce(op_type, dst, src, bytes)                                                                  \
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group." op_type " [%0], [%1], %2;" ::"l"(dst), \
                 "r"(smem(src)), "r"(unsigned(bytes))                                                          \
                 : "memory")

// shared -> the same offset of `dst` in block `rank` of the cluster, reduced by `op_type`, completing `bytes`
// transactions on that block's `bar`
#define bulk_reduce_to_rank(op_type, dst, src, bytes, bar, rank)                                               \
    asm volatile("{\n .reg .b32 d, b;\n mapa.shared::cluster.u32 d, %0, %4;\n mapa.shared::cluster.u32 b, %3, %4;\n" \
                 " cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes." op_type        \
                 " [d], [%1], %2, [b];\n}" ::"r"(smem(dst)), "r"(smem(src)), "r"(unsigned(bytes)),             \
                 "r"(smem(bar)), "r"(unsigned(rank))                                                           \
                 : "memory")

// global -> the same offset of `dst` in every block of the cluster whose rank is a bit of `mask`, completing
// `bytes` transactions on each one's `bar`
#define bulk_load_multicast(dst, src, bytes, bar, mask)                                                        \
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"        \
                 " [%0], [%1], %2, [%3], %4;" ::"r"(smem(dst)), "l"(src), "r"(unsigned(bytes)), "r"(smem(bar)), \
                 "h"((unsigned short)(mask))                                                                   \
                 : "memory")

// arrive (releasing at cluster scope) on `bar` of block `rank` of the cluster
#define bar_arrive_remote(bar, rank)                                                                           \
    asm volatile("{\n .reg .b32 b;\n mapa.shared::cluster.u32 b, %0, %1;\n"                                   \
                 " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [b];\n}" ::"r"(smem(bar)),           \
                 "r"(unsigned(rank))                                                                           \
                 : "memory")

// wait for phase `parity` of this block's `bar`, acquiring at cluster scope (what remote arrivals release)
__device__ __forceinline__ void bar_wait_cluster(unsigned long long* bar, unsigned parity)
{
    asm volatile("{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
                 " @!p bra WAIT;\n}" ::"r"(smem(bar)), "r"(parity)
                 : "memory");
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive;\n barrier.cluster.wait;" ::: "memory");
}

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// TMA: shared -> the box of `map` at column c0, row c1, reduced by `op` (e.g. "add") in the map's element type,
// in the thread's current bulk group
#define tma_reduce_2d(op, map, c0, c1, src)                                                                    \
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." op ".tile.bulk_group [%0, {%1, %2}], [%3];" \
                 ::"l"(map), "r"(int(c0)), "r"(int(c1)), "r"(smem(src))                                        \
                 : "memory")

// TMA: the box of `map` at column c0, row c1 -> the same offset of `dst` in every block of the cluster whose
// rank is a bit of `mask`, completing the box's bytes on each one's `bar`
#define tma_load_2d_multicast(dst, map, c0, c1, bar, mask)                                                     \
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"            \
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem(dst)), "l"(map),              \
                 "r"(int(c0)), "r"(int(c1)), "r"(smem(bar)), "h"((unsigned short)(mask))                       \
                 : "memory")
