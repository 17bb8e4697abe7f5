// @kernel local_sort(const int*, int*, int)
// @launch --grid 1 --block 8 --arg buf:128:iota --arg buf:8 --arg 3
// @expect clean
// A per-thread array indexed dynamically, which the compiler keeps in local memory.
__global__ void local_sort(const int* in, int* out, int k)
{
    int buf[16];
    int base = threadIdx.x * 16;
    for (int i = 0; i < 16; ++i)
        buf[i] = in[base + i];
    for (int i = 1; i < 16; ++i) {
        int v = buf[i];
        int j = i - 1;
        while (j >= 0 && buf[j] > v) {
            buf[j + 1] = buf[j];
            --j;
        }
        buf[j + 1] = v;
    }
    out[threadIdx.x] = buf[k & 15];
}
