// @kernel retarget(CUtensorMap, CUtensorMap*, const float*, const float*, float*)
// @launch --arch sm_90a --grid 1 --block 512 --arg tensormap:f32:40x100:16x32:2 --arg u8:128 --arg buf:4000 --arg buf:4000:iota --arg buf:512
// @expect clean
// A CUTLASS pointer-array GEMM's way of retargeting a TMA: thread 0 copies the map it was given into shared
// memory and edits it there (another tensor's address, an extent of 56 columns in place of 100 and a row
// pitch of 64 floats), warp 0 copies the edited map to global memory releasing it to the tensormap proxy
// (tensormap.cp_fenceproxy), and thread 0 acquires it before its TMA load of the box at column 40, row 2
// through it. The map now reads `other` as 40 rows of 56 floats, 64 apart: columns 56..71 of the box are
// zeros. tests/programs/tma_map_replace.cu checks the values; the twins edit the map in global memory
// (replace_in_global.cu, replace_in_global_unfenced.cu).
#include <cuda.h>
#include "tensormap_ptx.cuh"

__global__ void retarget(const __grid_constant__ CUtensorMap map, CUtensorMap* gmap, const float* tensor, const float* other,
                         float* out)
{
    __shared__ alignas(128) float tile[16][32];
    __shared__ alignas(128) CUtensorMap smap;
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0) {
        smap = map;
        map_replace_address_shared(&smap, other);
        map_replace_dim_shared(&smap, 0, 56);
        map_replace_stride_shared(&smap, 0, 64 * sizeof(float));
        bar_init(&bar, 1);
    }
    __syncwarp();
    if (threadIdx.x < 32)
        map_copy_release(gmap, &smap);
    else if (threadIdx.x == 32)
        map_acquire((CUtensorMap*)nullptr);  // a fence, not an access: CUTLASS's idle epilogue warps acquire null
    __syncthreads();
    if (threadIdx.x == 0) {
        map_acquire(gmap);
        bar_arrive_expect_tx(&bar, sizeof(tile));
        tma_load_2d(tile, gmap, 40, 2, &bar);
    }
    bar_wait(&bar, 0);
    out[threadIdx.x] = tile[threadIdx.x / 32][threadIdx.x % 32];
}
