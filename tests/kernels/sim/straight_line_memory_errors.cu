// @launch --grid 2 --block 64 --arg buf:128:iota --arg buf:128 --arg 100
// @expect out-of-bounds global 12
// @expect misaligned-access global 13
// Accesses the interpreter reports in the middle of straight-line code: the last lanes read past `a`, one
// lane reads an int at an odd address. The lanes before them keep their results, the others read 0, and
// every lane stores its sum.
__global__ void straight_line_memory_errors(const int* a, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = a[i] * 3;
    const char* bytes = reinterpret_cast<const char*>(a);
    int y = a[i + n];
    int z = *reinterpret_cast<const int*>(bytes + 4 * i + (i == 5));
    out[i] = x + y + z;
}
