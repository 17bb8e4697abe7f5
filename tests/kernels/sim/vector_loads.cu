// @launch --grid 2 --block 64 --arg buf:512:iota --arg buf:512
// @expect clean
// float4 loads and stores (ld.global.v4.f32) and a __ldg read-only load.
__global__ void vec4(const float* in, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 a = reinterpret_cast<const float4*>(in)[i];
    float b = __ldg(&in[(i * 4 + 3) % 512]);
    float4 r = make_float4(a.w + b, a.z * 2.0f, a.y - a.x, a.x);
    reinterpret_cast<float4*>(out)[i] = r;
}
