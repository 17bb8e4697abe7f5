// @verify_launch --grid 4 --block 64
// @verify x race-free
// @verify y race certain 15 15
// @verify_labels y CI DI
// @verify_witness y mode
// enum_param_range.cu's racy twin: an enumeration with a fixed underlying
// type holds any value of that type (C++), so mode may be 4 and thread i
// writes the element thread i + 4 reads.
enum Filter : int { NEAREST, LINEAR, CUBIC };

__global__ void sample(float* y, const float* x, Filter mode)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i % 4 == 0) {
        y[i + mode] = x[i] + y[i];
    }
}
