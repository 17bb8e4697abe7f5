// @verify_launch --grid 2 --block 64
// @verify y race-free
// wrap_index_racy.cu with the index computed in 64 bits: i + n, below
// 2^33, never wraps, so it is at least 1 in the else branch and thread 0
// alone writes y[0].
__global__ void place(int* y, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) y[0] = 1;
    else
        y[(unsigned long long)i + n] = 2;
}
