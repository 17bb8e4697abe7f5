// @kernel vector_quads_differ(const float*, float*)
// @shared vector_quads_differ 128
// @barriers vector_quads_differ 25
// @launch --grid 1 --block 32 --arg buf:128:iota --arg buf:128
// @expect data-race shared 24 24 error
// @expect_ptx data-race shared 24 24 error
// @expect_scord data-race shared 24 24 error
// @expect_cause the two accesses are in the same warp: lanes are scheduled independently (Volta and later), so without __syncwarp they race
// vector_quads.cu's twin: the first three floats of each quad's 16-byte
// store are the same in its four lanes, the last is the lane's own, so the
// upper 8-byte half stores different bytes: an error, not a same-value
// warning.
struct __align__(16) quad { float a, b, c, d; };

__global__ void vector_quads_differ(const float* in, float* out)
{
    __shared__ quad slots[8];
    int q = threadIdx.x / 4;
    quad v;
    v.a = in[4 * q];
    v.b = in[4 * q + 1];
    v.c = in[4 * q + 2];
    v.d = in[4 * q + 3] + threadIdx.x;
    slots[q] = v;
    __syncthreads();
    if (threadIdx.x < 8) {
        out[4 * threadIdx.x] = slots[threadIdx.x].a + slots[threadIdx.x].d;
    }
}
