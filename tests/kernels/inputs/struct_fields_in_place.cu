// @launch --grid 2 --block 32
// @expect clean
// A struct whose pointers sit in a member of a struct type defined in place, with no name of its
// own: `auto` gives each pointer its own buffer (`job.io.in`, `job.io.out`), reached through the
// member's path. Each thread copies its own element. Racy twin: struct_fields_in_place_racy.cu.
struct Job {
    struct {
        const int *in;
        int *out;
    } io;
    int n;
};

__global__ void copy(Job job)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    job.io.out[i] = job.io.in[i];
}
