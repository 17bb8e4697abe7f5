// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:256:iota --arg buf:256 --redundant-barriers
// @expect redundant-barrier 14
// Simulee's Figure 3 (arrayfire's homography kernel): each thread writes and
// then reads only its own elements of the shared arrays, so the barrier
// between the two orders nothing and can go.
__global__ void median_of_block(const float* values, const int* ids, float* out)
{
    __shared__ float s_median[128];
    __shared__ int s_idx[128];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * 128 + tid;
    s_median[tid] = values[i];
    s_idx[tid] = ids[i];
    __syncthreads();
    if (s_median[tid] > 100.0f) s_idx[tid] = -1;
    out[i] = s_median[tid] + s_idx[tid];
}
