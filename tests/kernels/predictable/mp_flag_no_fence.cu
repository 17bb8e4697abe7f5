// @kernel mp_flag_no_fence(int*, int*, int*)
// @atomics mp_flag_no_fence 17:exch.gpu 19:add.gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1 --detector gwcp
// @expect data-race global 16 21
// The same message passing without any fence: the atomic flag is relaxed, so
// neither side forms a release or acquire pattern and the data write races
// with the data read. The consumer executes no fence at all after its flag
// read (under the PTX model any later fence would complete an acquire).
// Found by gwcp and by hb.
__global__ void mp_flag_no_fence(int* data, int* flag, int* result)
{
    if (threadIdx.x != 0) {
        return;
    }
    if (blockIdx.x == 0) {
        *data = 42;
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {
        }
        *result = *data;
    }
}
