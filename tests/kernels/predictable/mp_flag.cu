// @kernel mp_flag(int*, int*, int*)
// @atomics mp_flag 20:exch.gpu 22:add.gpu
// @fences mp_flag 19:gpu 24:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1 --detector gwcp
// @expect clean
// Message passing between blocks with no lock: data, device fence, atomic flag;
// the consumer spins with an atomic read (never a volatile one, which would
// itself race with the flag write under the default model), then fences, which
// completes the acquire pattern. The flag is happens-before synchronisation,
// not a lock, so gwcp orders the data accesses in every schedule, as hb does.
// Clean for gwcp and hb.
__global__ void mp_flag(int* data, int* flag, int* result)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        *data = 42;
        __threadfence();
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {
        }
        __threadfence();
        *result = *data;
    }
}
