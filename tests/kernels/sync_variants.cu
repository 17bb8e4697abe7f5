// @kernel votes(const int*, int*)
// @barriers votes 9 10 11 12
// @launch --grid 1 --block 128 --arg buf:128:iota --arg buf:3
// @expect clean
// __syncthreads and its counting / voting variants.
__global__ void votes(const int* in, int* out)
{
    int v = in[threadIdx.x];
    __syncthreads();
    int count = __syncthreads_count(v > 0);
    int all = __syncthreads_and(v > 0);
    int any = __syncthreads_or(v > 0);
    if (threadIdx.x == 0) {
        out[0] = count;
        out[1] = all;
        out[2] = any;
    }
}
