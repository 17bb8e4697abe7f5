// @launch --grid 2 --block 128
// @expect clean
// An `extern __shared__` array without --shared-bytes: a first run with 48
// KiB per block finds that the kernel indexes 512 bytes of it, and the check
// runs with that. Each thread writes its element, the barrier orders the
// writes before the reads of another thread's element.
extern __shared__ float tile[];
__global__ void reverse(const float* in, float* out)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    tile[t] = in[i];
    __syncthreads();
    out[i] = tile[blockDim.x - 1 - t];
}
