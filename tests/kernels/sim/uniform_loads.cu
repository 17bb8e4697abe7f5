// @launch --grid 3 --block 96 --arg buf:288 --arg 7 --arg 200
// @expect clean
// Loads every thread makes at one read-only address, by symbol: kernel parameters and a __constant__
// table's element. Odd threads take one of them inside a branch, so a part of the threads loads it, and the
// threads past n leave first: each thread must still get the one value.
__constant__ int table[4] = {10, 20, 30, 40};

__global__ void uniform_loads(int* out, int bias, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = table[2] + bias;
    if (i & 1)
        v += table[3] * bias;
    out[i] = v + i;
}
