/* Tensor maps for TMA copies (sm_90; included by cudart.c; see `gpurace/sim/tensor_maps.py`).
 *
 * Programs make a CUtensorMap with the driver's cuTensorMapEncodeTiled, which they reach through the runtime's
 * cudaGetDriverEntryPoint(ByVersion) so as not to link the driver library, or call directly when they link it
 * (gpurace's libcuda.so.1 asks this entry point too). Here that entry point hands out gpurace's own
 * cuTensorMapEncodeTiled, which asks the server (TENSOR_MAP) to encode the map in the simulator's layout: the
 * kernel's TMA instructions read it back from their parameter. Every other driver symbol stops the program,
 * naming it.
 */

enum { OP_TENSOR_MAP = 42 };
enum { TENSOR_MAP_BYTES = 128, TENSOR_MAP_MAX_RANK = 5, CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 };

static int gpurace_cuTensorMapEncodeTiled(void *map, int data_type, uint32_t rank, void *address, const uint64_t *dims,
                                          const uint64_t *strides, const uint32_t *box, const uint32_t *element_strides,
                                          int interleave, int swizzle, int l2_promotion, int oob_fill) {
    (void)l2_promotion; /* a cache hint: no effect on what a copy reads or writes */
    if (!map || !dims || !box || !element_strides || (rank > 1 && !strides) || rank < 1 || rank > TENSOR_MAP_MAX_RANK)
        return CUDA_ERROR_INVALID_VALUE;
    struct buf b = {0};
    put_u32(&b, (uint32_t)data_type);
    put_u32(&b, rank);
    put_u64(&b, (uint64_t)(uintptr_t)address);
    for (uint32_t i = 0; i < rank; i++) put_u64(&b, dims[i]);
    for (uint32_t i = 0; i + 1 < rank; i++) put_u64(&b, strides[i]);
    for (uint32_t i = 0; i < rank; i++) put_u32(&b, box[i]);
    for (uint32_t i = 0; i < rank; i++) put_u32(&b, element_strides[i]);
    put_u32(&b, (uint32_t)interleave);
    put_u32(&b, (uint32_t)swizzle);
    put_u32(&b, (uint32_t)oob_fill);
    put_site(&b, "cuTensorMapEncodeTiled", NULL);
    uint8_t *reply = NULL;
    cudaError_t status = request(OP_TENSOR_MAP, &b, &reply);
    if (status == cudaSuccess) {
        if (reply_bytes != TENSOR_MAP_BYTES) die("%s", "the gpurace process sent a tensor map of the wrong size");
        memcpy(map, reply, TENSOR_MAP_BYTES);
    }
    free(reply);
    return status == cudaSuccess ? CUDA_SUCCESS : (int)status; /* the driver's CUresult, not a runtime error */
}

static cudaError_t driver_entry_point(const char *symbol, void **fn, int *driver_status, const char *call) {
    if (!symbol || !fn) return record(cudaErrorInvalidValue);
    if (strcmp(symbol, "cuTensorMapEncodeTiled") == 0) {
        *fn = (void *)gpurace_cuTensorMapEncodeTiled;
        if (driver_status) *driver_status = 0; /* cudaDriverEntryPointSuccess */
        return cudaSuccess;
    }
    char what[256];
    snprintf(what, sizeof what, "%s(\"%.160s\"): the driver function %.160s", call, symbol, symbol);
    unsupported(what, NULL);
}

EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags, int *driver_status) {
    (void)flags;
    return driver_entry_point(symbol, fn, driver_status, "cudaGetDriverEntryPoint");
}

EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **fn, unsigned long long flags, int *driver_status) {
    (void)flags;
    return driver_entry_point(symbol, fn, driver_status, "cudaGetDriverEntryPoint");
}

EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                                    unsigned long long flags, int *driver_status) {
    (void)version, (void)flags;
    return driver_entry_point(symbol, fn, driver_status, "cudaGetDriverEntryPointByVersion");
}

EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **fn, unsigned int version,
                                                         unsigned long long flags, int *driver_status) {
    (void)version, (void)flags;
    return driver_entry_point(symbol, fn, driver_status, "cudaGetDriverEntryPointByVersion");
}
