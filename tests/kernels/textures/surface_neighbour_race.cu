// @launch --grid 1 --block 32 --arg surf:f32:32x2:iota
// @expect data-race global 10 11
// Each thread doubles its element of row 0 of a surface and then reads its right neighbour's, with nothing
// ordering the neighbour's write before the read: a data race on the surface's texels (line 10 against
// line 11). The surface object is made by --arg surf: (a 32x2 CUDA array of floats, filled 0, 1, 2, ...).
__global__ void neighbour(cudaSurfaceObject_t s)
{
    int x = threadIdx.x;
    float v = surf2Dread<float>(s, x * sizeof(float), 0);
    surf2Dwrite(2.0f * v, s, x * sizeof(float), 0);
    float right = surf2Dread<float>(s, ((x + 1) % 32) * sizeof(float), 0);
    surf2Dwrite(right, s, x * sizeof(float), 1);
}
