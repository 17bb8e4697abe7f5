// @verify_launch --grid 4 --block 64
// @verify x race-free
// @verify y race certain 15 15
// @verify_labels y CI DI
// @verify_witness y mode
// enum_param_range.cu's racy twin: with an enumerator 4 the enumeration's
// values are 0 to 7, and with mode 4 thread i writes the element thread
// i + 4 reads.
enum Step { NONE = 0, FOUR = 4 };

__global__ void sample(float* y, const float* x, Step mode)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i % 4 == 0) {
        y[i + mode] = x[i] + y[i];
    }
}
