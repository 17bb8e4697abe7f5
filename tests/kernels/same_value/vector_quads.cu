// @kernel vector_quads(const float*, float*)
// @shared vector_quads 128
// @barriers vector_quads 26
// @launch --grid 1 --block 32 --arg buf:128:iota --arg buf:128
// @expect data-race shared 25 25 warning
// @expect_ptx data-race shared 25 25 warning
// @expect_scord data-race shared 25 25 warning
// @expect_cause both threads wrote the same value
// vector_pairs.cu with 16-byte slots: the four lanes of each quad store the
// same four floats with one st.shared.v4.f32, as Triton's layout conversions
// do with 8 warps. A vector store is its elements' stores, so each 8-byte
// half is compared on its own: equal bytes, a warning. In
// vector_quads_differ.cu only the last float differs between lanes: an error.
struct __align__(16) quad { float a, b, c, d; };

__global__ void vector_quads(const float* in, float* out)
{
    __shared__ quad slots[8];
    int q = threadIdx.x / 4;
    quad v;
    v.a = in[4 * q];
    v.b = in[4 * q + 1];
    v.c = in[4 * q + 2];
    v.d = in[4 * q + 3];
    slots[q] = v;
    __syncthreads();
    if (threadIdx.x < 8) {
        out[4 * threadIdx.x] = slots[threadIdx.x].a + slots[threadIdx.x].d;
    }
}
