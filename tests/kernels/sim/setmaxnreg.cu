// @kernel producer_consumer(int*)
// @launch --arch sm_90a --grid 1 --block 256 --arg buf:256
// @expect clean
// Warp-specialised kernels hand registers between warpgroups with setmaxnreg (the producer gives some up, the
// consumers take more): a budget the simulator has no use for, so the kernel runs as without it.
__global__ void producer_consumer(int* out)
{
    if (threadIdx.x < 128)
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    else
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    out[threadIdx.x] = threadIdx.x;
}
