// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:64
// @expect clean
// Hillis-Steele scan with two buffers: each step reads one and writes the other.
__global__ void scan(const int* in, int* out)
{
    __shared__ int buf[2][64];
    unsigned t = threadIdx.x;
    int src = 0;
    buf[0][t] = in[t];
    __syncthreads();
    for (unsigned d = 1; d < 64; d <<= 1) {
        buf[1 - src][t] = t >= d ? buf[src][t] + buf[src][t - d] : buf[src][t];
        src = 1 - src;
        __syncthreads();
    }
    out[t] = buf[src][t];
}
