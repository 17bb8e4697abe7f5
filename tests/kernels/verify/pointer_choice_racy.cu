// @verify_launch --grid 2 --block 64
// @verify a race certain 12 12
// @verify b race certain 12 12
// @verify_labels a CI DI
// @verify_labels b CI DI
// The pointer's choice follows bit 1 of the index while the pairs sharing
// an index differ in bit 0: threads 0 and 1 both write b[0].
__global__ void split(int* a, int* b)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int* p = (i & 2) ? a : b;
    p[i / 2] = i;
}
