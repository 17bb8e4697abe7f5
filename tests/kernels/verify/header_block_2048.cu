//--blockDim=2048 --gridDim=4
// @verify a race-free
// @verify tile race-free
// @verify_barriers proved uniform
// A GPUVerify header may state a block of 2048 threads, which no GPU runs:
// verify proves the kernel for the dimensions stated, as GPUVerify does, and
// says that the launch is invalid on hardware (`warpSize` is PTX's constant
// WARP_SZ). Each thread owns its element
// of the tile and of `a`, also past the first 1024 threads.
__global__ void wide(int* a)
{
    __shared__ int tile[2048];
    tile[threadIdx.x] = threadIdx.x / warpSize;
    __syncthreads();
    a[blockIdx.x * blockDim.x + threadIdx.x] = tile[2047 - threadIdx.x];
}
