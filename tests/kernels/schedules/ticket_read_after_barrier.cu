// @launch --grid 1 --block 64 --arg buf:1 --arg buf:65 --schedules 4
// @expect clean
// The race-free twin of ticket_read_before_barrier.cu: thread 0 reads the
// published index only after the barrier, whichever thread drew ticket 0
// (barrier-interval and happens-before detectors, every schedule).
__global__ void k(int* ticket, int* out)
{
    __shared__ int first;
    int t = atomicAdd(ticket, 1);
    if (t == 0) first = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) out[0] = first;
    out[threadIdx.x + 1] = first;
}
