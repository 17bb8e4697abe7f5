// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:768
// @expect clean
// __syncthreads_count/_and/_or: block-wide votes, every thread records the three results.
__global__ void votes(const int* in, int* out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[g];
    int c = __syncthreads_count(v % 3 == 0);
    int a = __syncthreads_and(v < 200);
    int o = __syncthreads_or(v == 77);
    out[3 * g + 0] = c;
    out[3 * g + 1] = a;
    out[3 * g + 2] = o;
}
