// @launch --grid 4 --block 128 --arg buf:512:iota --arg buf:512 --arg 512
// @expect clean
// 7-point 1D stencil (radius 3) with the block's halo staged in shared memory; zero outside the input.
#define R 3
#define B 128
__global__ void stencil1d(const int* in, int* out, int n)
{
    __shared__ int s[B + 2 * R];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + R;
    s[l] = in[g];
    if (threadIdx.x < R) {
        int left = g - R, right = g + B;
        s[l - R] = left >= 0 ? in[left] : 0;
        s[l + B] = right < n ? in[right] : 0;
    }
    __syncthreads();
    int sum = 0;
    for (int k = -R; k <= R; ++k)
        sum += (k + 4) * s[l + k];
    out[g] = sum;
}
