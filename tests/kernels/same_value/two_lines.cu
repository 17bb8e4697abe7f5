// @kernel two_lines(const int*, int*)
// @shared two_lines 4
// @barriers two_lines 30
// @launch --grid 1 --block 64 --arg buf:2 --arg buf:64
// @expect data-race shared 21 27 warning
// @expect data-race shared 21 21 warning
// @expect data-race shared 27 27 warning
// @expect_cause both threads wrote the same value
// The two warps store into one shared word from two different lines, which
// run as two separate steps: the second compares its value with the one the
// first left in memory. With the zero-filled `in` both store 0; with
// `--arg buf:2:iota` they store 0 and 1, and the race between the two lines
// is an error (tests/detect/test_same_value.py). The empty asm statements
// keep the compiler from merging the two stores into one.
__global__ void two_lines(const int* in, int* out)
{
    __shared__ int word;
    int v;
    if (threadIdx.x < 32) {
        v = in[0];
        word = v;
        asm volatile("" ::: "memory");
        out[threadIdx.x] = 1;
    } else {
        v = in[1];
        asm volatile("" ::: "memory");
        word = v;
        out[threadIdx.x] = 2;
    }
    __syncthreads();
    out[threadIdx.x] += word;
}
