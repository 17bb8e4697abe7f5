// @kernel steps<float, 4>(float*, float)
// @kernel steps<int, 2>(int*, int)
// @launch --kernel steps<float,4> --grid 1 --block 64 --arg buf:64:iota --arg 0.5
// @expect clean
// A template kernel instantiated explicitly for two element types and step counts.
template <typename T, int STEPS>
__global__ void steps(T* data, T delta)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    T v = data[i];
#pragma unroll
    for (int k = 0; k < STEPS; ++k)
        v += delta;
    data[i] = v;
}

template __global__ void steps<float, 4>(float*, float);
template __global__ void steps<int, 2>(int*, int);
