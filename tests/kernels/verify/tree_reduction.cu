// @verify in race-free
// @verify out race-free
// @verify s race-free
// @verify_barriers proved uniform
// A tree reduction whose stride starts at blockDim.x / 2: no launch
// dimensions are given, so it is proved for every block size. The stride is
// the same in every thread and only shrinks (an inductive bound), and the
// barrier in the loop is reached by all threads of a block.
__global__ void reduce(float* out, const float* in)
{
    extern __shared__ float s[];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
