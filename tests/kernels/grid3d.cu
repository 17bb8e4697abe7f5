// @kernel laplace3d(const float*, float*, int, int, int)
// @launch --grid 2,2,2 --block 4,4,4 --arg buf:512:iota --arg buf:512 --arg 8 --arg 8 --arg 8
// @expect clean
// 3D indexing over a volume with a 7-point Laplacian.
__global__ void laplace3d(const float* u, float* out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
        return;
    int sx = 1, sy = nx, sz = nx * ny;
    int c = z * sz + y * sy + x;
    out[c] = u[c - sx] + u[c + sx] + u[c - sy] + u[c + sy] + u[c - sz] + u[c + sz] - 6.0f * u[c];
}
