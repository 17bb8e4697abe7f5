// @verify_launch --grid 2 --block 64
// @verify y race certain 10 10
// @verify_labels y CI DI
// Carrying on past an `assert` keeps every access after it: threads 2j
// and 2j + 1 both write y[j] (both pass the assert when n > 2j + 1).
__global__ void halve(float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n);
    y[i / 2] = 1.0f;
}
