// @launch --grid 2 --block 64 --arg buf:1 --arg buf:128
// @expect clean
// @prove hits race-free
// @prove out race-free
// @prove total race-free
// @prove_schedules 1 proved
// Each block hands its threads tickets with atomics on a shared counter (each
// thread writes its ticket out), then one thread adds the count to the total.
// The tickets make the default check run several schedules (their order
// decides what threads write); check --prove proves every object race-free
// for every input of this launch shape, and runs one.
__global__ void count(int* total, int* out)
{
    __shared__ int hits;
    if (threadIdx.x == 0) hits = 0;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(&hits, 1);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(total, hits);
}
