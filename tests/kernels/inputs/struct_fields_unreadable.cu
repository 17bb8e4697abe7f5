// @launch --grid 1 --block 32 --arg struct:data=buf:32
// @expect_error cannot tell the layout of Flags
// A struct with a bit-field has members without an offset, so gpurace cannot
// place buffers in its fields: the launch is refused (exit status 2).
struct Flags {
    int* data;
    unsigned mode : 2;
};
__global__ void set(Flags f)
{
    f.data[threadIdx.x] = f.mode;
}
