// @launch --grid 1 --block 128 --arg buf:128 --arg buf:768
// @expect clean
// Single-precision math functions: exact ones (fminf, fmaxf, sqrtf) and approximate ones.
__global__ void fmath(const float* in, float* out)
{
    int t = threadIdx.x;
    float x = in[t];
    float* o = out + 6 * t;
    o[0] = fminf(x, 1.5f);
    o[1] = fmaxf(x, -0.5f);
    o[2] = sqrtf(fabsf(x));
    o[3] = rsqrtf(fabsf(x) + 1.0f);
    o[4] = __expf(x * 0.5f);
    o[5] = sinf(x);
}
