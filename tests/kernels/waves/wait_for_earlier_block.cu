// @launch --grid 8 --block 32 --resident-threads 64 --arg buf:8 --arg buf:8
// @expect clean
// A chain: block b waits (an atomic spin, then a fence) until block b-1 has
// published its total, then publishes its own. Every block waits only for an
// earlier one, so the chain completes when the launch runs in waves, block
// order first, as it does when every block is resident.
__global__ void wait_for_earlier_block(int* ready, int* total)
{
    if (threadIdx.x == 0) {
        int b = blockIdx.x;
        int before = 0;
        if (b > 0) {
            while (atomicAdd(&ready[b - 1], 0) == 0) {}
            __threadfence();
            before = total[b - 1];
        }
        total[b] = before + b;
        __threadfence();
        atomicExch(&ready[b], 1);
    }
}
