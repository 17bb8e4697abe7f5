// @kernel scan(const int*, int*, int)
// @shared scan 2048
// @barriers scan 15 27 36
// @launch --grid 1 --block 256 --arg buf:512:iota --arg buf:512 --arg 512
// @expect clean
// Work-efficient exclusive scan of one block of 2*blockDim.x elements.
__global__ void scan(const int* in, int* out, int n)
{
    __shared__ int temp[512];
    int tid = threadIdx.x;
    int offset = 1;
    temp[2 * tid] = in[2 * tid];
    temp[2 * tid + 1] = in[2 * tid + 1];
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (tid == 0)
        temp[n - 1] = 0;
    for (int d = 1; d < n; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            int t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    out[2 * tid] = temp[2 * tid];
    out[2 * tid + 1] = temp[2 * tid + 1];
}
