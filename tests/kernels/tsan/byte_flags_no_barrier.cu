// @kernel byte_flags_no_barrier(int*)
// @shared byte_flags_no_barrier 256
// @launch --grid 2 --block 256 --arg buf:512 --detector tsan
// @expect data-race shared 13 14
// byte_flags.cu without its __syncthreads: thread t reads the byte thread t+1
// wrote, with nothing ordering the two. The writer's cell is still in the
// word's shadow when the read comes (the read follows the writes of its word
// at once), so tsan finds what hb finds.
__global__ void byte_flags_no_barrier(int* out)
{
    __shared__ unsigned char seen[256];
    int t = threadIdx.x;
    seen[t] = (unsigned char)(t & 1);
    out[blockIdx.x * blockDim.x + t] = seen[(t + 1) % 256];
}
