// @launch --grid 4 --block 64 --arg buf:200
// @expect out-of-bounds 8
// A buffer of 200 floats for four rows of 64: the last 56 elements of row 3
// lie past its end.
__global__ void rows_fill(float (*rows)[64])
{
    int r = blockIdx.x, c = threadIdx.x;
    rows[r][c] = 1.0f;
}
