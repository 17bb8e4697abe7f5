// A driver-API program (built with -lcuda) that loads textures.cu's PTX (its first argument) and reads two
// 4x4 CUDA arrays through texture objects: floats, copied in with cuMemcpy2D from a padded host image and
// read as they are, and unsigned bytes, read as normalized floats (the driver's default, without
// CU_TRSF_READ_AS_INTEGER). It copies the float array back out into device memory with cuMemcpy2D and
// prints what it checked (tests/runtime/test_driver_api.py).
#include <cstdio>
#include <cuda.h>

#include "check.h"

static CUresult texture_of(CUtexObject *texture, CUarray array) {
    CUDA_RESOURCE_DESC resource = {};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array;
    CUDA_TEXTURE_DESC sampling = {};
    sampling.addressMode[0] = sampling.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    sampling.filterMode = CU_TR_FILTER_MODE_POINT;
    return cuTexObjectCreate(texture, &resource, &sampling, nullptr);
}

int main(int argc, char **argv) {
    if (argc != 2)
        return 4;
    const int w = 4, h = 4, padded = 6;
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction fetch;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuModuleLoad(&module, argv[1]));
    CHECK(cuModuleGetFunction(&fetch, module, "fetch"));

    float image[h][padded];
    unsigned char bytes[h][w];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < padded; x++) {
            image[y][x] = x < w ? 10.0f * y + x : -1.0f;
            if (x < w)
                bytes[y][x] = (unsigned char)(51 * (x % 2) + y);
        }
    CUarray floats, uchars;
    CUDA_ARRAY_DESCRIPTOR shape = {w, h, CU_AD_FORMAT_FLOAT, 1};
    CHECK(cuArrayCreate(&floats, &shape));
    shape.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    CHECK(cuArrayCreate(&uchars, &shape));
    CUDA_MEMCPY2D in = {};
    in.srcMemoryType = CU_MEMORYTYPE_HOST, in.srcHost = image, in.srcPitch = sizeof image[0];
    in.dstMemoryType = CU_MEMORYTYPE_ARRAY, in.dstArray = floats;
    in.WidthInBytes = w * sizeof(float), in.Height = h;
    CHECK(cuMemcpy2D(&in));
    in.srcHost = bytes, in.srcPitch = sizeof bytes[0], in.dstArray = uchars, in.WidthInBytes = w;
    CHECK(cuMemcpy2D(&in));

    CUtexObject float_texture, byte_texture;
    CHECK(texture_of(&float_texture, floats));
    CHECK(texture_of(&byte_texture, uchars));
    CUdeviceptr out;
    CHECK(cuMemAlloc(&out, w * h * sizeof(float)));
    float got[h][w];
    int width = w, same = 1;
    void *args[] = {&out, &float_texture, &width};
    CHECK(cuLaunchKernel(fetch, 1, 1, 1, w, h, 1, 0, nullptr, args, nullptr));
    CHECK(cuMemcpyDtoH(got, out, sizeof got));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            same = same && got[y][x] == image[y][x];
    printf("float texels: %s\n", same ? "as copied" : "wrong");

    args[1] = &byte_texture;
    CHECK(cuLaunchKernel(fetch, 1, 1, 1, w, h, 1, 0, nullptr, args, nullptr));
    CHECK(cuMemcpyDtoH(got, out, sizeof got));
    same = 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            same = same && got[y][x] == bytes[y][x] / 255.0f;
    printf("byte texels: %s\n", same ? "normalized" : "wrong");

    CUDA_MEMCPY2D back = {};
    back.srcMemoryType = CU_MEMORYTYPE_ARRAY, back.srcArray = floats, back.srcXInBytes = sizeof(float), back.srcY = 1;
    back.dstMemoryType = CU_MEMORYTYPE_DEVICE, back.dstDevice = out, back.dstPitch = w * sizeof(float);
    back.WidthInBytes = 2 * sizeof(float), back.Height = 2;
    CHECK(cuMemcpy2D(&back));
    CHECK(cuMemcpyDtoH(got, out, sizeof got));
    printf("copied out: %g %g %g %g\n", got[0][0], got[0][1], got[1][0], got[1][1]);

    CHECK(cuTexObjectDestroy(float_texture));
    CHECK(cuTexObjectDestroy(byte_texture));
    CHECK(cuArrayDestroy(floats));
    CHECK(cuArrayDestroy(uchars));
    CHECK(cuMemFree(out));
    CHECK(cuDevicePrimaryCtxRelease(device));
    return 0;
}
