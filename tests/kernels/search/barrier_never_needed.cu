// @launch --grid 2 --block 64 --search --redundant-barriers
// @expect redundant-barrier 11
// Each thread reads back only its own slot, whatever the factor k: no input
// needs the barrier, so the search reports it as redundant (a performance
// note: the exit status stays 0).
__global__ void scale(int* out, int k)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = t * k;
    __syncthreads();
    out[blockIdx.x * 64 + t] = s[t];
}
