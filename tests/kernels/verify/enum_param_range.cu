// @verify_launch --grid 4 --block 64
// @verify x race-free
// @verify y race-free
// An enumeration-typed parameter holds a value of its enumeration (C++:
// 0 to 3 here, the smallest bit-field holding 0, 1 and 2), so the element
// a thread writes, i + mode, is never the one another thread at a multiple
// of 4 reads. As a plain int the parameter could be 4: see the racy twins.
enum Filter { NEAREST, LINEAR, CUBIC };

__global__ void sample(float* y, const float* x, Filter mode)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i % 4 == 0) {
        y[i + mode] = x[i] + y[i];
    }
}
