// @launch --grid 2 --block 32 --arg struct:io.keys=buf:64:iota,io.vals=buf:64,n=64,scale=2.0
// @expect clean
// A struct's fields given on the command line, a nested struct's with dots:
// `io.keys` and `io.vals` get buffers, `n` and `scale` values. Each thread
// reads and writes only its own element.
struct Pair {
    const int* keys;
    float* vals;
};
struct Job {
    Pair io;
    int n;
    float scale;
};
__global__ void scale_keys(Job job)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < job.n)
        job.io.vals[i] = job.scale * job.io.keys[i];
}
