// @launch --grid 1 --block 32 --search
// @expect clean
// The twin of constant_table_steers.cu whose table only scales the values
// written, never where they go: whatever the host copies into it, every
// thread writes its own element, and the search leaves the table as declared.
__constant__ float scale[32] = {1.0f};

__global__ void scatter(float* out)
{
    int i = threadIdx.x;
    out[i] = scale[i] * i;
}
