// @launch --grid 1 --block 64 --arg buf:64
// @expect barrier-divergence 10 13
// A barrier in a loop whose trip count differs between threads: the threads
// with fewer iterations leave while the others wait for them.
__global__ void k(int* out)
{
    int acc = 0;
    for (int i = 0; i <= (int)(threadIdx.x / 32); ++i) {
        acc += i;
        __syncthreads();
    }
    out[threadIdx.x] = acc;
}
