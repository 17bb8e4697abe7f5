// @verify_launch --grid 1 --block 64
// @verify_barriers divergence possible 10
// @verify_divergence certain
// @verify a race-free
// A barrier only the first n threads reach: for n below 64, the rest of the
// block never arrives.
__global__ void partial(float* a, int n)
{
    if (threadIdx.x < n)
        __syncthreads();
    a[threadIdx.x] = 1.0f;
}
