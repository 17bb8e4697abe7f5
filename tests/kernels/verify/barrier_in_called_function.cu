// @verify_launch --grid 1 --block 64 -G
// @verify s race certain 19 21
// @verify out race-free
// @verify_barriers proved uniform
// The barrier is in a called function, inside the loop: it separates one
// iteration's write from the next iteration's, but not the read of a
// neighbour's element from the write of the next iteration (no second
// barrier): thread t reads s[t+1] while thread t+1 already writes it again.
__device__ void sync_block()
{
    __syncthreads();
}

__global__ void rounds(int* out, int n)
{
    __shared__ int s[65];
    int acc = 0;
    for (int i = 0; i < n; i++) {
        s[threadIdx.x] = i;
        sync_block();
        acc += s[threadIdx.x + 1];
    }
    out[threadIdx.x] = acc;
}
