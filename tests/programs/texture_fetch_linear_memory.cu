// tex1Dfetch through a texture object over linear memory (cudaResourceTypeLinear), 16-bit unsigned
// integers read both as they are and as normalized floats: a clean program whose results the host prints.
// @stdout ints 0 1000 2000 65535
// @stdout floats 0.0000 0.0153 0.0305 1.0000
// @exit 0
// @launches 1
// @expect clean
#include <cstdio>

__global__ void fetch(cudaTextureObject_t as_int, cudaTextureObject_t as_float, unsigned *ints, float *floats) {
    int i = threadIdx.x;
    ints[i] = tex1Dfetch<unsigned short>(as_int, i);
    floats[i] = tex1Dfetch<float>(as_float, i);
}

int main() {
    const int n = 4;
    unsigned short host[n] = {0, 1000, 2000, 65535};
    unsigned short *data;
    cudaMalloc(&data, sizeof host);
    cudaMemcpy(data, host, sizeof host, cudaMemcpyHostToDevice);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = data;
    res.res.linear.desc = cudaCreateChannelDesc<unsigned short>();
    res.res.linear.sizeInBytes = sizeof host;
    cudaTextureDesc td = {};
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t as_int, as_float;
    cudaCreateTextureObject(&as_int, &res, &td, nullptr);
    td.readMode = cudaReadModeNormalizedFloat;
    cudaCreateTextureObject(&as_float, &res, &td, nullptr);
    unsigned *ints, hi[n];
    float *floats, hf[n];
    cudaMalloc(&ints, sizeof hi);
    cudaMalloc(&floats, sizeof hf);
    fetch<<<1, n>>>(as_int, as_float, ints, floats);
    cudaMemcpy(hi, ints, sizeof hi, cudaMemcpyDeviceToHost);
    cudaMemcpy(hf, floats, sizeof hf, cudaMemcpyDeviceToHost);
    printf("ints %u %u %u %u\n", hi[0], hi[1], hi[2], hi[3]);
    printf("floats %.4f %.4f %.4f %.4f\n", hf[0], hf[1], hf[2], hf[3]);
    cudaDestroyTextureObject(as_int);
    cudaDestroyTextureObject(as_float);
    cudaFree(data);
    cudaFree(ints);
    cudaFree(floats);
    return 0;
}
