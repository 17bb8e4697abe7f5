// @launch --grid 2 --block 64 --search
// @expect data-race global 12 13
// Each thread reads its element and writes it, plus one, off elements
// further on, in the same array. With the default offset (the thread count)
// the writes land past everything read; an offset between 1 and the thread
// count makes thread t - off write what thread t reads, unordered. The input
// search has to find such an offset (negative ones write before the buffer,
// which makes the input invalid).
__global__ void shift(int* a, int off)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = a[t];
    a[t + off] = v + 1;
}
