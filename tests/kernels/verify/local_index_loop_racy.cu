// @verify_launch --grid 1 --block 128 -G
// @verify a race certain 11 11
// @verify_labels a CI DI
// The slot advances by one: thread t in iteration 1 writes where thread
// t + 1 writes in iteration 0.
__global__ void fill(float* a)
{
    int pos[1];
    pos[0] = threadIdx.x;
    for (int j = 0; j < 4; j++) {
        a[pos[0]] = 1.0f;
        pos[0] += 1;
    }
}
