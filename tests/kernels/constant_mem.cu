// @kernel fir(const float*, float*, int)
// @launch --grid 1 --block 64 --arg buf:68:iota --arg buf:64 --arg 68
// @expect clean
// A 5-tap filter whose coefficients live in initialised constant memory.
__constant__ float coeffs[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
__constant__ int taps = 5;
__constant__ double scale2[2] = {1.5, -2.25};

__global__ void fir(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + taps > n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < taps; ++k)
        acc += coeffs[k] * in[i + k];
    out[i] = acc * (float)(scale2[0] + scale2[1]);
}
