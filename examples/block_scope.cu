// @kernel count_hits(const float*, unsigned int*, float, int)
// @atomics count_hits 15:add.cta
// @launch --grid 4 --block 128 --arg buf:512:iota --arg buf:1 --arg 100.0 --arg 512
// @expect data-race global 15 15
// Counting with the wrong scope: atomicAdd_block is atomic only among the
// threads of one block, but every block adds to the same global counter.
// atomicAdd (device scope) is the fix.

__global__ void count_hits(const float* values, unsigned int* hits, float threshold, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (values[i] > threshold)
        atomicAdd_block(hits, 1u);
}
