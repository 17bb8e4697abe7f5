// @launch --grid 1 --block 64 --arg buf:64
// @expect clean
// The race-free twin of fnptr_table_race.cu: the two functions chosen through
// the pointer table write elements of their own, s[0] and s[1].
typedef void (*writer)(int *, int);

__device__ __noinline__ void left(int *s, int v)
{
    if (v == 0)
        s[0] = v;
}
__device__ __noinline__ void right(int *s, int v)
{
    if (v == 1)
        s[1] = v;
}

__global__ void dispatch(int *out)
{
    __shared__ int s[64];
    writer table[2] = {left, right};
    int t = threadIdx.x;
    table[t & 1](s, t);
    __syncthreads();
    out[t] = s[0] + s[1];
}
