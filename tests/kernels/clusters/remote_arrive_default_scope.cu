// @kernel remote_signal(int*)
// @shared remote_signal 8
// @barriers remote_signal 20 21 30 31
// @launch --arch compute_90 --grid 2 --block 32 --arg buf:1
// @expect clean
// mbarrier_init_fenced.cu with the remote arrive and the wait written as CUTLASS's ClusterBarrier writes them,
// with no scope: an arrive in the .shared::cluster state space is a .cluster one, so it does not race on the
// object with the owner's (.cta) wait.
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
                     " mbarrier.arrive.shared::cluster.b64 _, [r];\n}" ::"r"(smem(&bar)) : "memory");
    if (threadIdx.x == 0 && rank == 0) {
        asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
                     " @!p bra W;\n}" ::"r"(smem(&bar)) : "memory");
        out[0] = 1;
    }
    asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}
