// @launch --grid 2 --block 128 --shared-bytes 1536 --arg buf:256:iota --arg buf:256
// @expect clean
// Dynamic shared memory sized at launch: an int area followed by a float area; reverses each block.
extern __shared__ int dyn[];

__global__ void reverse_dyn(const int* in, int* out)
{
    int* ints = dyn;
    float* floats = (float*)&dyn[blockDim.x];
    int t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    ints[t] = in[g];
    floats[t] = 0.5f * in[g];
    __syncthreads();
    int r = blockDim.x - 1 - t;
    out[g] = ints[r] + (int)(floats[r] * 4.0f);
}
