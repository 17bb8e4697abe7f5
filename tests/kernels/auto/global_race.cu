// @launch --grid 2 --block 64
// @expect data-race global 10 11
// No --arg: every parameter is automatic (two buffers, and n = 128, the
// number of threads). Each thread writes its element and then reads its right
// neighbour's, which another thread writes; nothing orders the two.
__global__ void shift(int* data, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = i;
        out[i] = data[i + 1];
    }
}
