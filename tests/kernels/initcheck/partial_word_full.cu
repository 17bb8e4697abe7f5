// @kernel pack(unsigned int*)
// @shared pack 128
// @barriers pack 15
// @launch --grid 1 --block 128 --arg buf:32
// @expect clean
// The twin of partial_word.cu: 128 threads write one byte each, so every byte of the 32 words is
// written before the words are read.

__global__ void pack(unsigned* out)
{
    __shared__ unsigned words[32];
    unsigned char* bytes = (unsigned char*)words;
    int t = threadIdx.x;
    bytes[t] = t;
    __syncthreads();
    if (t < 32)
        out[t] = words[t];
}
