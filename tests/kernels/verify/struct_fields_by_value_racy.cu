// @verify_launch --grid 1 --block 128
// @verify out race certain 10 10
// @verify_labels out CI DI
// Fields a and b of the struct are different values: with b = a + 1,
// thread t writes the element thread t + 1 reads.
struct pair { int a; int b; };

__global__ void shift(int* out, pair p)
{
    out[threadIdx.x + p.b] = out[threadIdx.x + p.a] + 1;
}
