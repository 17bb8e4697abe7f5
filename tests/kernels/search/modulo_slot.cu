// @launch --grid 1 --block 64 --search
// @expect data-race shared 13 13
// @expect uninitialized-read shared 15
// Each thread records itself in slot t % m of a shared table. With the default m (the thread count, 64) every
// thread has its own slot; any m below the block size makes threads t and t + m write the same slot. The input
// search has to find such an m; it also leaves slots m..63 unwritten, which threads m..63 read (line 15).
__global__ void bucket(int* out, int m)
{
    __shared__ int table[1024];
    int t = threadIdx.x;
    if (m <= 0)
        return;
    table[t % m] = t;
    __syncthreads();
    out[t] = table[t];
}
