// @launch --grid 1 --block 32 --arg buf:32 --arg buf:32
// @expect clean
// A recursive, non-inlined device function: each thread computes fib(n) and n! for its own n.
__device__ __noinline__ int fib(int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

__device__ __noinline__ unsigned long long fact(int n)
{
    return n <= 1 ? 1ULL : n * fact(n - 1);
}

__global__ void recurse(int* fibs, unsigned long long* facts)
{
    int n = threadIdx.x % 13;
    fibs[threadIdx.x] = fib(n);
    facts[threadIdx.x] = fact(threadIdx.x % 21);
}
