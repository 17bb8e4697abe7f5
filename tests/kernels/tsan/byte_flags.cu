// @kernel byte_flags(int*)
// @shared byte_flags 256
// @barriers byte_flags 16
// @launch --grid 2 --block 256 --arg buf:512 --detector tsan
// @expect clean
// Every thread writes its own byte of a shared array, then reads its
// neighbour's after __syncthreads. Eight threads share each 8-byte shadow
// word, more than the four cells it has: the writes evict each other, and
// offsets and sizes keep the disjoint bytes apart (no false sharing).
__global__ void byte_flags(int* out)
{
    __shared__ unsigned char seen[256];
    int t = threadIdx.x;
    seen[t] = (unsigned char)(t & 1);
    // the barrier orders every write before every read of the block
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = seen[(t + 1) % 256];
}
