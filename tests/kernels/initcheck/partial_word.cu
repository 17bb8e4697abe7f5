// @kernel pack(unsigned int*)
// @shared pack 128
// @barriers pack 15
// @launch --grid 1 --block 32 --arg buf:32
// @expect uninitialized-read shared 16
// Each thread writes only the low byte of its word, then the word is read whole: 3 of the 4 bytes each
// read returns were never written. The twin partial_word_full.cu writes all four bytes.

__global__ void pack(unsigned* out)
{
    __shared__ unsigned words[32];
    unsigned char* bytes = (unsigned char*)words;
    int t = threadIdx.x;
    bytes[4 * t] = t;
    __syncthreads();
    out[t] = words[t];
}
