// @arch sm_90a
// @stdout launch 1: tiles match
// @stdout launch 2: tiles match
// @stdout launch 3: tiles match
// @stdout launch 4: tiles match
// @exit 0
// @launches 4
// @replayed 1
// @expect clean
// A timing loop over a cluster launch with a tensor map: tests/kernels/clusters/tma_multicast_load.cu's kernel,
// launched with cudaLaunchKernelEx in clusters of two, four times with the same map (a parameter, by value).
// The third launch repeats the second exactly (the first is not remembered) and is replayed; before the fourth
// the host rewrites the tensor, so the fourth is simulated again and sees the new values.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cstdio>
#include "../kernels/clusters/tma_multicast_load.cu"  // tile_broadcast: each cluster's box, to both blocks' `out`

const int rows = 40, cols = 100;
static float host[rows * cols], out[4 * 512];

int check(const float* d_out, float scale)
{
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int b = 0; b < 4; b++)
        for (int t = 0; t < 512; t++) {
            int r = 24 + t / 32, c = 32 * (b / 2) - 8 + t % 32;
            float want = r < rows && c >= 0 && c < cols ? scale * (r * 1000 + c) : 0;
            wrong += out[512 * b + t] != want;
        }
    return wrong;
}

int main()
{
    float *tensor, *d_out;
    cudaMalloc(&tensor, sizeof host);
    cudaMalloc(&d_out, sizeof out);
    PFN_cuTensorMapEncodeTiled_v12000 encode;
    cudaDriverEntryPointQueryResult found;
    cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault, &found);
    CUtensorMap map;
    cuuint64_t dims[2] = {cols, rows}, strides[1] = {cols * sizeof(float)};
    cuuint32_t box[2] = {32, 16}, element_strides[2] = {1, 1};
    encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, tensor, dims, strides, box, element_strides,
           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = 4;
    config.blockDim = 512;
    config.attrs = &attr;
    config.numAttrs = 1;
    for (int launch = 1; launch <= 4; launch++) {
        float scale = launch < 4 ? 1 : 2;
        if (launch == 1 || launch == 4) {
            for (int i = 0; i < rows * cols; i++)
                host[i] = scale * ((i / cols) * 1000 + i % cols);
            cudaMemcpy(tensor, host, sizeof host, cudaMemcpyHostToDevice);
        }
        cudaMemset(d_out, 0, sizeof out);
        cudaLaunchKernelEx(&config, tile_broadcast, map, d_out, (const float*)tensor);
        int wrong = check(d_out, scale);
        printf(wrong ? "launch %d: %d elements differ\n" : "launch %d: tiles match\n", launch, wrong);
    }
    cudaFree(tensor);
    cudaFree(d_out);
    return 0;
}
