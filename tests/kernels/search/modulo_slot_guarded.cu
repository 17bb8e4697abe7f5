// @launch --grid 1 --block 64 --search
// @expect uninitialized-read shared 14
// The race-free twin of modulo_slot.cu: only the first m threads write, one slot each, so no m makes two
// threads share a slot. With m below the block size threads m..63 still read slots nobody wrote (line 14).
__global__ void bucket(int* out, int m)
{
    __shared__ int table[1024];
    int t = threadIdx.x;
    if (m <= 0)
        return;
    if (t < m)
        table[t % m] = t;
    __syncthreads();
    out[t] = table[t];
}
