// @launch --grid 1 --block 32 --arg buf:32
// @expect clean
// The same exchange with __syncwarp between the write and the read.
__global__ void rotate(int* out)
{
    __shared__ int s[32];
    s[threadIdx.x] = threadIdx.x * 3;
    __syncwarp();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 32];
}
