// @launch --grid 2 --block 64
// @expect data-race global 12 12
// A parameter written as an array of rows, `float x[][64]`, is a pointer to
// arrays (`float (*)[64]`): a pointer parameter, so with no --arg it gets an
// automatic buffer of floats. Block r works on row r; each thread reads its
// right neighbour's element, which that neighbour writes in the same
// statement, with nothing ordering the two.
__global__ void rows_neighbour(float x[][64])
{
    int r = blockIdx.x, c = threadIdx.x;
    if (c + 1 < 64)
        x[r][c] = x[r][c + 1] + 1.0f;
}
