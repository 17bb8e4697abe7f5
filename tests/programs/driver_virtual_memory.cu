// The driver's virtual memory management: two physical allocations mapped side by side in one reservation read
// and write as one range, for kernels and for a copy across both; an allocation unmapped and mapped again keeps
// its bytes, which a copy reaches only once cuMemSetAccess granted access to the new mapping (before, it is out
// of bounds); a copy into the reservation where nothing is mapped is out of bounds (CUDA_ERROR_INVALID_VALUE);
// a kernel summing the mapped memory without atomics races; an allocation never released is a leak at its
// cuMemCreate.
// @nvcc_flags -lcuda
// @leak_check
// @stdout granularity 2097152, supported 1
// @stdout across the stripes: ok
// @stdout before access: CUDA_ERROR_INVALID_VALUE
// @stdout remapped: 524351
// @stdout unmapped: CUDA_ERROR_INVALID_VALUE
// @stdout done
// @exit 1
// @launches 2
// @expect data-race 27
// @expect out-of-bounds 69
// @expect out-of-bounds 77
// @expect leak 88
#include <cstdio>
#include <cuda.h>
#include "driver/check.h"

__global__ void fill(int *p, int first) { p[first + threadIdx.x] = first + threadIdx.x; }

__global__ void total(const int *p, int first, int *sum) { *sum += p[first + threadIdx.x]; }

int main() {
    CUdevice device;
    CUcontext context;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuCtxCreate(&context, nullptr, 0, device));
    int supported;
    CHECK(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device));
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    size_t stripe;
    CHECK(cuMemGetAllocationGranularity(&stripe, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    printf("granularity %zu, supported %d\n", stripe, supported);

    CUdeviceptr base;
    CUmemGenericAllocationHandle first, second;
    CHECK(cuMemAddressReserve(&base, 2 * stripe, 0, 0, 0));
    CHECK(cuMemCreate(&first, stripe, &prop, 0));
    CHECK(cuMemCreate(&second, stripe, &prop, 0));
    CHECK(cuMemMap(base, stripe, 0, first, 0));
    CHECK(cuMemMap(base + stripe, stripe, 0, second, 0));
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK(cuMemSetAccess(base, 2 * stripe, &access, 1));

    int *p = (int *)base, border = (int)(stripe / sizeof(int)) - 64;
    fill<<<1, 128>>>(p, border);
    int out[128];
    CHECK(cuMemcpyDtoH(out, base + border * sizeof(int), sizeof out));
    bool ok = true;
    for (int i = 0; i < 128; i++) ok = ok && out[i] == border + i;
    printf("across the stripes: %s\n", ok ? "ok" : "wrong");

    CHECK(cuMemUnmap(base + stripe, stripe));
    CHECK(cuMemMap(base + stripe, stripe, 0, second, 0));
    int last;
    const char *name;
    cuGetErrorName(cuMemcpyDtoH(&last, base + stripe, sizeof last), &name);
    printf("before access: %s\n", name);
    CHECK(cuMemSetAccess(base + stripe, stripe, &access, 1));
    CHECK(cuMemcpyDtoH(&last, base + stripe + 63 * sizeof(int), sizeof last));
    printf("remapped: %d\n", last);

    CHECK(cuMemUnmap(base + stripe, stripe));
    CHECK(cuMemRelease(second));
    cuGetErrorName(cuMemcpyHtoD(base + stripe, out, sizeof out), &name);
    printf("unmapped: %s\n", name);

    CUdeviceptr sum;
    CHECK(cuMemAlloc(&sum, sizeof(int)));
    CHECK(cuMemsetD32(sum, 0, 1));
    total<<<1, 64>>>(p, border, (int *)sum);
    CHECK(cuCtxSynchronize());
    CHECK(cuMemFree(sum));

    CUmemGenericAllocationHandle forgotten;
    CHECK(cuMemCreate(&forgotten, stripe, &prop, 0));
    CHECK(cuMemUnmap(base, stripe));
    CHECK(cuMemRelease(first));
    CHECK(cuMemAddressFree(base, 2 * stripe));
    printf("done\n");
    return 0;
}
