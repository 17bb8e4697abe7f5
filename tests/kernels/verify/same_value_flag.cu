// @verify_launch --benign-same-value
// @verify in race-free
// @verify data race-free
// @verify done race-free
// @verify_benign done 13 13
// Every thread publishes its element, then raises the same flag: a
// write-write race under the PTX memory model, benign under GPUVerify's
// convention since every store writes 1.
__global__ void publish(const float* in, float* data, int* done)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] = 2.0f * in[i];
    *done = 1;
}
