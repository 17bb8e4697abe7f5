// @verify_launch --benign-same-value -G
// @verify table race-free
// @verify out race-free
// @verify_benign out 16 16
// @verify tile race-free
// @verify first_tile race-free
// @verify_benign first_tile 17 17
// Every thread copies one element of memory no thread writes: the same
// element of a global table (the same value in the whole grid) and the same
// element of its block's shared array (the same value in the block, whatever
// an unwritten shared array holds), so the stores agree. (-G keeps the
// loads of the unwritten array, which optimised code drops.)
__global__ void copy_first(const int* table, int* out, int* first_tile)
{
    __shared__ int tile[64];
    *out = table[3];
    first_tile[blockIdx.x] = tile[5];
}
