// @kernel vector_pairs(const float*, float*)
// @shared vector_pairs 64
// @barriers vector_pairs 25
// @launch --grid 1 --block 32 --arg buf:64:iota --arg buf:64
// @expect data-race shared 24 24 warning
// @expect_ptx data-race shared 24 24 warning
// @expect_scord data-race shared 24 24 warning
// @expect_cause both threads wrote the same value
// The four lanes of each quad store the same pair of floats into one slot
// with one 8-byte vector store (st.shared.v2.f32), as code generators store
// replicated values when they move a row's result through shared memory
// (Triton's layout conversions): a write-write race of equal bytes, a
// warning. With the pair taken from each lane's own elements
// (vector_pairs_differ.cu) the lanes store different bytes: an error.
struct __align__(8) pair { float a, b; };

__global__ void vector_pairs(const float* in, float* out)
{
    __shared__ pair slots[8];
    int quad = threadIdx.x / 4;
    pair p;
    p.a = in[2 * quad];
    p.b = in[2 * quad + 1];
    slots[quad] = p;
    __syncthreads();
    if (threadIdx.x < 8) {
        out[2 * threadIdx.x] = slots[threadIdx.x].a;
        out[2 * threadIdx.x + 1] = slots[threadIdx.x].b;
    }
}
