// @launch --grid 1 --block 32
// @expect out-of-bounds global 8
// Thread 0 writes the element before the start of an automatic buffer:
// automatic buffers grow upwards only, so that is out of bounds.
__global__ void before(int* a)
{
    int i = threadIdx.x;
    a[i - 1] = i;
}
