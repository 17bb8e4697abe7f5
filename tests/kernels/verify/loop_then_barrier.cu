// @verify_launch --grid 1 --block 64 -G
// @verify s race-free
// @verify out race-free
// @verify_barriers proved uniform
// A loop every thread leaves in the same iteration, then a barrier. Without
// optimisation (-G) the loop stays a loop: each thread leaves it in exactly
// one iteration, so no thread can miss the barrier.
__global__ void clear_then_read(float* out)
{
    __shared__ float s[1024];
    int tid = threadIdx.x;
    for (int i = 0; i < 16; i++)
        s[tid + i * 64] = 0.0f;
    __syncthreads();
    out[tid] = s[(tid + 1) % 64];
}
