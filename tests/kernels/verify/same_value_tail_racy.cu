// @verify_launch --benign-same-value --grid 4 --block 64
// @verify y race certain 13 14
// same_value_tail.cu where n may be 0: thread 0's 1.0f then lands on y[0],
// which the others zero.
__global__ void sum_tail_racy(int n, float* y)
{
    if (n < 0)
        return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float f = 0.0f;
    for (int j = 1; j < n; j++)
        f += y[j];
    y[0] = 0.0f;
    y[i + n] = 1.0f;
}
