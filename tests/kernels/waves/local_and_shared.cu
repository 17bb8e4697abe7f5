// @launch --grid 16 --block 64 --resident-threads 192 --arg buf:1024 --arg buf:1024
// @expect clean
// Every thread fills a local array (local memory, indexed at run time), sums a
// window of it, and exchanges the sums through shared memory between barriers.
// With three blocks resident the launch runs in six waves, the last one short;
// the results must be those of a launch with every block resident.
__global__ void local_and_shared(const int* in, int* out)
{
    __shared__ int sums[64];
    int local[16];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < 16; ++i)
        local[i] = in[g] * (i + 1) + blockIdx.x;
    int s = 0;
    for (int i = threadIdx.x % 4; i < 16; i += 4)
        s += local[(i * 7 + in[g]) & 15];
    sums[threadIdx.x] = s;
    __syncthreads();
    out[g] = sums[(threadIdx.x + 1) % blockDim.x] - sums[threadIdx.x];
}
