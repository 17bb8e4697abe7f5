// @kernel descend(int*)
// @launch --grid 1 --block 4 --arg buf:4 --max-call-depth 64
// @expect stack-overflow 11
// A recursion with no base case (two calls, so the compiler cannot make it a
// loop): every thread calls itself until the stack limit (here 64 nested
// calls) ends the run with a stack-overflow finding at the recursive call,
// instead of running until the step budget is spent.
__device__ __noinline__ int descend_once(int* out, int depth)
{
    out[threadIdx.x] = depth;
    return descend_once(out, depth + 1) + descend_once(out, depth + 2);
}

__global__ void descend(int* out)
{
    descend_once(out, 0);
}
