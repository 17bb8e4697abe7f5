// @launch --grid 2 --block 64 --search
// @expect clean
// offsets_loaded.cu's race-free twin: the loaded value steers a branch (so
// the search tries other contents), but either way a thread only touches its
// own element (or none): no contents make two threads meet.
__device__ int offset_of(const int* offsets, int i) { return offsets[i]; }

__global__ void step_by_loaded(const int* offsets, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int offset = offset_of(offsets, i);
    if (offset > 0)
        y[i] = (float)offset;
}
