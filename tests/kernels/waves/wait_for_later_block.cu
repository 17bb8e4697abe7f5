// @launch --grid 8 --block 32 --resident-threads 64 --arg buf:1 --arg buf:1
// @expect livelock 12
// Block 0 waits for a flag that only block 7, three waves later, sets. With
// two blocks resident at a time block 7 never starts, so the first wave spins
// for ever: a livelock whose cause says that the launch ran in waves (with
// --resident-threads 256 every block is resident and the wait ends).
__global__ void wait_for_later_block(int* flag, int* data)
{
    if (blockIdx.x == 7 && threadIdx.x == 0)
        atomicExch(&flag[0], 1);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        while (atomicCAS(&flag[0], 1, 1) == 0) {}
        data[0] = 1;
    }
}
