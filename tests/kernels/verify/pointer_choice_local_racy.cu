// @verify_launch --grid 1 --block 128 -G
// @verify x race certain 9 9
// @verify y race certain 9 9
// As pointer_choice_local.cu, with threads 2k and 2k + 1 writing the same
// element of whichever array `to` holds.
__device__ void copy(float** from, float** to)
{
    float v = (*from)[threadIdx.x];
    (*to)[threadIdx.x / 2] = v;
}

__global__ void pick(float* x, float* y, int flip)
{
    float* src = flip ? x : y;
    float* dst = flip ? y : x;
    copy(&src, &dst);
}
