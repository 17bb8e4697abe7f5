// @launch --grid 2 --block 32 --arg struct:io.in=buf:64:iota,io.out=buf:65
// @expect data-race global 17 17
// The twin of struct_fields_in_place.cu given field by field with `struct:`, the in-place
// member's fields by their paths (`io.in`, `io.out`): each thread writes its element and the
// next one, so thread i and thread i + 1 both write element i + 1 (line 17).
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
    job.io.out[i] = job.io.out[i + 1] = job.io.in[i];
}
