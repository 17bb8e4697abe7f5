// A grid-wide sum with one cooperative launch, sized as CUDA's samples size it: as many blocks as the
// device holds at once (the occupancy per multiprocessor times the multiprocessors). Each block sums a
// grid-stride slice into its partial sum; after grid.sync() block 0 adds the partial sums of every block,
// which it may read only because of the grid-wide synchronisation. The program checks the result itself.
// The simulated device has 40 multiprocessors, each holding four blocks of 256 threads.
// @stdout cooperative launch supported: 1
// @stdout blocks: 160
// @stdout sum 524800 (expected 524800)
// @exit 0
// @launches 1
// @expect clean
#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

const int N = 1024, THREADS = 256;

__global__ void grid_sum(const int *in, int *partial, int *total, int n) {
    cg::grid_group grid = cg::this_grid();
    __shared__ int block_sum;
    if (threadIdx.x == 0) block_sum = 0;
    __syncthreads();
    int mine = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) mine += in[i];
    atomicAdd_block(&block_sum, mine);
    __syncthreads();
    if (threadIdx.x == 0) partial[blockIdx.x] = block_sum;
    grid.sync();
    if (grid.thread_rank() == 0) {
        int sum = 0;
        for (int b = 0; b < gridDim.x; b++) sum += partial[b];
        *total = sum;
    }
}

int main() {
    int supported = 0, sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, THREADS, 0);
    int blocks = sms * per_sm;
    printf("cooperative launch supported: %d\nblocks: %d\n", supported, blocks);
    int host[N];
    for (int i = 0; i < N; i++) host[i] = i + 1;
    int *in, *partial, *total;
    cudaMalloc(&in, sizeof host);
    cudaMalloc(&partial, blocks * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
    int n = N;
    void *args[] = {&in, &partial, &total, &n};
    cudaLaunchCooperativeKernel((void *)grid_sum, blocks, THREADS, args, 0, 0);
    int sum = 0;
    cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost);
    printf("sum %d (expected %d)\n", sum, N * (N + 1) / 2);
    cudaFree(in);
    cudaFree(partial);
    cudaFree(total);
    return sum == N * (N + 1) / 2 ? 0 : 1;
}
