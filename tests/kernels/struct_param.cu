// @kernel axpby(Params, const float*, float*, Pair)
// @launch --grid 1 --block 64 --arg bytes:2.0f,1.0f,64i,1i --arg buf:64:iota --arg buf:64 --arg bytes:0h,0h
// Structs passed by value: a parameter block and a small vector type.
struct Params {
    float alpha;
    float beta;
    int n;
    int stride;
};

struct Pair {
    short a;
    short b;
};

__global__ void axpby(Params p, const float* x, float* y, Pair offsets)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * p.stride + offsets.a;
    if (i < p.n)
        y[i] = p.alpha * x[i] + p.beta * y[i] + offsets.b;
}
