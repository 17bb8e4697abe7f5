// @kernel climb(int*)
// @launch --grid 1 --block 4 --arg buf:4 --max-call-depth 64
// @expect clean
// The twin of unbounded_recursion.cu: the recursion stops at 61 nested calls,
// within the stack limit of 64, so the run ends normally.
__device__ __noinline__ int climb_once(int* out, int depth)
{
    out[threadIdx.x] = depth;
    if (depth >= 60)
        return 0;
    return climb_once(out, depth + 1) + climb_once(out, depth + 61);
}

__global__ void climb(int* out)
{
    climb_once(out, 0);
}
