// @verify_launch --benign-same-value
// @verify in race-free
// @verify last race certain 15 15
// @verify seen race possible 16 16
// @verify_approx seen loaded from memory
// @verify done race certain 18 21
// @verify other race-free
// same_value_flag.cu with stores that need not agree: each thread's index,
// a value loaded from memory, and two flag values on two lines (the store
// to `other`, which may alias `done`, keeps them apart): each line's own
// stores agree, but the two lines' do not.
__global__ void publish_racy(const int* in, int* last, int* seen, int* done, int* other)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    *last = i;
    *seen = in[i];
    if (i < 32)
        *done = 1;
    other[i] = 0;
    if (i >= 32)
        *done = 2;
}
