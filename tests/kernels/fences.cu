// @kernel fences(int*, int*)
// @fences fences 9:cta 12:gpu 15:sys
// @launch --grid 1 --block 1 --arg buf:3 --arg buf:3
// @expect clean
// The three fence scopes, each separating two stores.
__global__ void fences(int* x, int* y)
{
    x[0] = 1;
    __threadfence_block();
    y[0] = 1;
    x[1] = 2;
    __threadfence();
    y[1] = 2;
    x[2] = 3;
    __threadfence_system();
    y[2] = 3;
}
