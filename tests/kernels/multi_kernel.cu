// @kernel init(float*, int)
// @kernel squares(float*, int)
// @kernel total(const float*, float*, int)
// @atomics total 28:add.gpu
// @launch --kernel total --grid 1 --block 64 --arg buf:64:iota --arg buf:1 --arg 64
// @expect clean
// Three kernels of one pipeline in one file, with a shared device helper.
__device__ float square(float x) { return x * x; }

__global__ void init(float* v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = (float)i;
}

__global__ void squares(float* v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = square(v[i]);
}

__global__ void total(const float* v, float* sum, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(sum, v[i]);
}
