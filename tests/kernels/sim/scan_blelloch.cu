// @launch --grid 2 --block 128 --arg buf:512:iota --arg buf:512
// @expect clean
// Exclusive Blelloch (work-efficient) scan: each block scans 256 elements, two per thread.
#define N 256
__global__ void scan_blelloch(const int* in, int* out)
{
    __shared__ int temp[N];
    int tid = threadIdx.x;
    int base = blockIdx.x * N;
    temp[2 * tid] = in[base + 2 * tid];
    temp[2 * tid + 1] = in[base + 2 * tid + 1];
    int offset = 1;
    for (int d = N >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset *= 2;
    }
    if (tid == 0)
        temp[N - 1] = 0;
    for (int d = 1; d < N; d *= 2) {
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
    out[base + 2 * tid] = temp[2 * tid];
    out[base + 2 * tid + 1] = temp[2 * tid + 1];
}
