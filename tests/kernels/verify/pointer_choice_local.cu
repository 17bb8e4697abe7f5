// @verify_launch --grid 1 --block 128 -G
// @verify x race-free
// @verify y race-free
// Pointers chosen in a branch, kept in local memory under -G and passed by
// address to a function that is not inlined: each access of the callee is
// one of x and one of y, under the condition that the pointer holds it.
__device__ void copy(float** from, float** to)
{
    (*to)[threadIdx.x] = (*from)[threadIdx.x];
    *to = *from;
}

__global__ void pick(float* x, float* y, int flip)
{
    float* src = flip ? x : y;
    float* dst = flip ? y : x;
    copy(&src, &dst);
    copy(&src, &dst);
}
