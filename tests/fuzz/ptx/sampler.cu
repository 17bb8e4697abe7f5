// One kernel that uses the instructions the other fuzz seeds lack (compiled for sm_80):
// named barriers with thread counts, bar.arrive, bar.red, cp.async, redux, nanosleep,
// isspacep, vector loads/stores, bit intrinsics, funnel shifts, byte permutes.
#include <cuda_pipeline.h>

__global__ void sampler(const int4* in, int* out, unsigned n)
{
    __shared__ int tile[64];
    __shared__ int flag;
    unsigned t = threadIdx.x;
    __pipeline_memcpy_async(&tile[t & 63], &out[t & 63], sizeof(int));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    int4 v = in[t];
    int count = __syncthreads_count(v.x > 0);
    int any = __syncthreads_or(v.y > 0);
    if (t < 32) {
        asm volatile("bar.arrive 1, 64;");
    } else {
        asm volatile("bar.sync 1, 64;");
    }
    unsigned r = __reduce_add_sync(0xffffffffu, (unsigned)v.z);
    r ^= __reduce_max_sync(0xffffffffu, (unsigned)v.w);
    r += __popc(r) + __clz(v.x) + __brev(v.y) + __ffs(v.z) + __byte_perm(v.x, v.y, 0x3210);
    r += __funnelshift_l(v.x, v.y, t) + __funnelshift_r(v.z, v.w, 3);
    r += __isShared(&tile[0]) + __isGlobal(out);
    __nanosleep(t);
    atomicCAS(&flag, 0, 1);
    __threadfence_block();
    tile[t & 63] += r + count + any;
    __syncthreads();
    reinterpret_cast<int4*>(out)[t] = make_int4(tile[t & 63], r, count, any);
}
