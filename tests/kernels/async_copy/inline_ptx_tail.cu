// @kernel tail(const float4*, float4*, int)
// @launch --arch compute_80 --grid 1 --block 32 --arg f32:128:iota --arg f32:128 --arg 20
// @expect clean
// 16-byte copies written in inline PTX, as CUTLASS-style helpers do: threads past the end of the input
// give a source size of 0, so their copy reads nothing and zero-fills its slot. cp.async.wait_all (a
// commit, then a wait for every group) and a barrier come before each thread reads another's slot.
__device__ __forceinline__ void copy16(void* shared, const void* global, bool valid)
{
    unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(valid ? 16 : 0));
}

__global__ void tail(const float4* in, float4* out, int n)
{
    __shared__ float4 tile[32];
    int t = threadIdx.x;
    copy16(&tile[t], &in[t < n ? t : 0], t < n);
    asm volatile("cp.async.wait_all;\n" ::);
    __syncthreads();
    out[t] = tile[31 - t];
}
