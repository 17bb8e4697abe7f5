// @launch --grid 2 --block 256 --arg buf:512:iota --arg buf:512
// @expect clean
// Inclusive Hillis-Steele scan per block, double-buffered in shared memory.
__global__ void scan_hs(const int* in, int* out)
{
    __shared__ int buf[2][256];
    int tid = threadIdx.x;
    int base = blockIdx.x * blockDim.x;
    int cur = 0;
    buf[cur][tid] = in[base + tid];
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset *= 2) {
        int nxt = 1 - cur;
        buf[nxt][tid] = buf[cur][tid] + (tid >= offset ? buf[cur][tid - offset] : 0);
        __syncthreads();
        cur = nxt;
    }
    out[base + tid] = buf[cur][tid];
}
