// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --schedules 4
// @expect clean
// The race-free twin of flag_claim_unfenced.cu: block 1 writes the word only
// when it finds the flag set, after a gpu fence. The producer's fence before
// the flag's atomic write and the consumer's atomic read followed by a fence
// order the two writes (happens-before detector); when block 1 runs first it
// finds the flag unset and writes nothing. The flag is read with an atomic,
// never a volatile load: a volatile flag would itself race under the default
// model.
__global__ void k(int* flag, int* data)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        *data = 1;
        __threadfence();
        atomicExch(flag, 1);
    }
    if (blockIdx.x == gridDim.x - 1 && atomicAdd(flag, 0) == 1) {
        __threadfence();
        *data = 2;
    }
}
