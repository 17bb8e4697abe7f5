// @launch --grid 8 --block 32 --resident-threads 64 --arg buf:256
// @expect uninitialized-read shared 12
// Every block but block 5 fills its shared tile before the barrier; block 5
// reads its tile without writing it. Block 5 runs in the third wave, in the
// slot of shared memory that block 3 (second wave) wrote: its read must still
// be an uninitialised read, as block 5's shared memory starts undefined.
__global__ void late_wave_uninitialised(int* out)
{
    __shared__ int tile[32];
    if (blockIdx.x != 5) tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % 32];
}
