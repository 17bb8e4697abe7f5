// @kernel neighbours(volatile int*, int*)
// @warpsyncs neighbours 13
// @launch --grid 1 --block 32 --arg buf:32 --arg buf:32
// @expect clean
// @expect_ptx clean
// @expect_scord clean
// The twin of intrawarp_volatile.cu with __syncwarp between the store and
// the neighbour's load: clean under every model.
__global__ void neighbours(volatile int* slot, int* out)
{
    int lane = threadIdx.x;
    slot[lane] = lane * 3;
    __syncwarp();
    out[lane] = slot[(lane + 1) % 32];
}
