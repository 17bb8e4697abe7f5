// @verify_launch --grid 1 --block 128 -G
// @verify a race-free
// The position lives in a local array slot and advances by the block size
// each iteration: the slot is an induction variable like a register.
__global__ void fill(float* a, int n)
{
    int pos[1];
    pos[0] = threadIdx.x;
    for (int j = 0; j < n; j++) {
        a[pos[0]] = 1.0f;
        pos[0] += blockDim.x;
    }
}
