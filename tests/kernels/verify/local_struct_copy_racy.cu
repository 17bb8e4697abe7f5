// @verify_launch --grid 1 --block 64 -G
// @verify out race confirmed 14 14
// @verify_approx out thread-private memory overwritten
// The index array is written at a position that depends on the input
// (`idx[k] = 0`): whatever the thread stored at idx[0] before may be gone,
// so the index read back is unknown and the store is not proved (here
// k == 0 makes every thread write out[0]).
__global__ void copy(float* out, int k)
{
    int idx[2];
    idx[0] = threadIdx.x;
    idx[1] = threadIdx.x;
    idx[k & 1] = 0;
    out[idx[0]] = 1.0f;
}
