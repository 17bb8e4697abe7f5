// Thin wrappers over the sm_90a instructions that edit a tensor map in memory and fence it for the tensormap
// proxy, written in inline PTX as CUTLASS's grouped and pointer-array GEMMs write them.
#pragma once
#include "../bulk_copy/bulk_ptx.cuh"

// The edits are macros, so that reports name the line of the kernel that makes them. The instructions are
// sm_90a's: nvcc builds a program for compute_90a with a compute_90 image too, where they trap.

#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || !defined(__CUDA_ARCH__)

// the tensor's global address in the map at `map` (global memory)
#define map_replace_address_global(map, ptr)                                                                   \
    asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(map), "l"(ptr)       \
                 : "memory")

// the tensor's global address in the map at `map` (shared memory)
#define map_replace_address_shared(map, ptr)                                                                   \
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(smem(map)),     \
                 "l"(ptr)                                                                                      \
                 : "memory")

// extent `ord` (0: innermost) of the tensor in the map at `map` (shared memory)
#define map_replace_dim_shared(map, ord, extent)                                                               \
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], " #ord ", %1;" ::"r"(smem(map)), \
                 "r"(unsigned(extent))                                                                         \
                 : "memory")

// the byte stride of dimension ord + 1 of the tensor in the map at `map` (shared memory)
#define map_replace_stride_shared(map, ord, stride)                                                            \
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], " #ord ", %1;"              \
                 ::"r"(smem(map)), "l"((unsigned long long)(stride))                                           \
                 : "memory")

// the rank minus one of the map at `map` (shared memory)
#define map_replace_rank_shared(map, rank_minus_one)                                                           \
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], " #rank_minus_one ";" ::"r"(smem(map)) \
                 : "memory")

// box extent `ord` (0: innermost) of the map at `map` (shared memory)
#define map_replace_box_shared(map, ord, extent)                                                               \
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], " #ord ", %1;" ::"r"(smem(map)), \
                 "r"(unsigned(extent))                                                                         \
                 : "memory")

// element stride `ord` of the map at `map` (shared memory)
#define map_replace_element_stride_shared(map, ord, stride)                                                    \
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], " #ord ", %1;"             \
                 ::"r"(smem(map)), "r"(unsigned(stride))                                                       \
                 : "memory")

// the element type of the map at `map` (shared memory), a code of the PTX ISA's table (7: f32)
#define map_replace_elemtype_shared(map, code)                                                                 \
    asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], " #code ";" ::"r"(smem(map))   \
                 : "memory")

// copy the map at `src` (shared memory) to `dst` (global memory) and release it to the tensormap proxy; the
// whole warp executes it
#define map_copy_release(dst, src)                                                                             \
    asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned"      \
                 " [%0], [%1], 128;" ::"l"(dst), "r"(smem(src))                                                \
                 : "memory")

// this thread's generic writes to tensor maps so far become visible to the tensormap proxy
#define map_release() asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory")

// the same for the threads of this block only
#define map_release_cta() asm volatile("fence.proxy.tensormap::generic.release.cta;" ::: "memory")

// this thread's later TMA copies through the map at `map` (global memory) see the released edits
#define map_acquire(map) asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory")
#else
#define map_replace_address_global(map, ptr) __trap()
#define map_replace_address_shared(map, ptr) __trap()
#define map_replace_dim_shared(map, ord, extent) __trap()
#define map_replace_stride_shared(map, ord, stride) __trap()
#define map_replace_rank_shared(map, rank_minus_one) __trap()
#define map_replace_box_shared(map, ord, extent) __trap()
#define map_replace_element_stride_shared(map, ord, stride) __trap()
#define map_replace_elemtype_shared(map, code) __trap()
#define map_copy_release(dst, src) __trap()
#define map_release() __trap()
#define map_release_cta() __trap()
#define map_acquire(map) __trap()
#endif

// a flag another block waits for, set after this thread's earlier writes (st.release.gpu)
__device__ __forceinline__ void flag_release(unsigned* flag)
{
    asm volatile("st.release.gpu.global.u32 [%0], 1;" ::"l"(flag) : "memory");
}

// wait until `flag` is set, ordering this thread's later accesses after the writes before it was set
__device__ __forceinline__ void flag_acquire(const unsigned* flag)
{
    unsigned seen = 0;
    while (!seen)
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(flag) : "memory");
}
