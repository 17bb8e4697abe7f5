// A last-block sum launched three times, checked with the default four schedules: reverse and flip fork
// from schedule 0's run at the first fence (`sim.shared_prefix`), after the partial sums. Only schedule 0
// may write the program's memory: if another schedule's atomicAdd reached it, the ticket counter, which no
// launch resets, would count more than one ticket per block per launch.
// @stdout total 0 = 2016
// @stdout total 1 = 2016
// @stdout total 2 = 2016
// @stdout tickets = 24
// @exit 0
// @launches 3
// @expect clean
#include <cstdio>

__device__ unsigned int tickets = 0;

__global__ void last_block_sum(const int* in, int* partial, int* total)
{
    __shared__ int sums[8];
    __shared__ bool last;
    int t = threadIdx.x;
    sums[t] = in[blockIdx.x * 8 + t];
    __syncthreads();
    for (int s = 4; s > 0; s >>= 1) {
        if (t < s) sums[t] += sums[t + s];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = sums[0];
        __threadfence();
        last = atomicAdd(&tickets, 1u) % gridDim.x == gridDim.x - 1;
        __threadfence();
    }
    __syncthreads();
    if (last && t == 0) {
        int sum = 0;
        for (int b = 0; b < gridDim.x; b++)
            sum += partial[b];
        *total = sum;
    }
}

int main()
{
    int host[64];
    for (int i = 0; i < 64; i++) host[i] = i;
    int *in, *partial, *total;
    cudaMalloc(&in, sizeof host);
    cudaMalloc(&partial, 8 * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
    for (int launch = 0; launch < 3; launch++) {
        cudaMemset(total, 0, sizeof(int));
        last_block_sum<<<8, 8>>>(in, partial, total);
        int sum = 0;
        cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost);
        printf("total %d = %d\n", launch, sum);
    }
    unsigned int count = 0;
    cudaMemcpyFromSymbol(&count, tickets, sizeof count);
    printf("tickets = %u\n", count);
    cudaFree(in);
    cudaFree(partial);
    cudaFree(total);
    return 0;
}
