// @launch --grid 1 --block 64 --arg buf:64
// @expect clean
// __constant__ data with an initializer, read with a thread-dependent index.
__constant__ int coeffs[8] = {3, -1, 4, -1, 5, -9, 2, 6};
__constant__ float scale = 0.25f;

__global__ void use_constants(float* out)
{
    int t = threadIdx.x;
    out[t] = coeffs[t % 8] * scale * t + coeffs[(t * 3) % 8];
}
