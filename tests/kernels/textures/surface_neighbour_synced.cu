// @launch --grid 1 --block 32 --arg surf:f32:32x2:iota
// @barriers neighbour_synced 11
// @expect clean
// surface_neighbour_race.cu with a barrier between the writes of row 0 and the reads of neighbours: race-free.
__global__ void neighbour_synced(cudaSurfaceObject_t s)
{
    int x = threadIdx.x;
    float v = surf2Dread<float>(s, x * sizeof(float), 0);
    surf2Dwrite(2.0f * v, s, x * sizeof(float), 0);
    __syncthreads();
    float right = surf2Dread<float>(s, ((x + 1) % 32) * sizeof(float), 0);
    surf2Dwrite(right, s, x * sizeof(float), 1);
}
