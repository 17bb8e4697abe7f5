// @launch --grid 1 --block 32 --arg buf:8 --arg buf:1
// @expect data-race global 7 8
// A 4-byte store against a 1-byte load of its second byte by another thread.
__global__ void k(unsigned* words, unsigned char* out)
{
    const unsigned char* bytes = (const unsigned char*)words;
    if (threadIdx.x == 0) words[0] = 0x11223344u;
    if (threadIdx.x == 1) *out = bytes[1];
}
