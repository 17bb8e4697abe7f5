// @launch --grid 1 --block 64 --arg buf:64 --arg buf:64
// @expect out-of-bounds global 13
// @expect data-race global 11 12
// @expect data-race global 12 12
// An overrun of `a` next to a real race on `b`: every thread also writes b[0]. That race is reported on
// its own lines, and the stray writes past `a` (where `b` would be, packed one red zone apart) stay
// out-of-bounds findings, none an access to `b`. See overrun_into_neighbour.cu.
__global__ void overrun(int *a, int *b)
{
    int i = threadIdx.x;
    b[i] = i;
    b[0] = i;
    a[128 + (i ^ 1)] = i;
}
