// @launch --grid 1 --block 64 --arg buf:64:iota --arg buf:64
// @expect clean
// A per-thread local array indexed with run-time values (kept in local memory).
__global__ void local_array(const int* in, int* out)
{
    int t = threadIdx.x;
    int a[16];
    for (int i = 0; i < 16; ++i)
        a[i] = in[(t + i) % 64] * (i + 1);
    int k = in[t] % 16;
    a[k] += 1000;
    int acc = 0;
    for (int i = 0; i < 16; i += 1 + (t & 1))
        acc += a[(i * 7 + t) % 16];
    out[t] = acc + a[k];
}
