// @verify_launch --grid 2 --block 64
// @verify data race-free
// @verify bins race confirmed 12 12
// @verify_approx bins loaded from memory
// A histogram without atomics: the index comes from memory, so verify cannot
// tell which inputs collide (not data independent): the alarm is possible
// until simulating the witness's launch (zero-filled data: every thread
// updates bin 0) shows the race, which confirms it.
__global__ void histogram(const int* data, int* bins)
{
    int v = data[blockIdx.x * blockDim.x + threadIdx.x];
    bins[v] = bins[v] + 1;
}
