// A kernel on one stream reads level 1 of a mipmapped array through tex2DLod while a copy on another stream
// writes that level (cudaMemcpy2DToArrayAsync into the array cudaGetMipmappedArrayLevel gave), and nothing
// orders the two: a data race between the texel fetch and the copy. Level 0, which the kernel does not read,
// is written by an unordered copy too, without a race.
// @stdout done
// @exit 1
// @launches 1
// @expect data-race 12 40
#include <cstdio>
#include <cstring>

__global__ void read_level(cudaTextureObject_t t, float *out) { out[threadIdx.x] = tex2DLod<float>(t, 0.5f, 0.5f, 1.0f); }

int main() {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t m;
    cudaMallocMipmappedArray(&m, &f, make_cudaExtent(8, 8, 0), 2);
    cudaArray_t level0, level1;
    cudaGetMipmappedArrayLevel(&level0, m, 0);
    cudaGetMipmappedArrayLevel(&level1, m, 1);
    float zeros[64] = {};
    cudaMemcpy2DToArray(level0, 0, 0, zeros, 8 * sizeof(float), 8 * sizeof(float), 8, cudaMemcpyHostToDevice);
    cudaMemcpy2DToArray(level1, 0, 0, zeros, 4 * sizeof(float), 4 * sizeof(float), 4, cudaMemcpyHostToDevice);
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeMipmappedArray, res.res.mipmap.mipmap = m;
    cudaTextureDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.normalizedCoords = 1, desc.maxMipmapLevelClamp = 1;
    cudaTextureObject_t t;
    cudaCreateTextureObject(&t, &res, &desc, nullptr);
    float *out, *pinned;
    cudaMalloc(&out, 32 * sizeof(float));
    cudaMallocHost(&pinned, 64 * sizeof(float));
    memset(pinned, 0, 64 * sizeof(float));
    cudaStream_t s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    read_level<<<1, 32, 0, s1>>>(t, out);
    cudaMemcpy2DToArrayAsync(level1, 0, 0, pinned, 4 * sizeof(float), 4 * sizeof(float), 4, cudaMemcpyHostToDevice, s2);
    cudaMemcpy2DToArrayAsync(level0, 0, 0, pinned, 8 * sizeof(float), 8 * sizeof(float), 8, cudaMemcpyHostToDevice, s2);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
