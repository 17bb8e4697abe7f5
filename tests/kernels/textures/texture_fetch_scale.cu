// @launch --grid 2 --block 32 --arg tex:f32:64:iota --arg buf:64 --arg 64
// @expect clean
// Each thread reads one texel of a linear-memory texture (made by --arg tex:, filled 0, 1, 2, ...) and writes
// twice its value to its own element of out: race-free. tests/sim/test_texture_args.py checks the values.
__global__ void scale(cudaTextureObject_t t, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * tex1Dfetch<float>(t, i);
}
