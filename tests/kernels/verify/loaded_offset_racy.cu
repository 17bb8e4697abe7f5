// @verify_launch --no-confirm
// @verify base race-free
// @verify in race-free
// @verify out race possible 13 13
// @verify flags race-free
// @verify moved race possible 14 14
// loaded_offset.cu with offsets that need not agree: two elements of base,
// and an element of memory the kernel also writes.
__global__ void offset_copy_racy(const int* base, const int* in, int* out, int* flags, int* moved)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    flags[i + 1] = 1;
    out[base[threadIdx.x % 2] + i] = in[i];
    moved[flags[0] + i] = in[i];
}
