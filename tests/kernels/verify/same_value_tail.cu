// @verify_launch --benign-same-value --grid 4 --block 64
// @verify y race-free
// @verify_benign y 13 13
// Every thread zeroes y[0] (the same float constant), sums y[1..n-1] and
// writes its sum past the end of what anyone reads: only the zeroing stores
// conflict, and they write the same bits.
__global__ void sum_tail(int n, float* y)
{
    if (n <= 0)
        return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float f = 0.0f;
    y[0] = 0.0f;
    for (int j = 1; j < n; j++)
        f += y[j];
    y[i + n] = f;
}
