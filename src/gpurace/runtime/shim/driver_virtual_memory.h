/* The driver's virtual memory management: address space reserved (cuMemAddressReserve), physical allocations
 * (cuMemCreate) mapped into it (cuMemMap) and made accessible (cuMemSetAccess), then unmapped, released and
 * freed. The server keeps all of it (runtime/virtual_memory.py): a reserved range is device memory that no
 * allocation holds, so that an access there is out of bounds until an allocation is mapped. Sizes, mapped
 * addresses and alignments are multiples of the granularity, 2 MiB, which the server states too.
 *
 * What one device cannot have is refused by name: allocations on the host or elsewhere than device 0's memory,
 * shareable handles (the program's processes share no simulated device), compressible memory, and access that
 * is not read-write (cuMemSetAccess makes whole mappings read-write; before, the device cannot reach them).
 * Included by cuda_driver.c.
 */

#define VMM_GRANULARITY ((size_t)2 << 20)

enum { VMM_RESERVE = 0, VMM_ADDRESS_FREE = 1, VMM_CREATE = 2, VMM_RELEASE = 3, VMM_MAP = 4, VMM_UNMAP = 5,
       VMM_SET_ACCESS = 6 };
enum { MEM_ALLOCATION_TYPE_PINNED = 1, MEM_LOCATION_TYPE_DEVICE = 1, MEM_ACCESS_FLAGS_PROT_READWRITE = 3 };

typedef struct { int type, id; } mem_location;
typedef struct {
    int type, requested_handle_types;
    mem_location location;
    void *win32_metadata;
    unsigned char compression_type, gpu_direct_rdma, usage_low, usage_high, reserved[4];
} mem_allocation_prop;
typedef struct {
    mem_location location;
    int flags;
} mem_access_desc;

typedef int (*virtual_memory_fn)(uint32_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t *, const char *);

static CUresult virtual_memory(uint32_t action, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t *result,
                               const char *call) {
    return CALL_AS(call, RUNTIME("__cudaGpuraceVirtualMemory", virtual_memory_fn)(action, a, b, c, d, result, call));
}

/* Whether `prop` asks for what the simulated device has: pinned memory of device 0, with no shareable handle and
   no compression. */
static CUresult allocation_prop(const mem_allocation_prop *prop, const char *call) {
    if (!prop || prop->type != MEM_ALLOCATION_TYPE_PINNED || prop->location.type != MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.id != 0) return CUDA_ERROR_INVALID_DEVICE;
    char what[128];
    if (prop->requested_handle_types) {
        snprintf(what, sizeof what, "%s of memory with a shareable handle (type %d)", call,
                 prop->requested_handle_types);
        unsupported(what);
    }
    if (prop->compression_type) {
        snprintf(what, sizeof what, "%s of compressible memory", call);
        unsupported(what);
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const mem_allocation_prop *prop, int option) {
    if (!granularity || option < 0 || option > 1) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = allocation_prop(prop, "cuMemGetAllocationGranularity");
    if (!r) *granularity = VMM_GRANULARITY;
    return r;
}

/* `addr`, the address the program would like, is a hint the driver may not follow; gpurace does not. */
EXPORT CUresult cuMemAddressReserve(CUdeviceptr *address, size_t size, size_t alignment, CUdeviceptr addr,
                                    unsigned long long flags) {
    (void)addr;
    if (!address || flags) return CUDA_ERROR_INVALID_VALUE;
    uint64_t base = 0;
    CUresult r = virtual_memory(VMM_RESERVE, size, alignment, 0, 0, &base, __func__);
    if (!r) *address = base;
    return r;
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr address, size_t size) {
    return virtual_memory(VMM_ADDRESS_FREE, address, size, 0, 0, NULL, __func__);
}

EXPORT CUresult cuMemCreate(unsigned long long *handle, size_t size, const mem_allocation_prop *prop,
                            unsigned long long flags) {
    if (!handle || flags) return CUDA_ERROR_INVALID_VALUE;
    uint64_t made = 0;
    CUresult r = allocation_prop(prop, __func__);
    if (!r) r = virtual_memory(VMM_CREATE, size, 0, 0, 0, &made, __func__);
    if (!r) *handle = made;
    return r;
}

EXPORT CUresult cuMemRelease(unsigned long long handle) {
    return virtual_memory(VMM_RELEASE, handle, 0, 0, 0, NULL, __func__);
}

EXPORT CUresult cuMemMap(CUdeviceptr address, size_t size, size_t offset, unsigned long long handle,
                         unsigned long long flags) {
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    return virtual_memory(VMM_MAP, address, size, offset, handle, NULL, __func__);
}

EXPORT CUresult cuMemUnmap(CUdeviceptr address, size_t size) {
    return virtual_memory(VMM_UNMAP, address, size, 0, 0, NULL, __func__);
}

/* Access is set for whole mappings: until then, the device cannot reach them. */
EXPORT CUresult cuMemSetAccess(CUdeviceptr address, size_t size, const mem_access_desc *desc, size_t count) {
    if (!desc || !count || !size) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
        if (desc[i].location.id != 0) return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags != MEM_ACCESS_FLAGS_PROT_READWRITE) {
            char what[96];
            snprintf(what, sizeof what, "cuMemSetAccess with access flags %d (gpurace maps memory read-write)",
                     desc[i].flags);
            unsupported(what);
        }
    }
    return virtual_memory(VMM_SET_ACCESS, address, size, 0, 0, NULL, __func__);
}
