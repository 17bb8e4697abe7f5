// @verify a race certain 7 7
// @verify_labels a CI DI
// Threads 2i and 2i+1 write the same element: a race for every launch with
// more than one thread, reached and indexed without approximation.
__global__ void halves(int* a)
{
    a[threadIdx.x / 2] = threadIdx.x;
}
