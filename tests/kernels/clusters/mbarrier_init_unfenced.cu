// @kernel remote_signal(int*)
// @shared remote_signal 8
// @barriers remote_signal 18 19 28 29
// @launch --arch compute_90 --grid 2 --block 32 --arg buf:1
// @expect data-race shared 16 21
// mbarrier_init_fenced.cu without its fence.mbarrier_init: the relaxed cluster arrive orders nothing, so block
// 1's remote arrive races with block 0's mbarrier.init.
__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__global__ void __cluster_dims__(2, 1, 1) remote_signal(int* out)
{
    __shared__ alignas(8) unsigned long long bar;
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    // missing: fence.mbarrier_init.release.cluster
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    if (threadIdx.x == 0 && rank == 1)
        asm volatile("{\n .reg .b32 r;\n mapa.shared::cluster.u32 r, %0, 0;\n"
                     " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [r];\n}" ::"r"(smem(&bar)) : "memory");
    if (threadIdx.x == 0 && rank == 0) {
        asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], 0;\n"
                     " @!p bra W;\n}" ::"r"(smem(&bar)) : "memory");
        out[0] = 1;
    }
    asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}
