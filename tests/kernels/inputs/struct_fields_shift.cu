// @launch --grid 2 --block 64
// @expect data-race global 18 18
// A struct passed by value whose fields are pointers. With no --arg, gpurace
// reads the struct's layout from the compiler and gives each pointer field
// an automatic buffer (`job.in`, `job.out`) and `job.n` the thread count.
// Each thread writes its element and then reads its right neighbour's,
// which another thread writes: a race.
struct Job {
    const float* in;
    float* out;
    int n;
};
__global__ void shift(Job job)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < job.n) {
        job.out[i] = job.in[i];
        job.out[i] += job.out[i + 1];
    }
}
