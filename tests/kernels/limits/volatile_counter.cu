// @kernel count_up(volatile int*)
// No @launch: tests/test_runtime_limits.py runs it with a small --timeout.
// Each thread counts a volatile word up to 2^31: billions of steps that all
// change memory, so neither the livelock check nor (for minutes) the step
// budget ends the run; the wall-clock budget does, with a timeout finding at
// the loop.
__global__ void count_up(volatile int* counter)
{
    while (counter[threadIdx.x] >= 0)
        counter[threadIdx.x] = counter[threadIdx.x] + 1;
}
