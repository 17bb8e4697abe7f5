// @launch --grid 1 --block 32 --arg buf:256 --arg buf:32
// @expect misaligned-access 8
// Reading ints from a byte buffer at an odd offset.
__global__ void misaligned(const unsigned char* bytes, int* out)
{
    int t = threadIdx.x;
    const int* p = (const int*)(bytes + 4 * t + 1);
    out[t] = *p;
}
