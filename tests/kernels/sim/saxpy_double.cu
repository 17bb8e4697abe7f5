// @launch --grid 4 --block 128 --arg 2.5 --arg buf:512:iota --arg buf:512:ones --arg 512
// @expect clean
// y = alpha * x + y in double precision.
__global__ void daxpy(double alpha, const double* x, double* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}
