// @kernel mixed_shared(const int*, double*)
// @shared mixed_shared 279
// @barriers mixed_shared 22
// @launch --grid 1 --block 32 --arg buf:32:iota --arg buf:16
// @expect clean
// Several static shared arrays of different element types in one kernel.
__global__ void mixed_shared(const int* in, double* out)
{
    __shared__ double d[16];
    __shared__ short h[10];
    __shared__ char flags[3];
    __shared__ int scratch[8][4];
    int t = threadIdx.x;
    if (t < 16)
        d[t] = in[t] * 0.5;
    if (t < 10)
        h[t] = (short)in[t];
    if (t < 3)
        flags[t] = 1;
    if (t < 32)
        scratch[t / 4][t % 4] = in[t];
    __syncthreads();
    if (t < 16)
        out[t] = d[t] + h[t % 10] + flags[t % 3] + scratch[t / 4][t % 4];
}
