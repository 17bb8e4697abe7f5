// @launch --grid 1 --block 32 --search
// @expect data-race global 17 17
// A kernel that reads its write slots from a __constant__ table: as declared
// (0, 1, 2, ...) every thread has a slot of its own, but the host may fill the
// table with cudaMemcpyToSymbol, and with other contents (all ones, say)
// threads share slots. The table's loaded values feed an address, so the
// search varies its contents (--global slot=auto:PATTERN) and finds the race.
__constant__ int slot[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                             11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                             22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
__constant__ float scale[32] = {1.0f};

__global__ void scatter(float* out)
{
    int i = threadIdx.x;
    float value = scale[i] * i;
    out[slot[i]] = value;
}
