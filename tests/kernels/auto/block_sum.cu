// @launch --grid 4 --block 128
// @expect clean
// No --arg: the input and output are automatic buffers, n is the number of
// threads. A shared-memory tree reduction with a barrier after every step.
__global__ void block_sum(const float* in, float* sums, int n)
{
    __shared__ float s[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        sums[blockIdx.x] = s[0];
}
