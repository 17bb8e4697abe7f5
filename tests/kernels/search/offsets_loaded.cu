// @launch --grid 2 --block 64 --search
// @expect data-race global 13 13
// Each thread adds to y[i + offsets[i]], the offset loaded from a buffer. With
// the zeros an automatic buffer holds, or ones, or iota, every thread has its
// own element; with random contents two threads land on one element. The
// search varies automatic buffers' contents (auto:PATTERN) to find it.
__device__ int offset_of(const int* offsets, int i) { return offsets[i]; }

__global__ void scatter_by_offset(const int* offsets, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int offset = offset_of(offsets, i);
    y[i + offset] += 1.0f;
}
