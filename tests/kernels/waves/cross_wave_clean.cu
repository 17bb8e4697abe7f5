// @launch --grid 8 --block 32 --resident-threads 64 --arg buf:256 --arg buf:256
// @expect clean
// The race-free twin of cross_wave_race.cu: every block reads and writes only
// its own slice, through a shared tile between two barriers, so running it in
// four waves of two blocks reports nothing.
__global__ void cross_wave_clean(const int* data, int* out)
{
    __shared__ int tile[32];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = data[g] * 2;
    __syncthreads();
    int v = tile[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
    tile[threadIdx.x] = v;
    __syncthreads();
    out[g] = tile[(threadIdx.x + 31) % blockDim.x];
}
