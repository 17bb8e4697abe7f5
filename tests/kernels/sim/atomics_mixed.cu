// @launch --grid 2 --block 128 --arg buf:256:iota --arg buf:8 --arg buf:2
// @expect clean
// atomicMin/Max (signed), atomicAnd/Or/Xor, atomicSub, and float and double atomicAdd on shared then global.
__global__ void atomics_mixed(const int* in, int* ints, double* sums)
{
    __shared__ float fsum;
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[g] - 100;
    if (threadIdx.x == 0)
        fsum = 0.0f;
    __syncthreads();
    atomicMin(&ints[0], v);
    atomicMax(&ints[1], v);
    atomicAnd(&ints[2], ~(1 << (g % 31)));
    atomicOr(&ints[3], 1 << (g % 29));
    atomicXor(&ints[4], g * 2654435761u);
    atomicSub(&ints[5], g);
    atomicAdd(&fsum, 0.5f);
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(&sums[0], (double)fsum);
    atomicAdd(&sums[1], 0.25 * v);
}
