// @launch --grid 1 --block 32 --arg buf:1 --arg buf:32 --max-steps 200000
// @expect livelock 9
// Waiting for a flag nobody sets while counting the spins: the state changes every
// iteration, so only the step budget (a small one here, to keep the test short) can end the run.
__global__ void count_forever(int* flag, int* out)
{
    volatile int* f = flag;
    int spins = 0;
    while (*f == 0)
        ++spins;
    out[threadIdx.x] = spins;
}
