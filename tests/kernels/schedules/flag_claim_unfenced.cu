// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --schedules 4
// @expect data-race global 15 19
// Found by: schedule 2 (the first random one), which runs block 1 ahead of block 0, with hb or gwcp.
// Block 0 writes the word, then publishes it (gpu fence, atomic flag). The
// last block (block 1) reads the flag once and, when it finds it unset, takes
// the word over and writes it. Under schedule 0 (min-pc: block 0's code lies
// at lower pcs, and the gridDim test keeps the compiler from merging the two
// ifs into one branch) block 1 always finds the flag set and writes nothing; a
// schedule that runs block 1 first makes it write while nothing orders block
// 0's write with its own.
__global__ void k(int* flag, int* data)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        *data = 1;
        __threadfence();
        atomicExch(flag, 1);
    }
    if (blockIdx.x == gridDim.x - 1 && atomicAdd(flag, 0) == 0) *data = 2;
}
