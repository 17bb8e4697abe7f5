// @verify_launch --grid 2 --block 256 -G
// @verify in race-free
// @verify out race-free
// @verify s race-free
// @verify_barriers proved uniform
// Without optimisation (-G, as GPUVerify-style files are compiled) nvcc
// inlines nothing: verify executes each called function at its call site,
// with the loop and the barriers inside it.
__device__ void store(float* s, int i, float v) { s[i] = v; }

__device__ float sum_tree(float* s, int t, int n)
{
    for (int k = n / 2; k > 0; k >>= 1) {
        if (t < k)
            store(s, t, s[t] + s[t + k]);
        __syncthreads();
    }
    return s[0];
}

__global__ void reduce(float* out, const float* in)
{
    __shared__ float s[256];
    s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    float r = sum_tree(s, threadIdx.x, 256);
    if (threadIdx.x == 0)
        out[blockIdx.x] = r;
}
