// @launch --grid 1 --block 32
// @expect clean
// Thread 0 writes element 1,000,000 of an automatic buffer, far past what the
// other threads touch: the buffer needs no size up front, and only the two
// pages touched are used (tests/test_auto_inputs.py checks the reported usage).
__global__ void far(int* a)
{
    int i = threadIdx.x;
    a[i] = i;
    if (i == 0)
        a[1000000] = -1;
}
