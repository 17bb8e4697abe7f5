// @kernel fill(int*)
// @launch --grid 1 --block 2 --arg buf:2
// @expect stack-overflow 15
// A recursion whose frames hold a 4 KiB local array each: long before 1024
// nested calls, the frames outgrow the 512 KiB of local memory a GPU gives
// one thread, and the call that would pass it is a stack-overflow finding.
__device__ __noinline__ int fill_frame(int* out, int depth)
{
    int scratch[1024];
    scratch[depth % 1024] = depth;
    scratch[(depth * 3) % 1024] = out[threadIdx.x];
    out[threadIdx.x] = scratch[(depth * 5) % 1024];
    if (depth == 100000)
        return scratch[5];
    return fill_frame(out, depth + 1) + fill_frame(out, depth + 2) + scratch[(depth * 7) % 1024];
}

__global__ void fill(int* out)
{
    fill_frame(out, 0);
}
