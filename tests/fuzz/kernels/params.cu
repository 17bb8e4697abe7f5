// The kernel of tests/fuzz/test_fuzz_args.py: one parameter of each kind `--arg` packs.
struct Pair {
    float x;
    int y;
};

__global__ void params(const float* in, double* out, unsigned char* bytes, void* raw, int n, float scale, double bias,
                       char c, bool flag, unsigned long long big, Pair pair)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && flag) {
        out[i] = in[i] * scale + bias + c + pair.x + pair.y + (double)big;
        bytes[i] = (unsigned char)i;
        ((int*)raw)[i] = i;
    }
}

extern "C" __global__ void ptx_params(int* out, short s, long long l, float f)
{
    out[threadIdx.x] = s + (int)l + (int)f;
}
