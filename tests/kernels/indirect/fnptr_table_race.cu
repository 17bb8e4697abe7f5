// @launch --grid 1 --block 64 --arg buf:64
// @expect data-race shared 11 16
// Each thread calls one of two functions through a table of function
// pointers, chosen by its parity: `left` and `right` both write s[0], and no
// barrier orders them. The race is between the two callees' lines.
typedef void (*writer)(int *, int);

__device__ __noinline__ void left(int *s, int v)
{
    if (v == 0)
        s[0] = v;
}
__device__ __noinline__ void right(int *s, int v)
{
    if (v == 1)
        s[0] = v;
}

__global__ void dispatch(int *out)
{
    __shared__ int s[64];
    writer table[2] = {left, right};
    int t = threadIdx.x;
    table[t & 1](s, t);
    __syncthreads();
    out[t] = s[0];
}
