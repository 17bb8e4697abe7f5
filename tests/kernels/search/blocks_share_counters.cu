// @launch --block 32 --search
// @expect data-race global 8 8
// Every block adds its index to the same 32 counters with plain loads and
// stores. One block is fine; two or more race. No grid is given, so the input
// search chooses it.
__global__ void accumulate(int* counters)
{
    counters[threadIdx.x] += blockIdx.x;
}
