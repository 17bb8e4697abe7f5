// @launch --grid 1 --block 16 --arg buf:289:iota --arg buf:256:iota --arg 1
// @expect data-race shared 28 28
// @expect data-race shared 28 36
// A wavefront over a shared tile, as sequence-alignment kernels sweep their
// score matrix: at step m, thread tx updates t[m - tx + 1][tx + 1] from its
// three neighbours. nvcc computes the row address with 32-bit arithmetic on
// the .shared address (tx * -64 plus the tile's address), which wraps modulo
// 2^32 before the offsets bring it back into the tile. The racy twin of
// wavefront.cu: the first sweep has no barrier between its waves.
#define B 16
__device__ __forceinline__ int best(int a, int b, int c) { return max(a, max(b, c)); }
__global__ void wave(int *score, const int *cost, int penalty)
{
    __shared__ int t[B + 1][B + 1];
    __shared__ int r[B][B];
    int tx = threadIdx.x;
    for (int k = 0; k < B; k++)
        r[k][tx] = cost[k * B + tx];
    t[tx + 1][0] = score[(tx + 1) * (B + 1)];
    t[0][tx + 1] = score[tx + 1];
    if (tx == 0) t[0][0] = score[0];
    __syncthreads();
#pragma unroll 1
    for (int m = 0; m < B; m++) {
        if (tx <= m) {
            int x = tx + 1;
            int y = m - tx + 1;
            t[y][x] = best(t[y - 1][x - 1] + r[y - 1][x - 1], t[y][x - 1] - penalty, t[y - 1][x] - penalty);
        }
    }
#pragma unroll 1
    for (int m = B - 2; m >= 0; m--) {
        if (tx <= m) {
            int x = tx + B - m;
            int y = B - tx;
            t[y][x] = best(t[y - 1][x - 1] + r[y - 1][x - 1], t[y][x - 1] - penalty, t[y - 1][x] - penalty);
        }
        __syncthreads();
    }
    for (int k = 0; k < B; k++)
        score[(k + 1) * (B + 1) + tx + 1] = t[k + 1][tx + 1];
}
