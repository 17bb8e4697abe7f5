// @launch --grid 4 --block 64 --arg buf:256:iota --arg buf:256 --arg buf:512 --arg 3
// @expect clean
// Straight-line loads and stores of every width the compiling executor handles, between two barriers: float4
// and double2 vectors from global memory, a 64-bit integer, a local array indexed by a thread-dependent value,
// and shared memory through 32-bit addresses read back at a neighbour's slot after the barrier.
struct Pair { double x, y; };

__global__ void straight_line_memory(const float* in, long long* wide, float* out, int k)
{
    __shared__ float tile[64];
    __shared__ double both[64];
    float local[8];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    const float4* quads = reinterpret_cast<const float4*>(in);
    float4 q = quads[i / 4];
    Pair p = reinterpret_cast<const Pair*>(in)[i / 4];
    for (int j = 0; j < 8; ++j)
        local[j] = q.x * j + q.w;
    tile[t] = q.x + q.y * k + local[(t + k) & 7];
    both[t] = p.x + p.y;
    wide[i] = (long long)i * 0x100000001LL + k;
    __syncthreads();
    float v = tile[(t + 1) & 63] + (float)both[(t + 2) & 63];
    out[2 * i] = v;
    out[2 * i + 1] = v * q.z + (float)wide[i];
}
