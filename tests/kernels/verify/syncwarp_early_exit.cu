// @verify_launch --grid 1 --block 64 --no-confirm
// @verify s race possible 12 14
// @verify out race-free
// @verify_warp_barriers not used to order accesses: the warp barrier at tests/kernels/verify/syncwarp_early_exit.cu:13 may be missed
// Lanes that leave before a __syncwarp() do not take part in it, so verify
// cannot count it as ordering the lanes of the warp (it would if every lane
// passed it): the alarm is possible, not certain.
__global__ void exchange(int* out, int n)
{
    __shared__ int s[64];
    if (threadIdx.x >= n) return;
    s[threadIdx.x] = threadIdx.x;
    __syncwarp();
    out[threadIdx.x] = s[threadIdx.x ^ 1];
}
