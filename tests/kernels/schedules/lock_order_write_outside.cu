// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --schedules 4
// @expect data-race global 13 16
// Found by: the reversed schedule 1 (block 1 takes the lock first) with hb, and by gwcp (the default) from schedule 0.
// Two blocks take a device-wide lock (gpu-scope fences after the acquiring CAS
// and before the releasing exchange); block 0 writes the shared word before it
// takes the lock, block 1 inside its critical section. When block 0 takes the
// lock first (schedule 0, min-pc: at the CAS the lanes apply in thread order),
// its write is ordered before block 1's by the release and the acquire; when
// block 1 takes it first, nothing orders block 0's write with block 1's.
__global__ void k(int* lock, int* data)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) *data = 1;
    while (atomicCAS(lock, 0, 1) != 0) {}
    __threadfence();
    if (blockIdx.x == 1) *data = 2;
    __threadfence();
    atomicExch(lock, 0);
}
