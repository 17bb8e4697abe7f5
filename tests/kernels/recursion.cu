// @kernel recurse(const int*, int*, unsigned long long*)
// @launch --grid 1 --block 8 --arg buf:8:iota --arg buf:8 --arg buf:8
// @expect clean
// A recursive device function: a real call stack in local memory.
__device__ int fib(int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

__device__ unsigned long long fact(unsigned int n)
{
    return n <= 1 ? 1ull : n * fact(n - 1);
}

__global__ void recurse(const int* n, int* out, unsigned long long* fout)
{
    int t = threadIdx.x;
    out[t] = fib(n[t]);
    fout[t] = fact((unsigned int)n[t]);
}
