// @verify_launch --grid 2 --block 64 -G
// @verify out race-free
// @verify in race-free
// Under -G the struct, the index array and the pointer chosen in a branch
// live in the thread's local memory: verify reads back what the thread
// stored there, so the index is still the thread's own.
struct view { float* data; int offset; };

__global__ void copy(float* out, float* in, int flip)
{
    view src = { in, 0 };
    int idx[2];
    idx[0] = blockIdx.x * blockDim.x + threadIdx.x;
    idx[1] = idx[0] + src.offset;
    float* dst = flip ? out : out;
    dst[idx[0]] = src.data[idx[1]];
}
