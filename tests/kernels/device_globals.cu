// @kernel read_globals(int*, float*)
// @atomics read_globals 19:add.gpu
// @launch --grid 1 --block 32 --arg buf:32 --arg buf:32
// @expect clean
// Device globals with initialisers, including pointers initialised with addresses.
__device__ int counter = 7;
__device__ int table[4] = {1, 2, 3, 4};
__device__ int* counter_ptr = &counter;
__device__ int* table_mid = table + 2;
__device__ float weights[3] = {0.5f, 0.25f, 0.125f};
__device__ unsigned int hits;

__global__ void read_globals(int* out, float* fout)
{
    int t = threadIdx.x & 3;
    out[threadIdx.x] = table[t] + *counter_ptr + table_mid[t & 1];
    fout[threadIdx.x] = weights[t % 3];
    if (threadIdx.x == 0)
        atomicAdd(&hits, 1u);
}
