// @verify_launch --grid 1 --block 128
// @verify out race-free
// nvcc loads both int fields of the struct with one `ld.param.v2.u32`:
// each register gets its own field, so `p.a == p.b` is known where the
// kernel reads one and writes the other.
struct pair { int a; int b; };

__global__ void shift(int* out, pair p)
{
    if (p.a == p.b)
        out[threadIdx.x + p.b] = out[threadIdx.x + p.a] + 1;
}
