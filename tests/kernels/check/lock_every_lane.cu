// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1
// @expect clean
// Every lane of every warp takes the lock in turn (independent thread scheduling).
__global__ void count(int* lock, int* counter)
{
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            __threadfence();
            *counter += 1;
            __threadfence();
            atomicExch(lock, 0);
            done = true;
        }
    }
}
