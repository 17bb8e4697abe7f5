// @launch --grid 2 --block 32 --arg buf:64
// @expect clean
// Virtual functions: each thread constructs a Scale or an Offset and calls
// its virtual apply() through an Op*, a call through the object's virtual
// function table. The race-free twin of virtual_dispatch_race.cu: each
// override writes only its own thread's element.
struct Op {
    __device__ virtual void apply(int *out, int i) const = 0;
};
struct Scale : Op {
    int k;
    __device__ Scale(int k) : k(k) {}
    __device__ void apply(int *out, int i) const override
    {
        if (i % 2 == 0)
            out[i] = k * i;
    }
};
struct Offset : Op {
    __device__ void apply(int *out, int i) const override
    {
        if (i % 2 == 1)
            out[i] = i;
    }
};

__device__ __noinline__ const Op *choose(const Op *a, const Op *b, int i) { return i % 2 ? b : a; }

__global__ void shapes(int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Scale s(3);
    Offset o;
    choose(&s, &o, i)->apply(out, i);
}
