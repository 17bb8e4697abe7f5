// @kernel vector_pairs_differ(const float*, float*)
// @shared vector_pairs_differ 64
// @barriers vector_pairs_differ 22
// @launch --grid 1 --block 32 --arg buf:64:iota --arg buf:64
// @expect data-race shared 21 21 error
// @expect_ptx data-race shared 21 21 error
// @expect_scord data-race shared 21 21 error
// @expect_cause the two accesses are in the same warp: lanes are scheduled independently (Volta and later), so without __syncwarp they race
// vector_pairs.cu's twin: each lane stores a pair of its own elements into
// its quad's slot with one 8-byte vector store, so the lanes' bytes differ:
// an error, not a same-value warning.
struct __align__(8) pair { float a, b; };

__global__ void vector_pairs_differ(const float* in, float* out)
{
    __shared__ pair slots[8];
    int quad = threadIdx.x / 4;
    pair p;
    p.a = in[2 * threadIdx.x];
    p.b = in[2 * threadIdx.x + 1];
    slots[quad] = p;
    __syncthreads();
    if (threadIdx.x < 8) {
        out[2 * threadIdx.x] = slots[threadIdx.x].a;
        out[2 * threadIdx.x + 1] = slots[threadIdx.x].b;
    }
}
