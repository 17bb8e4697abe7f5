// @verify_launch --grid 1 --block 64 -G
// @verify a race certain 7 12
// @verify_labels a CI DI
// A called function's result indexes the caller's store: thread t writes
// a[t] in the callee and a[t + 61] in the kernel, so threads 0..2 meet
// threads 61..63.
__device__ int put(int* a, int i) { a[i] = i; return i + 1; }

__global__ void k(int* a)
{
    int r = put(a, threadIdx.x);
    a[r + 60] = 0;
}
