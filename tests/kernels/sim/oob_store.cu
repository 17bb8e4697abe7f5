// @launch --grid 1 --block 64 --arg buf:64 --arg 64
// @expect out-of-bounds 8
// Off-by-one: the guard lets thread n write one element past the end.
__global__ void off_by_one(int* out, int n)
{
    int t = threadIdx.x;
    if (t <= n / 2)
        out[2 * t] = t;
}
