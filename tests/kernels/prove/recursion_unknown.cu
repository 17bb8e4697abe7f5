// @launch --grid 1 --block 64 --arg buf:64 --arg buf:1
// @expect clean
// @prove_unknown recursion
// @prove_schedules 4 not proved
// verify does not follow recursion, so the kernel is unknown to it, and
// check --prove runs every schedule the atomics call for, as check does.
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__global__ void fill(int* out, int* count)
{
    out[threadIdx.x] = fib(threadIdx.x % 8) + atomicAdd(count, 1);
}
