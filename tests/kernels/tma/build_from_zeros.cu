// @kernel build(CUtensorMap*, const float*, float*)
// @launch --arch sm_90a --grid 1 --block 512 --arg u8:128 --arg buf:4000:iota --arg buf:512
// @expect clean
// A map built in the kernel from nothing, as Triton's device-side tensor descriptors are at sm_90: warp 0
// zeroes a shared-memory object (each lane 4 of its 128 bytes), and after __syncwarp thread 0 fills in every
// field a 2D f32 tiled map needs (address, rank, extents 100x40, row pitch, box 32x16, element strides, type),
// warp 0 copies it to global memory releasing it to the tensormap proxy, and thread 0 acquires it before a TMA
// load of the box at column 80, row 2 (columns 100 and up are zeros). Twin without the __syncwarp:
// build_from_zeros_unsynced.cu; tests/programs/tma_map_from_zeros.cu checks the values.
#include <cuda.h>
#include "tensormap_ptx.cuh"

__global__ void build(CUtensorMap* gmap, const float* tensor, float* out)
{
    __shared__ alignas(128) float tile[16][32];
    __shared__ alignas(128) CUtensorMap smap;
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x < 32)
        reinterpret_cast<unsigned*>(&smap)[threadIdx.x] = 0;
    __syncwarp();
    if (threadIdx.x == 0) {
        map_replace_address_shared(&smap, tensor);
        map_replace_rank_shared(&smap, 1);
        map_replace_dim_shared(&smap, 0, 100);
        map_replace_dim_shared(&smap, 1, 40);
        map_replace_stride_shared(&smap, 0, 100 * sizeof(float));
        map_replace_box_shared(&smap, 0, 32);
        map_replace_box_shared(&smap, 1, 16);
        map_replace_element_stride_shared(&smap, 0, 1);
        map_replace_element_stride_shared(&smap, 1, 1);
        map_replace_elemtype_shared(&smap, 7);
        bar_init(&bar, 1);
    }
    __syncwarp();
    if (threadIdx.x < 32)
        map_copy_release(gmap, &smap);
    __syncthreads();
    if (threadIdx.x == 0) {
        map_acquire(gmap);
        bar_arrive_expect_tx(&bar, sizeof(tile));
        tma_load_2d(tile, gmap, 80, 2, &bar);
    }
    bar_wait(&bar, 0);
    out[threadIdx.x] = tile[threadIdx.x / 32][threadIdx.x % 32];
}
