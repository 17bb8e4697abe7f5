// @kernel remote_signal(int*)
// @shared remote_signal 8
// @barriers remote_signal 20 21 30 31
// @launch --arch compute_90 --grid 2 --block 32 --arg buf:1
// @expect clean
// Block 1 arrives on block 0's mbarrier through distributed shared memory once both blocks passed a cluster
// barrier whose arrive is .relaxed, as CUTLASS's pipelines start: what orders block 0's mbarrier.init before
// the remote arrive is the fence.mbarrier_init.release.cluster before the relaxed arrive (a fence then a
// strong operation: a release pattern). Twin without the fence: mbarrier_init_unfenced.cu.
__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__global__ void __cluster_dims__(2, 1, 1) remote_signal(int* out)
{
    __shared__ alignas(8) unsigned long long bar;
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
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
