/* gpurace's libcudart.so.13: the CUDA runtime a program runs against under `gpurace exec`.
 *
 * It keeps no device state (but which of the program's pages are registered
 * host memory): every call about device memory or kernels is a request to
 * the gpurace process (the device server), which owns the allocations,
 * checks every copy, runs each launch in its simulator and answers with a
 * cudaError_t. The wire format is documented in
 * `gpurace/runtime/protocol.py`; the opcodes and layouts here must match it.
 *
 * Device memory is two memory files that the server created and this
 * process inherited; the constructor maps them at the addresses the
 * simulator gives the global and constant spaces, so a device pointer is
 * the same number here and in the simulator, and a copy the server approved
 * is a plain memmove. cudaMalloc memory is the exception: its pointers are in the device-only window, which
 * this process reserves and never maps (gpurace/runtime/spread.py: no out-of-bounds access through one reaches
 * another allocation), and the server says where in the arena its bytes are with each copy or memset it approves.
 * The program's mapping of the global arena is
 * protected page by page as the server says (with each reply), and the
 * accesses its host code makes to protected pages are caught (SIGSEGV) and
 * sent to the server (HOST_ACCESS): host code touching device memory, or
 * memory a kernel or copy may still be using (`gpurace/runtime/protection.py`).
 * This runtime's own copies go through a second, unprotected mapping.
 * Host memory the program registers (cudaHostRegister) becomes memory of the
 * global arena too ("Registered host memory" below).
 * Calls with no device meaning (device properties, error strings) are
 * answered here. Calls this runtime does not implement stop the program
 * (exit 2) after telling the server which call it was and where
 * (`unsupported_calls.h`).
 *
 * No CUDA header is needed to build it: the few types are declared below,
 * with the layouts of CUDA 13's driver_types.h.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------------ */
/* CUDA types (layouts as in CUDA 13's driver_types.h and vector_types.h)    */
/* ------------------------------------------------------------------------ */

typedef int cudaError_t;
typedef struct { unsigned int x, y, z; } dim3;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;

enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidPitchValue = 12,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotSupported = 801,
    cudaErrorInvalidClusterSize = 912,
};

/* cudaHostRegister's flags. */
enum {
    cudaHostRegisterPortable = 1,
    cudaHostRegisterMapped = 2,
    cudaHostRegisterIoMemory = 4,
    cudaHostRegisterReadOnly = 8,
};

enum { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3,
       cudaMemcpyDefault = 4 };

enum {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
    cudaFuncAttributeRequiredClusterWidth = 11,
    cudaFuncAttributeRequiredClusterDepth = 13,
    cudaFuncAttributeNonPortableClusterSizeAllowed = 14,
    cudaFuncAttributeClusterSchedulingPolicyPreference = 15,
};

typedef struct { char bytes[16]; } cudaUUID_t;

struct cudaDeviceProp {
    char name[256];
    cudaUUID_t uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int maxTexture1D;
    int maxTexture1DMipmap;
    int maxTexture2D[2];
    int maxTexture2DMipmap[2];
    int maxTexture2DLinear[3];
    int maxTexture2DGather[2];
    int maxTexture3D[3];
    int maxTexture3DAlt[3];
    int maxTextureCubemap;
    int maxTexture1DLayered[2];
    int maxTexture2DLayered[3];
    int maxTextureCubemapLayered[2];
    int maxSurface1D;
    int maxSurface2D[2];
    int maxSurface3D[3];
    int maxSurface1DLayered[2];
    int maxSurface2DLayered[3];
    int maxSurfaceCubemap;
    int maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int hostNativeAtomicSupported;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables;
    int directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor;
    int accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int sparseCudaArraySupported;
    int hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported;
    int memoryPoolsSupported;
    int gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingCudaArraySupported;
    int ipcEventSupported;
    int clusterLaunch;
    int unifiedFunctionPointers;
    int deviceNumaConfig;
    int deviceNumaId;
    int mpsEnabled;
    int hostNumaId;
    unsigned int gpuPciDeviceID;
    unsigned int gpuPciSubsystemID;
    int hostNumaMultinodeIpcSupported;
    int reserved[56];
};

struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int ptxVersion;
    int binaryVersion;
    int cacheModeCA;
    int maxDynamicSharedSizeBytes;
    int preferredShmemCarveout;
    int clusterDimMustBeSet;
    int requiredClusterWidth;
    int requiredClusterHeight;
    int requiredClusterDepth;
    int clusterSchedulingPolicyPreference;
    int nonPortableClusterSizeAllowed;
    int reserved[16];
};

/* ------------------------------------------------------------------------ */
/* The protocol (see runtime/protocol.py)                                    */
/* ------------------------------------------------------------------------ */

enum {
    OP_HELLO = 0,
    OP_REGISTER_FUNCTION = 1,
    OP_REGISTER_VAR = 2,
    OP_MALLOC = 3,
    OP_FREE = 4,
    OP_MEMCPY = 5,
    OP_MEMSET = 6,
    OP_LAUNCH = 7,
    OP_SYNCHRONIZE = 8,
    OP_UNSUPPORTED = 9,
    OP_MEMCPY_2D = 10,
    OP_RESET = 11,
    OP_FUNC_ATTRIBUTES = 12,
    OP_STREAM_CREATE = 13,
    OP_STREAM_DESTROY = 14,
    OP_EVENT_RECORD = 15,
    OP_STREAM_WAIT_EVENT = 16,
    OP_EVENT_ELAPSED = 17,
    OP_HOST_ACCESS = 18,
    OP_HOST_FLAGS = 19,
    OP_FREE_ASYNC = 20,
    OP_MEM_INFO = 21,
    OP_MODULE_LOAD = 22,
    OP_MODULE_UNLOAD = 23,
    OP_MODULE_GLOBAL = 24,
    OP_COMPILED_CODE = 30,
    OP_POINTER_ATTRIBUTES = 45,
};

#define STOP (-1)
#define HOST_FAULT 1

enum { KIND_DEVICE = 0, KIND_MANAGED = 1, KIND_HOST = 2, KIND_REGISTERED = 3 };
enum { WAIT_DEVICE = 0, WAIT_STREAM = 1, WAIT_EVENT = 2 };
enum { SYNC = 0, ASYNC = 1 };

/* Stream handles with a meaning of their own: stream 0 and cudaStreamLegacy are the legacy default stream,
   cudaStreamPerThread the per-thread one, which the _ptds/_ptsz variants (nvcc --default-stream per-thread)
   use for stream 0. */
#define LEGACY_STREAM ((void *)0)
#define PER_THREAD_STREAM ((void *)2)
#define PER_THREAD(stream) ((stream) == LEGACY_STREAM ? PER_THREAD_STREAM : (stream))
enum { VAR_CONSTANT = 1, VAR_MANAGED = 2 };

/* The virtual device: an sm_75-class GPU (see the README); its compute capability and its opt-in
   shared memory per block follow the architecture the program was built for (from the environment). */
#define WARP_SIZE 32
#define MAX_THREADS_PER_BLOCK 1024
#define MAX_THREADS_PER_SM 1024
#define MAX_BLOCKS_PER_SM 16
#define SHARED_PER_BLOCK (48 << 10)
#define SHARED_PER_SM (64 << 10)       /* up to compute 7.5; later, shared_per_sm() */
#define RESERVED_SHARED_PER_BLOCK 1024 /* from compute 8.0 on (sim/memory/layout.py) */
#define PORTABLE_CLUSTER_BLOCKS 8
#define REGISTERS (64 << 10)
#define CONSTANT_BYTES (64 << 10)
#define SM_COUNT 40
#define SIMULATED_REGISTERS_PER_THREAD 32
#define PITCH_ALIGNMENT 512
#define PERSISTING_L2_BYTES (3 << 20)       /* three quarters of the 4 MiB L2 cache, with --arch sm_80 and later */
#define ACCESS_POLICY_MAX_WINDOW (128 << 20) /* the largest access policy window, with --arch sm_80 and later */
#define CUDA_VERSION_NUMBER 13000
#define PAGE 4096 /* the page size of x86-64 Linux, and of the server's page protection (PAGE_SIZE) */

struct buf {
    uint8_t *data;
    size_t len, cap;
};

static struct {
    int socket;
    uintptr_t global_base, const_base, window_base;
    size_t global_bytes, const_bytes, window_bytes;
    uint8_t *global_alias; /* the same memory as global_base, never protected: this runtime's own view of it */
    int global_fd;         /* the global arena's memory file, kept to map registered host memory onto it */
    unsigned long global_inode;
    int compute_capability;
    size_t shared_optin;
    pthread_mutex_t lock; /* one request at a time on the socket; also guards the tables below */
    cudaError_t sticky;   /* an error that ended a launch: every later call returns it until cudaDeviceReset */
    char exe[PATH_MAX];
} rt = {.socket = -1, .global_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static __thread cudaError_t last_error;
static __thread uint32_t reply_bytes; /* the length of the payload of this thread's last reply */

/* What kernels printed (the LAUNCH replies' payloads), written to stdout when a GPU's runtime would flush its
   printf buffer: at the next launch, a synchronising call, a blocking copy, cudaDeviceReset and exit. Guarded
   by rt.lock. */
static struct buf device_output;

static void die(const char *fmt, const char *detail) {
    fprintf(stderr, "gpurace: ");
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
    fflush(NULL);
    _exit(2);
}

static void put(struct buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->data = realloc(b->data, b->cap);
        if (!b->data) die("%s", "out of host memory");
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static void put_str(struct buf *b, const char *s) {
    uint32_t n = s ? (uint32_t)strlen(s) : 0;
    put_u32(b, n);
    put(b, s, n);
}

/* `array` with room for more than `count` elements of `elem` bytes (`cap` of them). */
static void *grow(void *array, size_t *cap, size_t count, size_t elem) {
    if (count < *cap) return array;
    *cap = *cap ? *cap * 2 : 16;
    array = realloc(array, *cap * elem);
    if (!array) die("%s", "out of host memory");
    return array;
}

/* The call stack of the program where it called this runtime: return addresses, this library's own left out. */
#define MAX_FRAMES 16
struct stack {
    int n;
    void *frames[MAX_FRAMES];
};

static void __attribute__((noinline)) capture(struct stack *s) {
    void *all[MAX_FRAMES + 8];
    Dl_info self, info;
    int n = backtrace(all, MAX_FRAMES + 8);
    dladdr((void *)capture, &self);
    s->n = 0;
    for (int i = 0; i < n && s->n < MAX_FRAMES; i++)
        if (!dladdr(all[i], &info) || info.dli_fbase != self.dli_fbase) s->frames[s->n++] = all[i];
}

/* While a graph's node is replayed, its operation is reported where the node was made (graphs.h). */
static __thread const struct stack *replay_site;

/* While gpurace's libcuda.so.1 makes a runtime call for a driver call, the driver call's name, by which the
   requests name the call (driver_support.h). */
static __thread const char *driver_call;

/* Where the program made a call: the call's name, then each frame of `stack` (captured here when NULL) as a
   link-time address of its object file (what addr2line takes) and that file's path. */
static void put_site(struct buf *b, const char *call, const struct stack *stack) {
    struct stack here;
    if (!stack) stack = replay_site;
    if (!stack) {
        capture(&here);
        stack = &here;
    }
    put_str(b, driver_call ? driver_call : call);
    put_u32(b, (uint32_t)stack->n);
    for (int i = 0; i < stack->n; i++) {
        Dl_info info;
        struct link_map *map = NULL;
        uintptr_t address = (uintptr_t)stack->frames[i];
        if (dladdr1((void *)address, &info, (void **)&map, RTLD_DL_LINKMAP) && map) {
            put_u64(b, address - map->l_addr);
            put_str(b, map->l_name && map->l_name[0] ? map->l_name : rt.exe);
        } else {
            put_u64(b, 0);
            put_str(b, "");
        }
    }
}

static uint32_t get_u32(const uint8_t **p) {
    uint32_t v;
    memcpy(&v, *p, 4);
    *p += 4;
    return v;
}

static uint64_t get_u64(const uint8_t **p) {
    uint64_t v;
    memcpy(&v, *p, 8);
    *p += 8;
    return v;
}

static void send_all(const void *p, size_t n) {
    while (n) {
        ssize_t k = send(rt.socket, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) die("%s", "lost the connection to the gpurace process (did it stop?)");
        p = (const uint8_t *)p + k;
        n -= (size_t)k;
    }
}

static void recv_all(void *p, size_t n) {
    while (n) {
        ssize_t k = recv(rt.socket, p, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) die("%s", "lost the connection to the gpurace process (did it stop?)");
        p = (uint8_t *)p + k;
        n -= (size_t)k;
    }
}

static void protect_registered(uintptr_t start, size_t length, int prot);

/* Send request `op` with payload `req` (freed) and wait for the reply; its payload goes to `reply`
   (malloc'd, the caller frees it) when `reply` is not NULL. Callers hold rt.lock. */
static cudaError_t exchange(uint32_t op, struct buf *req, uint8_t **reply) {
    uint32_t header[2] = {op, (uint32_t)req->len};
    int32_t status;
    uint32_t length, nprotect;
    send_all(header, sizeof header);
    send_all(req->data, req->len);
    free(req->data);
    req->data = NULL;
    recv_all(&status, 4);
    recv_all(&length, 4);
    recv_all(&nprotect, 4);
    uint8_t *payload = malloc(length ? length : 1);
    if (!payload) die("%s", "out of host memory");
    recv_all(payload, length);
    reply_bytes = length;
    for (uint32_t i = 0; i < nprotect; i++) {
        struct __attribute__((packed)) { uint64_t start, length; uint32_t prot; } r;
        recv_all(&r, sizeof r);
        if (r.start < rt.global_base || r.start - rt.global_base + r.length > rt.global_bytes ||
            mprotect((void *)(uintptr_t)r.start, r.length, (int)r.prot) != 0)
            die("%s", "cannot protect the simulated device memory as the gpurace process asked");
        protect_registered(r.start, r.length, (int)r.prot);
    }
    if (status == STOP) { /* gpurace cannot go on with this program and has said why */
        fflush(NULL);
        _exit(2);
    }
    if (reply)
        *reply = payload;
    else
        free(payload);
    return status;
}

static cudaError_t request(uint32_t op, struct buf *req, uint8_t **reply) {
    pthread_mutex_lock(&rt.lock);
    cudaError_t status = exchange(op, req, reply);
    pthread_mutex_unlock(&rt.lock);
    return status;
}

/* A request of `action` with `n` numbers, made by `call`; `*result` (when not NULL) is the number the server gives
   back (the VIRTUAL_MEMORY and GRAPH_MEMORY requests). */
static cudaError_t numbers_request(uint32_t op, uint32_t action, const uint64_t *numbers, int n, const char *call,
                                   uint64_t *result) {
    struct buf req = {0};
    uint8_t *reply = NULL;
    put_u32(&req, action);
    for (int i = 0; i < n; i++) put_u64(&req, numbers[i]);
    put_site(&req, call, NULL);
    cudaError_t status = request(op, &req, &reply);
    if (status == cudaSuccess && result) {
        const uint8_t *p = reply;
        *result = get_u64(&p);
    }
    free(reply);
    return status;
}

static void flush_device_output(void) {
    pthread_mutex_lock(&rt.lock);
    if (device_output.len) {
        fwrite(device_output.data, 1, device_output.len, stdout);
        fflush(stdout);
        device_output.len = 0;
    }
    pthread_mutex_unlock(&rt.lock);
}

__attribute__((destructor)) static void gpurace_runtime_fini(void) { flush_device_output(); }

/* Errors become the thread's last error (cudaGetLastError); launch failures stick to the device. */
static int is_sticky(cudaError_t e) {
    return e == 700 || e == 702 || e == 710 || e == 714 || e == 715 || e == 716 || e == 717 || e == 718 ||
           e == 719;
}

static cudaError_t record(cudaError_t e) {
    if (e != cudaSuccess) {
        last_error = e;
        if (is_sticky(e)) rt.sticky = e;
    }
    return e;
}

static void __attribute__((noreturn)) unsupported(const char *call, const struct stack *stack) {
    struct buf b = {0};
    char through[512];
    if (driver_call) { /* what the runtime cannot do, and the driver call the program made */
        snprintf(through, sizeof through, "%s, in %s", call, driver_call);
        call = through;
        driver_call = NULL;
    }
    put_site(&b, call, stack);
    request(OP_UNSUPPORTED, &b, NULL);
    fflush(NULL);
    _exit(2);
}

/* ------------------------------------------------------------------------ */
/* Start-up: the arenas and the socket                                       */
/* ------------------------------------------------------------------------ */

static uint64_t env_number(const char *name, int base) {
    const char *text = getenv(name);
    char *end;
    if (!text || !*text) die("%s is not set: run this program with `gpurace exec`, which provides this CUDA runtime", name);
    errno = 0;
    unsigned long long v = strtoull(text, &end, base);
    if (errno || *end) die("%s: not a number", name);
    return v;
}

/* Map an arena at its fixed address; `alias` (when not NULL) receives a second mapping, and `keep` the memory
   file (closed otherwise). */
static void map_arena(const char *fd_var, const char *base_var, const char *bytes_var, uintptr_t *base,
                      size_t *bytes, uint8_t **alias, int *keep) {
    int fd = (int)env_number(fd_var, 10);
    *base = (uintptr_t)env_number(base_var, 16);
    *bytes = (size_t)env_number(bytes_var, 10);
    void *p = mmap((void *)*base, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (p == MAP_FAILED || (uintptr_t)p != *base) {
        if (p != MAP_FAILED) munmap(p, *bytes);
        die("cannot map the simulated device memory at its fixed address (%s): the address range is taken in "
            "this process, or the memory limit is too low",
            getenv(base_var));
    }
    if (alias) {
        *alias = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (*alias == MAP_FAILED) die("%s", "cannot map the simulated device memory a second time (memory limit?)");
    }
    if (keep) {
        fcntl(fd, F_SETFD, FD_CLOEXEC); /* programs this one starts are not under gpurace */
        *keep = fd;
    } else {
        close(fd);
    }
}

/* This runtime's own view of `p` (where the server said its bytes are): through the unprotected mapping when it is
   device memory. */
static void *view(const void *p) {
    uintptr_t a = (uintptr_t)p;
    if (a >= rt.global_base && a - rt.global_base < rt.global_bytes) return rt.global_alias + (a - rt.global_base);
    return (void *)p;
}

static uintptr_t registered_device_address(uintptr_t address);

static int in_window(uintptr_t a) { return a >= rt.window_base && a - rt.window_base < rt.window_bytes; }

/* The program's host code touched a protected page of device memory (or of registered host memory, which is
   device memory too): ask the server whether that is a bug (it records the finding) and go on, or crash as
   the access would on a GPU's host. The site's first frame is the faulting instruction itself (its address
   + 1, as frames are return addresses). */
static void on_fault(int sig, siginfo_t *info, void *context) {
    uintptr_t address = (uintptr_t)info->si_addr;
    if ((address < rt.global_base || address - rt.global_base >= rt.global_bytes) && !in_window(address))
        address = registered_device_address(address);
    if (!address) {
        signal(sig, SIG_DFL); /* not ours: the program's own crash, which happens again on return */
        return;
    }
    ucontext_t *uc = context;
    int write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    void *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
    struct stack site, all;
    capture(&all);
    site.n = 0;
    site.frames[site.n++] = (uint8_t *)pc + 1;
    int i = 0;
    while (i < all.n && all.frames[i] != pc) i++;
    for (i = i < all.n ? i + 1 : 0; i < all.n && site.n < MAX_FRAMES; i++) site.frames[site.n++] = all.frames[i];
    struct buf b = {0};
    put_u64(&b, address);
    put_u32(&b, (uint32_t)write);
    put_site(&b, write ? "write" : "read", &site);
    if (request(OP_HOST_ACCESS, &b, NULL) == HOST_FAULT) signal(sig, SIG_DFL);
}

static void start(void) {
    if (readlink("/proc/self/exe", rt.exe, sizeof rt.exe - 1) < 0) rt.exe[0] = 0;
    rt.socket = (int)env_number("GPURACE_RUNTIME_FD", 10);
    map_arena("GPURACE_GLOBAL_FD", "GPURACE_GLOBAL_BASE", "GPURACE_GLOBAL_BYTES", &rt.global_base, &rt.global_bytes,
              &rt.global_alias, &rt.global_fd);
    map_arena("GPURACE_CONST_FD", "GPURACE_CONST_BASE", "GPURACE_CONST_BYTES", &rt.const_base, &rt.const_bytes, NULL,
              NULL);
    /* The device-only window: address space only, so that nothing of the program's is ever there and its host
       code's accesses there fault (on_fault). */
    rt.window_base = (uintptr_t)env_number("GPURACE_WINDOW_BASE", 16);
    rt.window_bytes = (size_t)env_number("GPURACE_WINDOW_BYTES", 10);
    void *window = mmap((void *)rt.window_base, rt.window_bytes, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (window != (void *)rt.window_base)
        die("cannot reserve the simulated device's address space at its fixed address (%s): the address range is "
            "taken in this process, or the address-space limit (ulimit -v) is too low",
            getenv("GPURACE_WINDOW_BASE"));
    struct stat file;
    if (fstat(rt.global_fd, &file) != 0) die("%s", "cannot inspect the simulated device memory");
    rt.global_inode = (unsigned long)file.st_ino;
    struct sigaction action = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER};
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, NULL);
    rt.compute_capability = (int)env_number("GPURACE_DEVICE_CC", 10);
    rt.shared_optin = (size_t)env_number("GPURACE_DEVICE_SHARED_OPTIN", 10);
    /* Programs this one starts are not under gpurace: they must not inherit the connection. */
    fcntl(rt.socket, F_SETFD, FD_CLOEXEC);
    static const char *const vars[] = {"GPURACE_RUNTIME_FD", "GPURACE_GLOBAL_FD", "GPURACE_GLOBAL_BASE",
                                       "GPURACE_GLOBAL_BYTES", "GPURACE_CONST_FD", "GPURACE_CONST_BASE",
                                       "GPURACE_CONST_BYTES", "GPURACE_WINDOW_BASE", "GPURACE_WINDOW_BYTES",
                                       "GPURACE_DEVICE_CC", "GPURACE_DEVICE_SHARED_OPTIN"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
    struct buf b = {0};
    put_u32(&b, (uint32_t)getpid());
    request(OP_HELLO, &b, NULL);
}

__attribute__((constructor)) static void gpurace_runtime_init(void) { start(); }

static int in_arena(const void *p) {
    uintptr_t a = (uintptr_t)p;
    return (a >= rt.global_base && a - rt.global_base < rt.global_bytes) ||
           (a >= rt.const_base && a - rt.const_base < rt.const_bytes) || in_window(a);
}

/* ------------------------------------------------------------------------ */
/* Registered host memory                                                    */
/* ------------------------------------------------------------------------ */

/* cudaHostRegister maps memory the program allocated itself (malloc, the stack, a static array) for the
 * device. Kernels reach only the arenas, so the server gives the range a block of the global arena that
 * starts at the same offset in its page (heap.py), and cudaHostGetDevicePointer returns its address (the
 * virtual device reports cudaDevAttrCanUseHostPointerForRegisteredMem 0: the host pointer is not a device
 * pointer). The program's memory then *is* the block's, so that nothing goes stale:
 *
 * - the pages wholly inside the range are remapped onto the block's pages of the arena's memory file, after
 *   their bytes were copied there: the program's pointer and the device pointer are one memory, never
 *   copied again. The protection the server gives the block's pages is given to these pages too, so the
 *   host code's accesses there are checked against pending work as on page-locked memory (on_fault).
 * - the range's bytes in its first and last page share those pages with other data of the program (malloc's
 *   bookkeeping, other variables, another registration), which must stay where it is: they are kept in step
 *   by copying, around every call that reads or writes device memory (sync_edges), each byte that changed
 *   since the last copy towards the side that did not change it. The device sees what the host wrote before
 *   the call, and the host sees what the call wrote when it returns; host accesses to these bytes are not
 *   checked against pending work (fewer races seen, never false ones).
 *
 * cudaHostUnregister (and cudaDeviceReset, which ends every registration) gives the program private memory
 * again, holding the block's bytes, before the server frees the block. Memory that is shared with another
 * mapping (MAP_SHARED) cannot be remapped without breaking that sharing, so registering it stops the program.
 * Guarded by rt.lock. */
struct registration {
    uintptr_t host, device; /* the start of the range in the program, and on the device */
    size_t size;
    uintptr_t inner, inner_end; /* the pages wholly inside the range (program addresses); both host + size when none */
    uint8_t *shadow;            /* the bytes outside them, as last copied: [host, inner), then [inner_end, host + size) */
};

static struct registration *registrations;
static size_t nregistrations, registrations_cap;

static uintptr_t page_down(uintptr_t a) { return a & ~(uintptr_t)(PAGE - 1); }
static uintptr_t page_up(uintptr_t a) { return page_down(a + PAGE - 1); }

/* The live registration whose range holds [p, p + n), or NULL. */
static struct registration *registration_of(uintptr_t p, size_t n) {
    for (size_t i = 0; i < nregistrations; i++) {
        struct registration *r = &registrations[i];
        if (p >= r->host && p - r->host < r->size && n <= r->size - (p - r->host)) return r;
    }
    return NULL;
}

/* `p` as the device sees it: the device address of registered memory when [p, p + n) is in one registration
   (so that a copy to or from it is a copy of page-locked memory, checked and ordered as one), else `p`. */
static void *device_side(const void *p, size_t n) {
    pthread_mutex_lock(&rt.lock);
    struct registration *r = registration_of((uintptr_t)p, n ? n : 1);
    uintptr_t device = r ? r->device + ((uintptr_t)p - r->host) : (uintptr_t)p;
    pthread_mutex_unlock(&rt.lock);
    return (void *)device;
}

/* The device address of a byte of the pages a registration shares with the arena (the only program pages
   this runtime protects), or 0. Called by on_fault. */
static uintptr_t registered_device_address(uintptr_t address) {
    uintptr_t device = 0;
    pthread_mutex_lock(&rt.lock);
    for (size_t i = 0; i < nregistrations && !device; i++) {
        struct registration *r = &registrations[i];
        if (address >= r->inner && address < r->inner_end) device = r->device + (address - r->host);
    }
    pthread_mutex_unlock(&rt.lock);
    return device;
}

/* The server protected [start, start + length) of the arena: the program's pages that are the same memory
   get the same protection. A failure means the program unmapped them (it freed the memory without
   unregistering it), which leaves nothing to protect. Callers hold rt.lock. */
static void protect_registered(uintptr_t start, size_t length, int prot) {
    for (size_t i = 0; i < nregistrations; i++) {
        struct registration *r = &registrations[i];
        uintptr_t first = r->device + (r->inner - r->host), last = first + (r->inner_end - r->inner);
        uintptr_t lo = start > first ? start : first, hi = start + length < last ? start + length : last;
        if (lo < hi) mprotect((void *)(r->inner + (lo - first)), hi - lo, prot);
    }
}

/* Whether [p, p + n) is mapped in this process (msync fails on pages that are not): a registration's memory
   may have been freed and unmapped by the program, which may stop using it without unregistering it. */
static int mapped(uintptr_t p, size_t n) {
    return n == 0 || msync((void *)page_down(p), p + n - page_down(p), MS_ASYNC) == 0;
}

/* Bring `n` bytes kept in two places in step: each byte the host changed since `shadow` was taken goes to the
   device, each byte the device changed goes to the host. */
static void sync_span(uint8_t *host, uint8_t *device, uint8_t *shadow, size_t n) {
    if (!mapped((uintptr_t)host, n) || (!memcmp(host, shadow, n) && !memcmp(device, shadow, n))) return;
    for (size_t i = 0; i < n; i++) {
        if (host[i] != shadow[i])
            device[i] = shadow[i] = host[i];
        else if (device[i] != shadow[i])
            host[i] = shadow[i] = device[i];
    }
}

/* Keep the copied bytes of every registration in step (see above). Callers hold rt.lock. */
static void sync_edges_locked(void) {
    for (size_t i = 0; i < nregistrations; i++) {
        struct registration *r = &registrations[i];
        size_t head = r->inner - r->host, tail = r->host + r->size - r->inner_end;
        sync_span((uint8_t *)r->host, view((void *)r->device), r->shadow, head);
        sync_span((uint8_t *)r->inner_end, view((void *)(r->device + (r->inner_end - r->host))), r->shadow + head, tail);
    }
}

/* Around every call that reads or writes device memory. */
static void sync_edges(void) {
    pthread_mutex_lock(&rt.lock);
    sync_edges_locked();
    pthread_mutex_unlock(&rt.lock);
}

/* One mapping of this process, as /proc/self/maps lists it. */
struct mapping {
    uintptr_t lo, hi;
    char perms[5];
    unsigned long long offset;
    unsigned long inode;
};

/* The mappings of this process that overlap [start, end), in address order, into `out` (malloc'd); their count. */
static size_t mappings(uintptr_t start, uintptr_t end, struct mapping **out) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char *line = NULL;
    size_t cap = 0, n = 0, room = 0;
    *out = NULL;
    if (!maps) die("%s", "cannot read /proc/self/maps, which registering host memory needs");
    while (getline(&line, &cap, maps) > 0) {
        struct mapping m;
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx %4s %llx %*s %lu", &lo, &hi, m.perms, &m.offset, &m.inode) != 5) continue;
        if (hi <= start || lo >= end) continue;
        m.lo = lo, m.hi = hi;
        *out = grow(*out, &room, n, sizeof m);
        (*out)[n++] = m;
    }
    free(line);
    fclose(maps);
    return n;
}

enum { HOST_PRIVATE, HOST_SHARED, HOST_UNUSABLE };

/* What the pages holding [host, host + size) are: private memory the program may read and write throughout
   (which can be registered), memory shared with another mapping, or memory with holes or that is read-only
   (which NVIDIA's runtime refuses as an invalid value). Pages that are already a registration's count as
   private: the range overlaps that registration, which the server refuses as NVIDIA's runtime does. */
static int host_pages_kind(uintptr_t host, size_t size) {
    struct mapping *m;
    uintptr_t at = page_down(host), end = page_up(host + size);
    size_t n = mappings(at, end, &m);
    int kind = HOST_PRIVATE;
    for (size_t i = 0; i < n && kind == HOST_PRIVATE; i++) {
        int registered = m[i].perms[3] == 's' && m[i].inode == rt.global_inode;
        if (m[i].lo > at || (!registered && (m[i].perms[0] != 'r' || m[i].perms[1] != 'w')))
            kind = HOST_UNUSABLE;
        else if (!registered && m[i].perms[3] == 's')
            kind = HOST_SHARED;
        at = m[i].hi;
    }
    free(m);
    return kind == HOST_PRIVATE && at < end ? HOST_UNUSABLE : kind;
}

/* Make the program's [host, host + size) the memory of its block at `device` (see above). Callers hold rt.lock. */
static void add_registration(uintptr_t host, size_t size, uintptr_t device) {
    struct registration r = {.host = host, .device = device, .size = size};
    r.inner = page_up(host), r.inner_end = page_down(host + size);
    if (r.inner >= r.inner_end) r.inner = r.inner_end = host + size;
    size_t head = r.inner - host, tail = host + size - r.inner_end;
    r.shadow = malloc(head + tail + 1);
    if (!r.shadow) die("%s", "out of host memory");
    memcpy(r.shadow, (void *)host, head);
    memcpy(r.shadow + head, (void *)r.inner_end, tail);
    memcpy(view((void *)device), (void *)host, size);
    if (r.inner < r.inner_end &&
        mmap((void *)r.inner, r.inner_end - r.inner, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, rt.global_fd,
             (off_t)(device + head - rt.global_base)) == MAP_FAILED)
        die("%s", "cannot map registered host memory onto the simulated device memory (memory limit?)");
    registrations = grow(registrations, &registrations_cap, nregistrations, sizeof r);
    registrations[nregistrations++] = r;
}

/* Give the program private memory again where registration `r` shares the arena's, holding its bytes, and
   forget `r`. Only the pages that are still the arena's are replaced: the program may have unmapped the
   memory (freed it), and something else may be there now. Callers hold rt.lock. */
static void end_registration(struct registration *r) {
    struct mapping *m = NULL;
    size_t n = r->inner < r->inner_end ? mappings(r->inner, r->inner_end, &m) : 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t lo = m[i].lo > r->inner ? m[i].lo : r->inner, hi = m[i].hi < r->inner_end ? m[i].hi : r->inner_end;
        uintptr_t device = r->device + (lo - r->host);
        int ours = m[i].perms[3] == 's' && m[i].inode == rt.global_inode &&
                   m[i].offset + (lo - m[i].lo) == device - rt.global_base;
        if (!ours) continue;
        void *copy = mmap(NULL, hi - lo, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (copy == MAP_FAILED) die("%s", "out of host memory");
        memcpy(copy, view((void *)device), hi - lo);
        if (mremap(copy, hi - lo, hi - lo, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)lo) == MAP_FAILED)
            die("%s", "cannot give unregistered host memory back to the program");
    }
    free(m);
    free(r->shadow);
    *r = registrations[--nregistrations];
}

/* ------------------------------------------------------------------------ */
/* Registered kernels and device variables                                   */
/* ------------------------------------------------------------------------ */

struct kernel {
    const void *host_fun;
    char *name;
    int known; /* the server found its device code */
    uint32_t nparams;
    uint32_t *offsets, *sizes;
};

struct symbol {
    const void *host_var;
    uint64_t address; /* 0: the server does not know it */
    size_t size;
};

static struct kernel *kernels;
static size_t nkernels, kernels_cap;
static struct symbol *symbols;
static size_t nsymbols, symbols_cap;

static struct kernel *find_kernel(const void *host_fun) {
    for (size_t i = 0; i < nkernels; i++)
        if (kernels[i].host_fun == host_fun) return &kernels[i];
    return NULL;
}

static struct symbol *find_symbol(const void *host_var) {
    for (size_t i = 0; i < nsymbols; i++)
        if (symbols[i].host_var == host_var) return &symbols[i];
    return NULL;
}

EXPORT void **__cudaRegisterFatBinary(void *fatCubin) {
    (void)fatCubin;
    /* A unique handle per translation unit: the server tells modules apart by it. */
    void **handle = calloc(1, sizeof(void *));
    if (!handle) die("%s", "out of host memory");
    return handle;
}

EXPORT void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }

EXPORT void __cudaUnregisterFatBinary(void **handle) { (void)handle; }

EXPORT char __cudaInitModule(void **handle) {
    (void)handle;
    return 1;
}

/* Kernel `deviceName` of module `handle` (a translation unit, or a module loaded through the driver), launched
   as `hostFun`; the server's answer (cudaErrorInvalidDeviceFunction: it has no device code for it). */
static cudaError_t register_function(const void *handle, const void *hostFun, const char *deviceName) {
    struct buf b = {0};
    uint8_t *reply = NULL;
    put_u64(&b, (uintptr_t)handle);
    put_u64(&b, (uintptr_t)hostFun);
    put_str(&b, deviceName);
    pthread_mutex_lock(&rt.lock);
    cudaError_t status = exchange(OP_REGISTER_FUNCTION, &b, &reply);
    kernels = grow(kernels, &kernels_cap, nkernels, sizeof *kernels);
    struct kernel *k = &kernels[nkernels++];
    memset(k, 0, sizeof *k);
    k->host_fun = hostFun;
    k->name = strdup(deviceName);
    k->known = status == cudaSuccess;
    if (k->known) {
        const uint8_t *p = reply;
        k->nparams = get_u32(&p);
        k->offsets = calloc(k->nparams + 1, sizeof(uint32_t));
        k->sizes = calloc(k->nparams + 1, sizeof(uint32_t));
        for (uint32_t i = 0; i < k->nparams; i++) {
            k->offsets[i] = get_u32(&p);
            k->sizes[i] = get_u32(&p);
        }
    }
    pthread_mutex_unlock(&rt.lock);
    free(reply);
    return status;
}

EXPORT void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
                                   int thread_limit, void *tid, void *bid, dim3 *bDim, dim3 *gDim, int *wSize) {
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    register_function(handle, hostFun, deviceName);
}

static uint64_t register_var(void **handle, const void *host_var, const char *name, size_t size, uint32_t flags) {
    struct buf b = {0};
    uint8_t *reply = NULL;
    uint64_t address = 0;
    put_u64(&b, (uintptr_t)handle);
    put_u64(&b, (uintptr_t)host_var);
    put_u64(&b, size);
    put_u32(&b, flags);
    put_str(&b, name);
    pthread_mutex_lock(&rt.lock);
    if (exchange(OP_REGISTER_VAR, &b, &reply) == cudaSuccess) {
        const uint8_t *p = reply;
        address = get_u64(&p);
    }
    symbols = grow(symbols, &symbols_cap, nsymbols, sizeof *symbols);
    symbols[nsymbols++] = (struct symbol){host_var, address, size};
    pthread_mutex_unlock(&rt.lock);
    free(reply);
    return address;
}

EXPORT void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                              size_t size, int constant, int global) {
    (void)deviceAddress, (void)ext, (void)global;
    register_var(handle, hostVar, deviceName, size, constant ? VAR_CONSTANT : 0);
}

EXPORT void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress, char *deviceAddress,
                                     const char *deviceName, int ext, size_t size, int constant, int global) {
    (void)deviceAddress, (void)ext, (void)global;
    uint64_t address = register_var(handle, hostVarPtrAddress, deviceName, size, VAR_MANAGED | (constant ? VAR_CONSTANT : 0));
    /* Host code reaches a __managed__ variable through this pointer (nvcc's generated code). */
    *hostVarPtrAddress = (void *)(uintptr_t)address;
}

/* ------------------------------------------------------------------------ */
/* Stream capture hooks (graphs.h): work issued to a capturing stream becomes a node of its graph instead of
   running. Each capture_* function answers NOT_CAPTURED when the call goes on as usual, else its result;
   while no capture is in progress (`captures` is 0) the hooks cost nothing. */
/* ------------------------------------------------------------------------ */

#define NOT_CAPTURED (-2)
static int captures;
#define CAPTURE_HOOK(hook)                                        \
    if (__atomic_load_n(&captures, __ATOMIC_ACQUIRE)) {           \
        cudaError_t captured_ = (hook);                           \
        if (captured_ != NOT_CAPTURED) return record(captured_);  \
    }
static cudaError_t capture_launch(const void *func, dim3 grid, dim3 block, void **args, size_t shared, void *stream,
                                  const struct stack *site);
static cudaError_t capture_copy(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                                int kind, void *stream, int async, const char *call);
static cudaError_t capture_fill(void *dst, size_t pitch, int value, size_t width, size_t height, void *stream,
                                int async, const char *call);
static cudaError_t capture_host_function(void *stream, void (*fn)(void *), void *data);
static cudaError_t capture_event_record(void *event, void *stream);
static cudaError_t capture_stream_wait(void *stream, void *event, unsigned int flags);
static cudaError_t capture_external_record(void *event, void *stream, unsigned int flags);
static cudaError_t capture_wait_for(uint32_t what, const void *handle);
static cudaError_t capture_unsafe_call(void);
static void note_stream_flags(void *stream, unsigned int flags);
static int stream_flags(const void *stream, unsigned int *flags);
static void forget_stream_attributes(void *stream);
static void forget_pool_allocation(uintptr_t address);

/* ------------------------------------------------------------------------ */
/* Launches                                                                  */
/* ------------------------------------------------------------------------ */

struct call_config {
    dim3 grid, block;
    size_t shared;
    void *stream;
    struct stack site;
};

/* `kernel<<<...>>>(args)` is __cudaPushCallConfiguration at the call site, then the kernel's stub pops the
   configuration and launches; the site is the push's call stack, kept here until the launch. */
#define MAX_PENDING 16
static __thread struct call_config pending[MAX_PENDING];
static __thread int npending;
static __thread struct stack launch_site;

EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream) {
    if (npending == MAX_PENDING) return 1;
    struct call_config *c = &pending[npending++];
    c->grid = gridDim, c->block = blockDim, c->shared = sharedMem, c->stream = stream;
    capture(&c->site);
    return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream) {
    if (npending == 0) return cudaErrorInvalidValue;
    struct call_config *c = &pending[--npending];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shared;
    *(void **)stream = c->stream;
    launch_site = c->site;
    return cudaSuccess;
}

EXPORT cudaError_t __cudaGetKernel(void **kernel, const void *fun) {
    *kernel = (void *)fun;
    return cudaSuccess;
}

/* How a launch runs (the LAUNCH request's flags, protocol.py LaunchFlag): LAUNCH_CLUSTER says the cluster's
   dimensions follow the flags. */
enum { LAUNCH_COOPERATIVE = 1, LAUNCH_CLUSTER = 2 };

static cudaError_t launch_in_clusters(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
                                      void *stream, unsigned flags, dim3 cluster) {
    struct stack site = launch_site;
    if (site.n == 0) capture(&site); /* cudaLaunchKernel called by the program itself */
    launch_site.n = 0;
    if ((flags & LAUNCH_COOPERATIVE) && __atomic_load_n(&captures, __ATOMIC_ACQUIRE))
        unsupported("a cooperative launch while a stream capture is in progress", &site);
    if ((flags & LAUNCH_CLUSTER) && __atomic_load_n(&captures, __ATOMIC_ACQUIRE))
        unsupported("a launch with cluster dimensions while a stream capture is in progress", &site);
    CAPTURE_HOOK(capture_launch(func, grid, block, args, shared, stream, &site));
    if (rt.sticky) return rt.sticky;
    pthread_mutex_lock(&rt.lock);
    struct kernel *k = find_kernel(func);
    pthread_mutex_unlock(&rt.lock);
    if (!k) return record(cudaErrorInvalidDeviceFunction);
    if (!k->known) {
        char call[512];
        snprintf(call, sizeof call,
                 "launch of kernel %s, whose device code gpurace does not have (no PTX for it in the sources it "
                 "compiled or in the program's fatbinary)",
                 k->name);
        unsupported(call, &site);
    }
    size_t nbytes = 0;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->offsets[i] + k->sizes[i] > nbytes) nbytes = k->offsets[i] + k->sizes[i];
    struct buf b = {0};
    put_u64(&b, (uintptr_t)func);
    put_u32(&b, grid.x), put_u32(&b, grid.y), put_u32(&b, grid.z);
    put_u32(&b, block.x), put_u32(&b, block.y), put_u32(&b, block.z);
    put_u64(&b, shared);
    put_u64(&b, (uintptr_t)stream);
    put_u32(&b, flags);
    if (flags & LAUNCH_CLUSTER) put_u32(&b, cluster.x), put_u32(&b, cluster.y), put_u32(&b, cluster.z);
    put_site(&b, "kernel launch", &site);
    put_u32(&b, (uint32_t)nbytes);
    size_t start = b.len;
    for (size_t i = 0; i < nbytes; i++) put(&b, "", 1);
    for (uint32_t i = 0; i < k->nparams; i++) memcpy(b.data + start + k->offsets[i], args[i], k->sizes[i]);
    flush_device_output();
    uint8_t *printed = NULL;
    pthread_mutex_lock(&rt.lock);
    sync_edges_locked();
    cudaError_t status = exchange(OP_LAUNCH, &b, &printed);
    sync_edges_locked();
    put(&device_output, printed, reply_bytes);
    pthread_mutex_unlock(&rt.lock);
    free(printed);
    return record(status);
}

static cudaError_t launch_with(const void *func, dim3 grid, dim3 block, void **args, size_t shared, void *stream,
                               unsigned flags) {
    dim3 none = {0, 0, 0};
    return launch_in_clusters(func, grid, block, args, shared, stream, flags, none);
}

static cudaError_t launch(const void *func, dim3 grid, dim3 block, void **args, size_t shared, void *stream) {
    return launch_with(func, grid, block, args, shared, stream, 0);
}

EXPORT cudaError_t __cudaLaunchKernel(void *kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                      void *stream) {
    return launch(kernel, gridDim, blockDim, args, sharedMem, stream);
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                    void *stream) {
    return launch(func, gridDim, blockDim, args, sharedMem, stream);
}

/* Every block of a cooperative launch must be resident at once: the server answers
   cudaErrorCooperativeLaunchTooLarge past the occupancy of cudaOccupancyMaxActiveBlocksPerMultiprocessor times
   the multiprocessors (sim/cooperative.py), and gives the launch the grid workspace grid.sync() needs. */
EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                               size_t sharedMem, void *stream) {
    return launch_with(func, gridDim, blockDim, args, sharedMem, stream, LAUNCH_COOPERATIVE);
}

/* cudaLaunchConfig_t and cudaLaunchAttribute as driver_types.h lays them out (CUDA 13). */
struct launch_attribute {
    int id;
    char pad[4];
    union {
        char bytes[64];
        int value; /* cooperative, priority, programmaticStreamSerializationAllowed, ... */
        dim3 cluster; /* clusterDim */
    } val;
};

struct launch_config {
    dim3 grid, block;
    size_t shared;
    void *stream;
    struct launch_attribute *attrs;
    unsigned int nattrs;
};

/* cudaLaunchKernelEx's attributes: cooperative and cluster dimensions are honoured (the latter into `cluster`);
   hints that change nothing a simulator shows are accepted; an attribute whose semantics gpurace does not model
   stops the program, by name. */
static unsigned launch_flags_of(const struct launch_config *config, const char *call, dim3 *cluster) {
    unsigned flags = 0;
    for (unsigned int i = 0; i < config->nattrs; i++) {
        const struct launch_attribute *a = &config->attrs[i];
        const char *refused = NULL;
        char unknown[64];
        switch (a->id) {
        case 0: break;  /* cudaLaunchAttributeIgnore */
        case 1: break;  /* cudaLaunchAttributeAccessPolicyWindow: an L2 cache hint */
        case 2: if (a->val.value) flags |= LAUNCH_COOPERATIVE; break;
        case 3: break;  /* cudaLaunchAttributeSynchronizationPolicy: how the host waits */
        case 5: break;  /* cudaLaunchAttributeClusterSchedulingPolicyPreference: a hint */
        case 6: if (a->val.value) refused = "cudaLaunchAttributeProgrammaticStreamSerialization"; break;
        case 8: break;  /* cudaLaunchAttributePriority: streams run in order of issue here */
        case 14: break; /* cudaLaunchAttributePreferredSharedMemoryCarveout: a hint */
        case 16: break; /* cudaLaunchAttributeNvlinkUtilCentricScheduling: a hint */
        case 4: flags |= LAUNCH_CLUSTER, *cluster = a->val.cluster; break;
        case 7: refused = "cudaLaunchAttributeProgrammaticEvent"; break;
        case 9: refused = "cudaLaunchAttributeMemSyncDomainMap"; break;
        case 10: refused = "cudaLaunchAttributeMemSyncDomain"; break;
        case 11: refused = "cudaLaunchAttributePreferredClusterDimension"; break;
        case 12: refused = "cudaLaunchAttributeLaunchCompletionEvent"; break;
        case 13: refused = "cudaLaunchAttributeDeviceUpdatableKernelNode"; break;
        default:
            snprintf(unknown, sizeof unknown, "%d (not one gpurace knows)", a->id);
            refused = unknown;
            break;
        }
        if (refused) {
            char what[256];
            struct stack site;
            capture(&site);
            snprintf(what, sizeof what, "%s with the launch attribute %s", call, refused);
            unsupported(what, &site);
        }
    }
    return flags;
}

EXPORT cudaError_t cudaLaunchKernelExC(const struct launch_config *config, const void *func, void **args) {
    if (!config || (config->nattrs && !config->attrs)) return record(cudaErrorInvalidValue);
    dim3 cluster = {0, 0, 0};
    unsigned flags = launch_flags_of(config, "cudaLaunchKernelEx", &cluster);
    return launch_in_clusters(func, config->grid, config->block, args, config->shared, config->stream, flags, cluster);
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

static cudaError_t allocate(void **ptr, size_t size, uint32_t kind, unsigned int flags, const char *call) {
    if (!ptr) return record(cudaErrorInvalidValue);
    if (rt.sticky) return rt.sticky;
    CAPTURE_HOOK(capture_unsafe_call());
    *ptr = NULL;
    if (size == 0) return cudaSuccess;
    struct buf b = {0};
    uint8_t *reply = NULL;
    put_u64(&b, size);
    put_u32(&b, kind);
    put_u32(&b, flags);
    put_u64(&b, 0);
    put_site(&b, call, NULL);
    cudaError_t status = request(OP_MALLOC, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        *ptr = (void *)(uintptr_t)get_u64(&p);
    }
    free(reply);
    return record(status);
}

EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size) {
    return allocate(devPtr, size, KIND_DEVICE, 0, "cudaMalloc");
}

EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags) {
    (void)flags;
    return allocate(devPtr, size, KIND_MANAGED, 0, "cudaMallocManaged");
}

EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size) {
    return allocate(ptr, size, KIND_HOST, 0, "cudaMallocHost");
}

EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) {
    return allocate(pHost, size, KIND_HOST, flags, "cudaHostAlloc");
}

static cudaError_t release(void *ptr, uint32_t kind, const char *call) {
    if (rt.sticky) return rt.sticky;
    CAPTURE_HOOK(capture_unsafe_call());
    if (!ptr) return cudaSuccess;
    struct buf b = {0};
    put_u64(&b, (uintptr_t)ptr);
    put_u32(&b, kind);
    put_site(&b, call, NULL);
    cudaError_t status = record(request(OP_FREE, &b, NULL));
    if (status == cudaSuccess && kind == KIND_DEVICE) forget_pool_allocation((uintptr_t)ptr);
    return status;
}

/* Rows of `width` bytes padded to a multiple of the virtual device's texture pitch alignment (512 bytes, as
   GPUs pad them), `height` of them in one allocation. */
EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height) {
    if (!devPtr || !pitch) return record(cudaErrorInvalidValue);
    size_t padded = (width + PITCH_ALIGNMENT - 1) / PITCH_ALIGNMENT * PITCH_ALIGNMENT;
    if (height && padded > SIZE_MAX / height) return record(cudaErrorMemoryAllocation);
    cudaError_t status = allocate(devPtr, padded * height, KIND_DEVICE, 0, "cudaMallocPitch");
    if (status == cudaSuccess) *pitch = padded;
    return status;
}

EXPORT cudaError_t cudaFree(void *devPtr) { return release(devPtr, KIND_DEVICE, "cudaFree"); }

EXPORT cudaError_t cudaFreeHost(void *ptr) { return release(ptr, KIND_HOST, "cudaFreeHost"); }

/* Unified addressing: memory cudaHostAlloc allocated has one address; registered memory has the address of its
   block (see "Registered host memory"). */
EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags) {
    if (!pDevice || flags != 0) return record(cudaErrorInvalidValue);
    void *device = device_side(pHost, 1);
    if (!in_arena(device)) return record(cudaErrorInvalidValue);
    *pDevice = device;
    return cudaSuccess;
}

/* What memory `ptr` is in: the server's answer for device memory and the arena (devicePointer its address, the
   host's for host-visible memory), host memory the program registered, or host memory it did not
   (cudaMemoryTypeUnregistered, device cudaInvalidDeviceId, as CUDA 11 and later answer). */
struct cudaPointerAttributes { int type, device; void *devicePointer, *hostPointer; };

EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr) {
    if (!attributes) return record(cudaErrorInvalidValue);
    struct buf b = {0};
    uint8_t *reply = NULL;
    put_u64(&b, (uintptr_t)device_side(ptr, 1));
    cudaError_t status = request(OP_POINTER_ATTRIBUTES, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        int type = (int)get_u32(&p);
        uint64_t device = get_u64(&p), host = get_u64(&p);
        *attributes = (struct cudaPointerAttributes){type, type ? 0 : -2, (void *)(uintptr_t)device, (void *)(uintptr_t)host};
    }
    free(reply);
    return record(status);
}

/* The flags of page-locked memory (cudaHostAlloc's or cudaHostRegister's), mapped ones with unified addressing. */
EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost) {
    if (!pFlags) return record(cudaErrorInvalidValue);
    struct buf b = {0};
    uint8_t *reply = NULL;
    put_u64(&b, (uintptr_t)device_side(pHost, 1));
    cudaError_t status = request(OP_HOST_FLAGS, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        *pFlags = get_u32(&p);
    }
    free(reply);
    return record(status);
}

/* Page-locks the program's [ptr, ptr + size) and maps it for the device (see "Registered host memory"): the
   flags that mean something here are accepted (with unified addressing, all such memory is mapped and
   portable); I/O memory and read-only registrations, which gpurace does not model, stop the program. */
EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
    uintptr_t host = (uintptr_t)ptr;
    if (flags & ~(unsigned)(cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                            cudaHostRegisterReadOnly))
        return record(cudaErrorInvalidValue);
    if (flags & cudaHostRegisterIoMemory) unsupported("cudaHostRegister with cudaHostRegisterIoMemory", NULL);
    if (flags & cudaHostRegisterReadOnly) unsupported("cudaHostRegister with cudaHostRegisterReadOnly", NULL);
    if (!ptr || size == 0 || host + size < host) return record(cudaErrorInvalidValue);
    if (rt.sticky) return rt.sticky;
    if (!in_arena(ptr)) { /* memory in the arenas is the server's to judge */
        int kind = host_pages_kind(host, size);
        if (kind == HOST_SHARED) unsupported("cudaHostRegister of memory shared with another mapping (MAP_SHARED)", NULL);
        if (kind == HOST_UNUSABLE) return record(cudaErrorInvalidValue);
    }
    struct buf b = {0};
    uint8_t *reply = NULL;
    put_u64(&b, size);
    put_u32(&b, KIND_REGISTERED);
    put_u32(&b, flags);
    put_u64(&b, host);
    put_site(&b, "cudaHostRegister", NULL);
    pthread_mutex_lock(&rt.lock);
    cudaError_t status = exchange(OP_MALLOC, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        add_registration(host, size, (uintptr_t)get_u64(&p));
    }
    pthread_mutex_unlock(&rt.lock);
    free(reply);
    return record(status);
}

/* Ends the registration that starts at `ptr`: the program's memory is its own again, holding what the device
   left there. The server judges every other pointer. */
EXPORT cudaError_t cudaHostUnregister(void *ptr) {
    if (rt.sticky) return rt.sticky;
    if (!ptr) return record(cudaErrorInvalidValue);
    struct buf b = {0};
    put_u64(&b, (uintptr_t)ptr);
    put_u32(&b, KIND_REGISTERED);
    put_site(&b, "cudaHostUnregister", NULL);
    pthread_mutex_lock(&rt.lock);
    sync_edges_locked(); /* another thread's call may have left the device's last writes to copy */
    struct registration *r = registration_of((uintptr_t)ptr, 1);
    if (r && r->host == (uintptr_t)ptr) end_registration(r);
    cudaError_t status = exchange(OP_FREE, &b, NULL);
    pthread_mutex_unlock(&rt.lock);
    return record(status);
}

static cudaError_t copy(void *dst, const void *src, size_t count, int kind, void *stream, int async,
                        const char *call) {
    if (rt.sticky) return rt.sticky;
    CAPTURE_HOOK(capture_copy(dst, count, src, count, count, 1, kind, stream, async, call));
    if (count == 0) return cudaSuccess;
    dst = device_side(dst, count), src = device_side(src, count);
    struct buf b = {0};
    put_u64(&b, (uintptr_t)dst);
    put_u64(&b, (uintptr_t)src);
    put_u64(&b, count);
    put_u32(&b, (uint32_t)kind);
    put_u64(&b, (uintptr_t)stream);
    put_u32(&b, (uint32_t)async);
    put_site(&b, call, NULL);
    if (async == SYNC) flush_device_output();
    sync_edges();
    uint8_t *reply = NULL;
    cudaError_t status = request(OP_MEMCPY, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        uint8_t *to = (uint8_t *)(uintptr_t)get_u64(&p);
        memmove(view(to), view((uint8_t *)(uintptr_t)get_u64(&p)), count);
    }
    free(reply);
    sync_edges();
    return record(status);
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, int kind) {
    return copy(dst, src, count, kind, LEGACY_STREAM, SYNC, "cudaMemcpy");
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, void *stream) {
    return copy(dst, src, count, kind, stream, ASYNC, "cudaMemcpyAsync");
}

static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                           int kind, void *stream, int async, const char *call) {
    if (rt.sticky) return rt.sticky;
    CAPTURE_HOOK(capture_copy(dst, dpitch, src, spitch, width, height, kind, stream, async, call));
    if (width == 0 || height == 0) return cudaSuccess;
    dst = device_side(dst, (height - 1) * dpitch + width), src = device_side(src, (height - 1) * spitch + width);
    struct buf b = {0};
    put_u64(&b, (uintptr_t)dst);
    put_u64(&b, dpitch);
    put_u64(&b, (uintptr_t)src);
    put_u64(&b, spitch);
    put_u64(&b, width);
    put_u64(&b, height);
    put_u32(&b, (uint32_t)kind);
    put_u64(&b, (uintptr_t)stream);
    put_u32(&b, (uint32_t)async);
    put_site(&b, call, NULL);
    sync_edges();
    uint8_t *reply = NULL;
    cudaError_t status = request(OP_MEMCPY_2D, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        uint8_t *to = (uint8_t *)(uintptr_t)get_u64(&p), *of = (uint8_t *)(uintptr_t)get_u64(&p);
        for (size_t row = 0; row < height; row++) memmove(view(to + row * dpitch), view(of + row * spitch), width);
    }
    free(reply);
    sync_edges();
    return record(status);
}

EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                size_t height, int kind) {
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, LEGACY_STREAM, SYNC, "cudaMemcpy2D");
}

EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                     size_t height, int kind, void *stream) {
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, ASYNC, "cudaMemcpy2DAsync");
}

/* The device address of a registered __device__/__constant__ variable, or 0. */
static uint64_t symbol_address(const void *symbol, size_t *size) {
    pthread_mutex_lock(&rt.lock);
    struct symbol *s = find_symbol(symbol);
    uint64_t address = s ? s->address : 0;
    if (s) *size = s->size;
    pthread_mutex_unlock(&rt.lock);
    return address;
}

static cudaError_t copy_symbol(const void *symbol, void *host, size_t count, size_t offset, int kind, int to_symbol,
                               void *stream, int async, const char *call) {
    size_t size;
    uint64_t address = symbol_address(symbol, &size);
    if (!address) return record(cudaErrorInvalidSymbol);
    void *device = (void *)(uintptr_t)(address + offset);
    return to_symbol ? copy(device, host, count, kind, stream, async, call)
                     : copy(host, device, count, kind, stream, async, call);
}

EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, int kind) {
    return copy_symbol(symbol, (void *)src, count, offset, kind, 1, LEGACY_STREAM, SYNC, "cudaMemcpyToSymbol");
}

EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, int kind) {
    return copy_symbol(symbol, dst, count, offset, kind, 0, LEGACY_STREAM, SYNC, "cudaMemcpyFromSymbol");
}

EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset, int kind,
                                           void *stream) {
    return copy_symbol(symbol, (void *)src, count, offset, kind, 1, stream, ASYNC, "cudaMemcpyToSymbolAsync");
}

EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset, int kind,
                                             void *stream) {
    return copy_symbol(symbol, dst, count, offset, kind, 0, stream, ASYNC, "cudaMemcpyFromSymbolAsync");
}

EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol) {
    size_t size;
    uint64_t address = symbol_address(symbol, &size);
    if (!address) return record(cudaErrorInvalidSymbol);
    *devPtr = (void *)(uintptr_t)address;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol) {
    if (!symbol_address(symbol, size)) return record(cudaErrorInvalidSymbol);
    return cudaSuccess;
}

/* Set `height` rows of `width` bytes, `pitch` apart (cudaMemset: one row), to `value` repeated: one byte of it
   (element 1), or its 2 or 4 bytes (element 2 or 4: the driver's cuMemsetD16/D32, whose widths are whole
   elements). */
static cudaError_t fill_elements(void *dst, size_t pitch, uint32_t value, unsigned element, size_t width,
                                 size_t height, void *stream, int async, const char *call) {
    if (rt.sticky) return rt.sticky;
    if (element != 1 && __atomic_load_n(&captures, __ATOMIC_ACQUIRE))
        unsupported("a driver memset of 16- or 32-bit values while a stream capture is in progress", NULL);
    CAPTURE_HOOK(capture_fill(dst, pitch, (int)value, width, height, stream, async, call));
    if (width == 0 || height == 0) return cudaSuccess;
    dst = device_side(dst, (height - 1) * pitch + width);
    struct buf b = {0};
    put_u64(&b, (uintptr_t)dst);
    put_u64(&b, pitch);
    put_u32(&b, (uint32_t)value);
    put_u64(&b, width);
    put_u64(&b, height);
    put_u64(&b, (uintptr_t)stream);
    put_u32(&b, (uint32_t)async);
    put_site(&b, call, NULL);
    sync_edges();
    uint8_t *reply = NULL;
    cudaError_t status = request(OP_MEMSET, &b, &reply);
    const uint8_t *p = reply;
    uint8_t *to = status == cudaSuccess ? (uint8_t *)(uintptr_t)get_u64(&p) : NULL;
    free(reply);
    if (status == cudaSuccess)
        for (size_t row = 0; row < height; row++) {
            uint8_t *out = view(to + row * pitch);
            if (element == 1)
                memset(out, (int)value, width);
            else
                for (size_t at = 0; at < width; at += element) memcpy(out + at, &value, element);
        }
    sync_edges();
    return record(status);
}

static cudaError_t fill(void *dst, size_t pitch, int value, size_t width, size_t height, void *stream, int async,
                        const char *call) {
    return fill_elements(dst, pitch, (uint32_t)value, 1, width, height, stream, async, call);
}

EXPORT cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height) {
    return fill(devPtr, pitch, value, width, height, LEGACY_STREAM, SYNC, "cudaMemset2D");
}

EXPORT cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                     void *stream) {
    return fill(devPtr, pitch, value, width, height, stream, ASYNC, "cudaMemset2DAsync");
}

EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
    return fill(devPtr, count, value, count, 1, LEGACY_STREAM, SYNC, "cudaMemset");
}

EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, void *stream) {
    return fill(devPtr, count, value, count, 1, stream, ASYNC, "cudaMemsetAsync");
}

/* ------------------------------------------------------------------------ */
/* Synchronisation, streams and events: the device server orders them (streams.py) */
/* ------------------------------------------------------------------------ */

static cudaError_t wait_for(uint32_t what, const void *handle, const char *call) {
    flush_device_output(); /* the work waited for has run: what it printed comes out now, as from a GPU */
    if (rt.sticky) return rt.sticky;
    CAPTURE_HOOK(capture_wait_for(what, handle));
    struct buf b = {0};
    put_u32(&b, what);
    put_u64(&b, (uintptr_t)handle);
    put_site(&b, call, NULL);
    return record(request(OP_SYNCHRONIZE, &b, NULL));
}

/* A request about streams or events: `a` and `b` as the operation's payload takes them. */
static cudaError_t handles(uint32_t op, const void *a, const void *b_handle) {
    struct buf b = {0};
    put_u64(&b, (uintptr_t)a);
    put_u64(&b, (uintptr_t)b_handle);
    return record(request(op, &b, NULL));
}

EXPORT cudaError_t cudaDeviceSynchronize(void) { return wait_for(WAIT_DEVICE, NULL, "cudaDeviceSynchronize"); }

EXPORT cudaError_t cudaStreamSynchronize(void *stream) {
    return wait_for(WAIT_STREAM, stream, "cudaStreamSynchronize");
}

/* Everything queued has already run, so a query always finds the work done: the host learns that it is. */
EXPORT cudaError_t cudaStreamQuery(void *stream) { return wait_for(WAIT_STREAM, stream, "cudaStreamQuery"); }

EXPORT cudaError_t cudaStreamCreateWithFlags(void **stream, unsigned int flags) {
    if (!stream) return record(cudaErrorInvalidValue);
    if (rt.sticky) return rt.sticky;
    void *handle = malloc(1); /* a unique, opaque handle */
    struct buf b = {0};
    put_u64(&b, (uintptr_t)handle);
    put_u32(&b, flags);
    cudaError_t status = record(request(OP_STREAM_CREATE, &b, NULL));
    if (status != cudaSuccess) {
        free(handle);
        return status;
    }
    note_stream_flags(handle, flags);
    *stream = handle;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamCreate(void **stream) { return cudaStreamCreateWithFlags(stream, 0); }

EXPORT cudaError_t cudaStreamCreateWithPriority(void **stream, unsigned int flags, int priority) {
    (void)priority;
    return cudaStreamCreateWithFlags(stream, flags);
}

/* The flags a stream was made with (cudaStreamNonBlocking or 0; the default streams have none). */
EXPORT cudaError_t cudaStreamGetFlags(void *stream, unsigned int *flags) {
    if (!flags) return record(cudaErrorInvalidValue);
    *flags = 0;
    if (stream != LEGACY_STREAM && stream != PER_THREAD_STREAM && !stream_flags(stream, flags))
        return record(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamGetFlags_ptsz(void *stream, unsigned int *flags) {
    return cudaStreamGetFlags(PER_THREAD(stream), flags);
}

/* Every stream has priority 0: streams have no priorities here (cudaDeviceGetStreamPriorityRange). */
EXPORT cudaError_t cudaStreamGetPriority(void *stream, int *priority) {
    (void)stream;
    if (!priority) return record(cudaErrorInvalidValue);
    *priority = 0;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamGetPriority_ptsz(void *stream, int *priority) { return cudaStreamGetPriority(stream, priority); }

EXPORT cudaError_t cudaStreamGetDevice(void *stream, int *device) {
    (void)stream;
    if (!device) return record(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamGetDevice_ptsz(void *stream, int *device) { return cudaStreamGetDevice(stream, device); }

EXPORT cudaError_t cudaStreamDestroy(void *stream) {
    struct buf b = {0};
    put_u64(&b, (uintptr_t)stream);
    cudaError_t status = record(request(OP_STREAM_DESTROY, &b, NULL));
    if (status == cudaSuccess) {
        forget_stream_attributes(stream);
        free(stream);
    }
    return status;
}

EXPORT cudaError_t cudaStreamWaitEvent(void *stream, void *event, unsigned int flags) {
    if (!event) return record(cudaErrorInvalidResourceHandle);
    CAPTURE_HOOK(capture_stream_wait(stream, event, flags));
    return handles(OP_STREAM_WAIT_EVENT, stream, event);
}

/* A host function queued on a stream runs once the stream's earlier work is done, and the stream's later work
   waits for it. That work is done already, so it runs here and now, in the calling thread, after the host has
   waited for the stream (so the function is ordered after that work, and the program's later calls after it). */
typedef void (*host_fn)(void *);
typedef void (*stream_callback)(void *stream, cudaError_t status, void *user_data);

EXPORT cudaError_t cudaLaunchHostFunc(void *stream, host_fn fn, void *userData) {
    if (!fn) return record(cudaErrorInvalidValue);
    CAPTURE_HOOK(capture_host_function(stream, fn, userData));
    cudaError_t status = wait_for(WAIT_STREAM, stream, "cudaLaunchHostFunc");
    if (status != cudaSuccess) return status;
    fn(userData);
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamAddCallback(void *stream, stream_callback callback, void *userData, unsigned int flags) {
    if (!callback || flags != 0) return record(cudaErrorInvalidValue);
    cudaError_t status = wait_for(WAIT_STREAM, stream, "cudaStreamAddCallback");
    if (status != cudaSuccess) return status;
    callback(stream, cudaSuccess, userData);
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventCreate(void **event) {
    if (!event) return record(cudaErrorInvalidValue);
    *event = malloc(1); /* a unique, opaque handle; the server keeps what is recorded on it */
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventCreateWithFlags(void **event, unsigned int flags) {
    (void)flags;
    return cudaEventCreate(event);
}

EXPORT cudaError_t cudaEventRecord(void *event, void *stream) {
    if (!event) return record(cudaErrorInvalidResourceHandle);
    CAPTURE_HOOK(capture_event_record(event, stream));
    return handles(OP_EVENT_RECORD, event, stream);
}

EXPORT cudaError_t cudaEventRecordWithFlags(void *event, void *stream, unsigned int flags) {
    if (event) CAPTURE_HOOK(capture_external_record(event, stream, flags));
    return cudaEventRecord(event, stream);
}

EXPORT cudaError_t cudaEventQuery(void *event) {
    if (!event) return record(cudaErrorInvalidResourceHandle);
    return wait_for(WAIT_EVENT, event, "cudaEventQuery");
}

EXPORT cudaError_t cudaEventSynchronize(void *event) {
    if (!event) return record(cudaErrorInvalidResourceHandle);
    return wait_for(WAIT_EVENT, event, "cudaEventSynchronize");
}

/* The simulated time of the kernels run between the two records (device.py): not a GPU's time. */
EXPORT cudaError_t cudaEventElapsedTime(float *ms, void *start, void *end) {
    if (!ms) return record(cudaErrorInvalidValue);
    if (!start || !end) return record(cudaErrorInvalidResourceHandle);
    struct buf b = {0};
    uint8_t *reply = NULL;
    put_u64(&b, (uintptr_t)start);
    put_u64(&b, (uintptr_t)end);
    cudaError_t status = request(OP_EVENT_ELAPSED, &b, &reply);
    if (status == cudaSuccess) memcpy(ms, reply, sizeof *ms);
    free(reply);
    return record(status);
}

EXPORT cudaError_t cudaEventDestroy(void *event) {
    free(event);
    return cudaSuccess;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

EXPORT cudaError_t cudaGetLastError(void) {
    cudaError_t e = rt.sticky ? rt.sticky : last_error;
    last_error = cudaSuccess;
    return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void) { return rt.sticky ? rt.sticky : last_error; }

struct error_text {
    int code;
    const char *text;
};

/* Every cudaError_t of CUDA 13 (driver_types.h). */
static const struct error_text error_names[] = {
    {0, "cudaSuccess"},
#include "error_names.h"
};

/* NVIDIA's wording for the errors this runtime returns. */
static const struct error_text error_strings[] = {
    {0, "no error"},
    {1, "invalid argument"},
    {2, "out of memory"},
    {3, "initialization error"},
    {9, "invalid configuration argument"},
    {12, "invalid pitch argument"},
    {13, "invalid device symbol"},
    {17, "invalid device pointer"},
    {21, "invalid copy direction for memcpy"},
    {98, "invalid device function"},
    {100, "no CUDA-capable device is detected"},
    {101, "invalid device ordinal"},
    {400, "invalid resource handle"},
    {500, "named symbol not found"},
    {600, "device not ready"},
    {700, "an illegal memory access was encountered"},
    {701, "too many resources requested for launch"},
    {702, "the launch timed out and was terminated"},
    {710, "device-side assert triggered"},
    {712, "part or all of the requested memory range is already mapped"},
    {713, "pointer does not correspond to a registered memory region"},
    {715, "an illegal instruction was encountered"},
    {716, "misaligned address"},
    {717, "operation not supported on global/shared address space"},
    {718, "invalid program counter"},
    {719, "unspecified launch failure"},
    {720, "too many blocks in cooperative launch"},
    {801, "operation not supported"},
    {999, "unknown error"},
};

static const char *lookup(const struct error_text *table, size_t n, int code) {
    for (size_t i = 0; i < n; i++)
        if (table[i].code == code) return table[i].text;
    return NULL;
}

EXPORT const char *cudaGetErrorName(cudaError_t error) {
    const char *name = lookup(error_names, sizeof error_names / sizeof *error_names, error);
    return name ? name : "unrecognized error code";
}

EXPORT const char *cudaGetErrorString(cudaError_t error) {
    const char *text = lookup(error_strings, sizeof error_strings / sizeof *error_strings, error);
    if (text) return text;
    return lookup(error_names, sizeof error_names / sizeof *error_names, error) ? cudaGetErrorName(error)
                                                                                : "unrecognized error code";
}

/* ------------------------------------------------------------------------ */
/* The device                                                                */
/* ------------------------------------------------------------------------ */

EXPORT cudaError_t cudaGetDeviceCount(int *count) {
    if (!count) return record(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

EXPORT cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : record(cudaErrorInvalidDevice); }

EXPORT cudaError_t cudaGetDevice(int *device) {
    if (!device) return record(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

/* Peers: the one device is no peer of itself (a GPU answers so too), and there is no other. */
EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice) {
    if (!canAccessPeer) return record(cudaErrorInvalidValue);
    if (device != 0 || peerDevice != 0) return record(cudaErrorInvalidDevice);
    *canAccessPeer = 0;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
    (void)peerDevice, (void)flags;
    return record(cudaErrorInvalidDevice);
}

EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
    (void)peerDevice;
    return record(cudaErrorInvalidDevice);
}

/* A copy between the memory of two devices: with one device, between two allocations of it. */
EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count) {
    if (dstDevice != 0 || srcDevice != 0) return record(cudaErrorInvalidDevice);
    return copy(dst, src, count, cudaMemcpyDeviceToDevice, LEGACY_STREAM, SYNC, "cudaMemcpyPeer");
}

EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                       void *stream) {
    if (dstDevice != 0 || srcDevice != 0) return record(cudaErrorInvalidDevice);
    return copy(dst, src, count, cudaMemcpyDeviceToDevice, stream, ASYNC, "cudaMemcpyPeerAsync");
}

EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags) {
    (void)flags;
    return cudaSuccess;
}

/* The texture and surface size limits of an sm_75 part (those of every GPU since Turing for these fields). */
static void set_texture_limits(struct cudaDeviceProp *p) {
    p->maxTexture1D = 131072, p->maxTexture1DMipmap = 32768;
    p->maxTexture2D[0] = 131072, p->maxTexture2D[1] = 65536;
    p->maxTexture2DMipmap[0] = p->maxTexture2DMipmap[1] = 32768;
    p->maxTexture2DLinear[0] = 131072, p->maxTexture2DLinear[1] = 65000, p->maxTexture2DLinear[2] = 2097120;
    p->maxTexture2DGather[0] = p->maxTexture2DGather[1] = 32768;
    p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = 16384;
    p->maxTexture3DAlt[0] = p->maxTexture3DAlt[1] = 8192, p->maxTexture3DAlt[2] = 32768;
    p->maxTextureCubemap = 32768;
    p->maxTexture1DLayered[0] = 32768, p->maxTexture1DLayered[1] = 2048;
    p->maxTexture2DLayered[0] = p->maxTexture2DLayered[1] = 32768, p->maxTexture2DLayered[2] = 2048;
    p->maxTextureCubemapLayered[0] = 32768, p->maxTextureCubemapLayered[1] = 2046;
    p->maxSurface1D = 32768;
    p->maxSurface2D[0] = 131072, p->maxSurface2D[1] = 65536;
    p->maxSurface3D[0] = p->maxSurface3D[1] = p->maxSurface3D[2] = 16384;
    p->maxSurface1DLayered[0] = 32768, p->maxSurface1DLayered[1] = 2048;
    p->maxSurface2DLayered[0] = p->maxSurface2DLayered[1] = 32768, p->maxSurface2DLayered[2] = 2048;
    p->maxSurfaceCubemap = 32768;
    p->maxSurfaceCubemapLayered[0] = 32768, p->maxSurfaceCubemapLayered[1] = 2046;
}

/* The shared memory of one multiprocessor: from compute 8.0 on, the largest block's opt-in plus what is reserved
   for it, as on NVIDIA's parts (228 KiB at 9.0; sim/memory/layout.py shared_bytes_per_sm). */
static size_t reserved_shared_per_block(void) { return rt.compute_capability >= 80 ? RESERVED_SHARED_PER_BLOCK : 0; }

static size_t shared_per_sm(void) {
    return rt.compute_capability >= 80 ? rt.shared_optin + RESERVED_SHARED_PER_BLOCK : SHARED_PER_SM;
}

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
    if (!prop) return record(cudaErrorInvalidValue);
    if (device != 0) return record(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    strcpy(prop->name, "gpurace simulated device");
    prop->totalGlobalMem = rt.global_bytes;
    prop->sharedMemPerBlock = SHARED_PER_BLOCK;
    prop->regsPerBlock = REGISTERS;
    prop->warpSize = WARP_SIZE;
    prop->memPitch = INT_MAX;
    prop->maxThreadsPerBlock = MAX_THREADS_PER_BLOCK;
    prop->maxThreadsDim[0] = 1024, prop->maxThreadsDim[1] = 1024, prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = INT_MAX, prop->maxGridSize[1] = 65535, prop->maxGridSize[2] = 65535;
    prop->totalConstMem = CONSTANT_BYTES;
    prop->major = rt.compute_capability / 10;
    prop->minor = rt.compute_capability % 10;
    prop->textureAlignment = 512;
    prop->texturePitchAlignment = 32;
    prop->multiProcessorCount = SM_COUNT;
    prop->canMapHostMemory = 1;
    set_texture_limits(prop);
    prop->surfaceAlignment = 512;
    prop->concurrentKernels = 1;
    prop->asyncEngineCount = 1;
    prop->unifiedAddressing = 1;
    prop->memoryBusWidth = 256;
    prop->l2CacheSize = 4 << 20;
    prop->maxThreadsPerMultiProcessor = MAX_THREADS_PER_SM;
    prop->globalL1CacheSupported = 1;
    prop->localL1CacheSupported = 1;
    prop->sharedMemPerMultiprocessor = shared_per_sm();
    prop->reservedSharedMemPerBlock = reserved_shared_per_block();
    prop->regsPerMultiprocessor = REGISTERS;
    prop->managedMemory = 1;
    prop->cooperativeLaunch = 1;
    prop->concurrentManagedAccess = 1;
    prop->sharedMemPerBlockOptin = rt.shared_optin;
    prop->maxBlocksPerMultiProcessor = MAX_BLOCKS_PER_SM;
    prop->hostRegisterSupported = 1; /* read-only registration is not (hostRegisterReadOnlySupported 0), nor is
                                        the host pointer of registered memory a device pointer (canUseHost... 0) */
    prop->memoryPoolsSupported = 1; /* the default pool only (stream_ordered.h), with no IPC handle types */
    if (rt.compute_capability >= 80) { /* the persisting L2 cache of Ampere and later: accepted hints (memory_hints.h) */
        prop->persistingL2CacheMaxSize = PERSISTING_L2_BYTES;
        prop->accessPolicyMaxWindowSize = ACCESS_POLICY_MAX_WINDOW;
    }
    prop->deviceNumaId = -1;
    prop->hostNumaId = -1;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetAttribute(int *value, int attr, int device) {
    if (!value) return record(cudaErrorInvalidValue);
    if (device != 0) return record(cudaErrorInvalidDevice);
    struct cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    switch (attr) {
    case 1: *value = p.maxThreadsPerBlock; break;
    case 2: case 3: case 4: *value = p.maxThreadsDim[attr - 2]; break;
    case 5: case 6: case 7: *value = p.maxGridSize[attr - 5]; break;
    case 8: *value = (int)p.sharedMemPerBlock; break;
    case 9: *value = (int)p.totalConstMem; break;
    case 10: *value = p.warpSize; break;
    case 11: *value = (int)p.memPitch; break;
    case 12: *value = p.regsPerBlock; break;
    case 13: *value = 1000; break; /* clock rate, kHz: a scheduler step is one cycle, 1 us (device.py) */
    case 14: *value = (int)p.textureAlignment; break;
    case 15: *value = 1; break; /* copies overlap kernels */
    case 16: *value = p.multiProcessorCount; break;
    case 17: case 18: case 20: *value = 0; break; /* no watchdog, not integrated, default compute mode */
    case 19: *value = p.canMapHostMemory; break;
    case 21: *value = p.maxTexture1D; break;
    case 22: case 23: *value = p.maxTexture2D[attr - 22]; break;
    case 24: case 25: case 26: *value = p.maxTexture3D[attr - 24]; break;
    case 27: case 28: case 29: *value = p.maxTexture2DLayered[attr - 27]; break;
    case 30: *value = (int)p.surfaceAlignment; break;
    case 42: case 43: *value = p.maxTexture1DLayered[attr - 42]; break;
    case 44: *value = 1; break; /* tex2Dgather */
    case 45: case 46: *value = p.maxTexture2DGather[attr - 45]; break;
    case 47: case 48: case 49: *value = p.maxTexture3DAlt[attr - 47]; break;
    case 51: *value = (int)p.texturePitchAlignment; break;
    case 52: *value = p.maxTextureCubemap; break;
    case 53: case 54: *value = p.maxTextureCubemapLayered[attr - 53]; break;
    case 55: *value = p.maxSurface1D; break;
    case 56: case 57: *value = p.maxSurface2D[attr - 56]; break;
    case 58: case 59: case 60: *value = p.maxSurface3D[attr - 58]; break;
    case 61: case 62: *value = p.maxSurface1DLayered[attr - 61]; break;
    case 63: case 64: case 65: *value = p.maxSurface2DLayered[attr - 63]; break;
    case 66: *value = p.maxSurfaceCubemap; break;
    case 67: case 68: *value = p.maxSurfaceCubemapLayered[attr - 67]; break;
    case 69: *value = 1 << 28; break; /* 1D textures of linear memory */
    case 70: case 71: case 72: *value = p.maxTexture2DLinear[attr - 70]; break;
    case 73: case 74: *value = p.maxTexture2DMipmap[attr - 73]; break;
    case 77: *value = p.maxTexture1DMipmap; break;
    case 87: *value = 32; break; /* single- to double-precision throughput, a GeForce Turing's */
    case 31: *value = p.concurrentKernels; break;
    case 32: case 33: case 34: case 35: case 50: *value = 0; break; /* ECC, PCI ids, TCC */
    case 36: *value = 5001000; break; /* memory clock rate, kHz */
    case 37: *value = p.memoryBusWidth; break;
    case 38: *value = p.l2CacheSize; break;
    case 39: *value = p.maxThreadsPerMultiProcessor; break;
    case 40: *value = p.asyncEngineCount; break;
    case 41: *value = p.unifiedAddressing; break;
    case 75: *value = p.major; break;
    case 76: *value = p.minor; break;
    case 78: *value = 0; break; /* stream priorities */
    case 79: *value = p.globalL1CacheSupported; break;
    case 80: *value = p.localL1CacheSupported; break;
    case 81: *value = (int)p.sharedMemPerMultiprocessor; break;
    case 82: *value = p.regsPerMultiprocessor; break;
    case 83: *value = p.managedMemory; break;
    case 84: case 85: case 86: case 88: case 90: case 91: *value = 0; break;
    case 95: *value = p.cooperativeLaunch; break;
    case 96: *value = 0; break; /* cooperative launches across devices: one device */
    case 89: *value = p.concurrentManagedAccess; break;
    case 97: *value = (int)p.sharedMemPerBlockOptin; break;
    case 99: *value = p.hostRegisterSupported; break;
    case 100: *value = 0; break; /* pageable memory is not accessed through the host's page tables */
    case 102: *value = 1; break; /* the driver's virtual memory management (cuMemCreate, cuMemMap, ...) */
    case 103: case 104: case 105: *value = 0; break; /* shareable handles of it: one process per device */
    case 106: *value = p.maxBlocksPerMultiProcessor; break;
    case 111: *value = (int)p.reservedSharedMemPerBlock; break;
    case 108: *value = p.persistingL2CacheMaxSize; break;
    case 109: *value = p.accessPolicyMaxWindowSize; break;
    case 113: *value = p.hostRegisterReadOnlySupported; break;
    case 115: *value = p.memoryPoolsSupported; break;
    case 119: *value = 0; break; /* memory pool IPC handle types: none */
    case 92: case 93: case 94: case 98: case 101: case 107: case 110: case 112: case 114: case 116: case 117:
    case 118: case 121: case 122: case 123: case 124: case 125: case 128: case 129: case 132: case 133: case 135:
    case 136: case 137: case 138: case 141: case 142: case 143: case 144: case 145: case 146: case 147:
        *value = 0; break; /* stream memory operations, RDMA, IPC, NUMA, multicast, ...: features of none */
    case 126: *value = 1; break; /* memory synchronisation domains */
    case 127: *value = rt.compute_capability >= 90; break; /* TMA tensor maps (tensor_maps.h) */
    case 120: *value = rt.compute_capability >= 90; break; /* cluster launches (cudaLaunchKernelEx) */
    case 130: *value = 0; break; /* no NUMA configuration */
    case 131: case 134: *value = -1; break; /* NUMA ids: none */
    case 139: case 140: *value = 0; break; /* PCI ids */
    default: return record(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceReset(void) {
    flush_device_output();
    struct buf b = {0};
    put_site(&b, "cudaDeviceReset", NULL);
    pthread_mutex_lock(&rt.lock); /* the reset ends every registration: the program's memory becomes its own again */
    sync_edges_locked();
    while (nregistrations) end_registration(&registrations[nregistrations - 1]);
    pthread_mutex_unlock(&rt.lock);
    cudaError_t status = request(OP_RESET, &b, NULL);
    rt.sticky = cudaSuccess;
    last_error = cudaSuccess;
    return status;
}

/* Limits are kept and reported; the simulator does not enforce them (its own stack and heap limits are
   gpurace's, see the README). Defaults are a GPU's. */
enum { LIMIT_STACK_SIZE, LIMIT_PRINTF_FIFO_SIZE, LIMIT_MALLOC_HEAP_SIZE, LIMIT_DEV_RUNTIME_SYNC_DEPTH,
       LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, LIMIT_MAX_L2_FETCH_GRANULARITY, LIMIT_PERSISTING_L2_CACHE_SIZE,
       LIMIT_COUNT };
static size_t limits[LIMIT_COUNT] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};

EXPORT cudaError_t cudaDeviceSetLimit(int limit, size_t value) {
    if (limit < 0 || limit >= LIMIT_COUNT) return record(cudaErrorInvalidValue);
    if (limit == LIMIT_PERSISTING_L2_CACHE_SIZE && value > (rt.compute_capability >= 80 ? PERSISTING_L2_BYTES : 0))
        return record(cudaErrorInvalidValue); /* more than the device's persisting L2 cache (none before sm_80) */
    limits[limit] = value;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetLimit(size_t *value, int limit) {
    if (!value || limit < 0 || limit >= LIMIT_COUNT) return record(cudaErrorInvalidValue);
    *value = limits[limit];
    return cudaSuccess;
}

/* Streams have no priorities here (cudaDevAttrStreamPrioritiesSupported is 0): the range is [0, 0]. */
EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
    if (leastPriority) *leastPriority = 0;
    if (greatestPriority) *greatestPriority = 0;
    return cudaSuccess;
}

/* There is no profiler to start or stop: accepted, as when no profiler is attached. */
EXPORT cudaError_t cudaProfilerStart(void) { return cudaSuccess; }

EXPORT cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

EXPORT cudaError_t cudaDriverGetVersion(int *version) {
    if (!version) return record(cudaErrorInvalidValue);
    *version = CUDA_VERSION_NUMBER;
    return cudaSuccess;
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *version) {
    if (!version) return record(cudaErrorInvalidValue);
    *version = CUDA_VERSION_NUMBER;
    return cudaSuccess;
}

/* ------------------------------------------------------------------------ */
/* Kernel attributes and occupancy                                           */
/* ------------------------------------------------------------------------ */

/* Accepted and not enforced: a launch may use the architecture's whole shared memory without the opt-in. */
/* cudaFuncSetAttribute: the dynamic shared memory maximum, the carveout and the cluster scheduling preference
   change nothing the simulator shows (every launch may have the opt-in maximum); allowing non-portable cluster
   sizes is accepted, and a cluster of more than 8 blocks is still refused at launch, by name; fixing the
   required cluster dimensions at run time stops the program. */
EXPORT cudaError_t cudaFuncSetAttribute(const void *func, int attr, int value) {
    (void)value;
    if (attr >= cudaFuncAttributeRequiredClusterWidth && attr <= cudaFuncAttributeRequiredClusterDepth) {
        struct stack site;
        capture(&site);
        unsupported("cudaFuncSetAttribute of a required cluster dimension", &site);
    }
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize && attr != cudaFuncAttributePreferredSharedMemoryCarveout &&
        attr != cudaFuncAttributeNonPortableClusterSizeAllowed && attr != cudaFuncAttributeClusterSchedulingPolicyPreference)
        return record(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    struct kernel *k = find_kernel(func);
    pthread_mutex_unlock(&rt.lock);
    return k ? cudaSuccess : record(cudaErrorInvalidDeviceFunction);
}

EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, int config) {
    (void)config;
    pthread_mutex_lock(&rt.lock);
    struct kernel *k = find_kernel(func);
    pthread_mutex_unlock(&rt.lock);
    return k ? cudaSuccess : record(cudaErrorInvalidDeviceFunction);
}

/* Cache and shared memory bank preferences: hints that change nothing simulated. The device's cache preference
   reads back as set; the bank size is four bytes, as on every GPU since Volta (setting it changes nothing there
   either). */
enum { FUNC_CACHE_PREFER_EQUAL = 3, SHARED_MEM_BANK_FOUR_BYTES = 1, SHARED_MEM_BANK_EIGHT_BYTES = 2 };
static int device_cache_config;

EXPORT cudaError_t cudaDeviceSetCacheConfig(int cacheConfig) {
    if (cacheConfig < 0 || cacheConfig > FUNC_CACHE_PREFER_EQUAL) return record(cudaErrorInvalidValue);
    device_cache_config = cacheConfig;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetCacheConfig(int *pCacheConfig) {
    if (!pCacheConfig) return record(cudaErrorInvalidValue);
    *pCacheConfig = device_cache_config;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceSetSharedMemConfig(int config) {
    return config < 0 || config > SHARED_MEM_BANK_EIGHT_BYTES ? record(cudaErrorInvalidValue) : cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetSharedMemConfig(int *pConfig) {
    if (!pConfig) return record(cudaErrorInvalidValue);
    *pConfig = SHARED_MEM_BANK_FOUR_BYTES;
    return cudaSuccess;
}

EXPORT cudaError_t cudaFuncSetSharedMemConfig(const void *func, int config) {
    if (config < 0 || config > SHARED_MEM_BANK_EIGHT_BYTES) return record(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    struct kernel *k = find_kernel(func);
    pthread_mutex_unlock(&rt.lock);
    return k ? cudaSuccess : record(cudaErrorInvalidDeviceFunction);
}

/* The one device is the best match for any properties, and is initialised already. */
EXPORT cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop) {
    if (!device || !prop) return record(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

enum { INIT_DEVICE_FLAGS_ARE_VALID = 1 };

EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
    if (flags & ~INIT_DEVICE_FLAGS_ARE_VALID) return record(cudaErrorInvalidValue);
    if (device != 0) return record(cudaErrorInvalidDevice);
    return flags ? cudaSetDeviceFlags(deviceFlags) : cudaSuccess;
}

EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func) {
    if (!attr) return record(cudaErrorInvalidValue);
    struct buf b = {0};
    uint8_t *reply = NULL;
    put_u64(&b, (uintptr_t)func);
    cudaError_t status = request(OP_FUNC_ATTRIBUTES, &b, &reply);
    if (status == cudaSuccess) {
        const uint8_t *p = reply;
        memset(attr, 0, sizeof *attr);
        attr->sharedSizeBytes = get_u64(&p);
        attr->constSizeBytes = get_u64(&p);
        attr->localSizeBytes = get_u64(&p);
        attr->maxThreadsPerBlock = MAX_THREADS_PER_BLOCK;
        attr->numRegs = SIMULATED_REGISTERS_PER_THREAD;
        attr->ptxVersion = rt.compute_capability;
        attr->binaryVersion = rt.compute_capability;
        attr->maxDynamicSharedSizeBytes = (int)(SHARED_PER_BLOCK - attr->sharedSizeBytes);
        attr->preferredShmemCarveout = -1;
        attr->requiredClusterWidth = (int)get_u32(&p);
        attr->requiredClusterHeight = (int)get_u32(&p);
        attr->requiredClusterDepth = (int)get_u32(&p);
        attr->clusterDimMustBeSet = (int)get_u32(&p);
    }
    free(reply);
    return record(status);
}

/* The blocks of `blockSize` (> 0) threads and `dynamic` bytes of dynamic shared memory of a kernel with
   attributes `attr` that one multiprocessor holds at once. */
static int blocks_per_sm(const struct cudaFuncAttributes *attr, int blockSize, size_t dynamic) {
    int warps = (blockSize + WARP_SIZE - 1) / WARP_SIZE;
    int blocks = blockSize > MAX_THREADS_PER_BLOCK ? 0 : MAX_THREADS_PER_SM / (warps * WARP_SIZE);
    if (blocks > MAX_BLOCKS_PER_SM) blocks = MAX_BLOCKS_PER_SM;
    size_t shared = attr->sharedSizeBytes + dynamic + reserved_shared_per_block();
    if (shared && (int)(shared_per_sm() / shared) < blocks) blocks = (int)(shared_per_sm() / shared);
    return blocks;
}

EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
                                                                          int blockSize, size_t dynamicSMemSize,
                                                                          unsigned int flags) {
    (void)flags;
    struct cudaFuncAttributes attr;
    if (!numBlocks || blockSize <= 0) return record(cudaErrorInvalidValue);
    cudaError_t status = cudaFuncGetAttributes(&attr, func);
    if (status != cudaSuccess) return status;
    *numBlocks = blocks_per_sm(&attr, blockSize, dynamicSMemSize);
    return cudaSuccess;
}

/* The dynamic shared memory each of `numBlocks` blocks of `blockSize` threads can have with all of them resident
   on one multiprocessor: 0 when that many do not fit for their threads. */
EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func, int numBlocks,
                                                             int blockSize) {
    struct cudaFuncAttributes attr;
    if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0) return record(cudaErrorInvalidValue);
    cudaError_t status = cudaFuncGetAttributes(&attr, func);
    if (status != cudaSuccess) return status;
    int by_threads = blocks_per_sm(&attr, blockSize, 0);
    size_t per_block = shared_per_sm() / (size_t)numBlocks, used = attr.sharedSizeBytes + reserved_shared_per_block();
    size_t most = rt.shared_optin - attr.sharedSizeBytes;
    *dynamicSmemSize = numBlocks > by_threads || per_block < used ? 0 : per_block - used < most ? per_block - used : most;
    return cudaSuccess;
}

/* The blocks of one cluster of a cudaLaunchKernelEx configuration: its cluster attribute, else the kernel's
   __cluster_dims__ (`attr`); 0 when it has neither, or they disagree. */
static int cluster_blocks(const struct launch_config *config, const struct cudaFuncAttributes *attr) {
    int blocks = 0;
    for (unsigned int i = 0; i < config->nattrs; i++)
        if (config->attrs[i].id == 4) { /* cudaLaunchAttributeClusterDimension */
            dim3 c = config->attrs[i].val.cluster;
            blocks = (int)(c.x * c.y * c.z);
            if (attr->requiredClusterWidth &&
                (c.x != (unsigned)attr->requiredClusterWidth || c.y != (unsigned)attr->requiredClusterHeight ||
                 c.z != (unsigned)attr->requiredClusterDepth))
                return 0;
        }
    if (!blocks && attr->requiredClusterWidth)
        blocks = attr->requiredClusterWidth * attr->requiredClusterHeight * attr->requiredClusterDepth;
    return blocks;
}

/* The attributes of `func` and the blocks of a launch `config` of it resident on one multiprocessor, for the
   cluster occupancy queries. */
static cudaError_t config_occupancy(const void *func, const struct launch_config *config,
                                    struct cudaFuncAttributes *attr, int *per_sm) {
    int threads = config ? (int)(config->block.x * config->block.y * config->block.z) : 0;
    if (threads <= 0 || (config->nattrs && !config->attrs)) return record(cudaErrorInvalidValue);
    cudaError_t status = cudaFuncGetAttributes(attr, func);
    if (status == cudaSuccess) *per_sm = blocks_per_sm(attr, threads, config->shared);
    return status;
}

/* Clusters of the virtual device: its multiprocessors form one group in which any cluster of at most
   PORTABLE_CLUSTER_BLOCKS blocks is placed (sim/clusters.py), so the active clusters are the resident blocks
   divided into clusters. */
EXPORT cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, const void *func,
                                                  const struct launch_config *config) {
    struct cudaFuncAttributes attr;
    int per_sm;
    if (!numClusters) return record(cudaErrorInvalidValue);
    cudaError_t status = config_occupancy(func, config, &attr, &per_sm);
    if (status != cudaSuccess) return status;
    int size = cluster_blocks(config, &attr);
    if (size < 1 || size > PORTABLE_CLUSTER_BLOCKS) return record(cudaErrorInvalidClusterSize);
    *numClusters = per_sm * SM_COUNT / size;
    return cudaSuccess;
}

EXPORT cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
                                                        const struct launch_config *config) {
    struct cudaFuncAttributes attr;
    int per_sm;
    if (!clusterSize) return record(cudaErrorInvalidValue);
    cudaError_t status = config_occupancy(func, config, &attr, &per_sm);
    if (status != cudaSuccess) return status;
    int resident = per_sm * SM_COUNT;
    *clusterSize = resident < PORTABLE_CLUSTER_BLOCKS ? resident : PORTABLE_CLUSTER_BLOCKS;
    return cudaSuccess;
}

EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                                 size_t dynamicSMemSize) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

/* ------------------------------------------------------------------------ */
/* Per-thread default stream variants (nvcc --default-stream per-thread): stream 0 is the per-thread stream */
/* ------------------------------------------------------------------------ */

EXPORT cudaError_t __cudaLaunchKernel_ptsz(void *kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                           void *stream) {
    return launch(kernel, gridDim, blockDim, args, sharedMem, PER_THREAD(stream));
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                         void *stream) {
    return launch(func, gridDim, blockDim, args, sharedMem, PER_THREAD(stream));
}

EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                                    size_t sharedMem, void *stream) {
    return launch_with(func, gridDim, blockDim, args, sharedMem, PER_THREAD(stream), LAUNCH_COOPERATIVE);
}

EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const struct launch_config *config, const void *func, void **args) {
    if (!config || (config->nattrs && !config->attrs)) return record(cudaErrorInvalidValue);
    dim3 cluster = {0, 0, 0};
    unsigned flags = launch_flags_of(config, "cudaLaunchKernelEx", &cluster);
    return launch_in_clusters(func, config->grid, config->block, args, config->shared, PER_THREAD(config->stream), flags,
                              cluster);
}

EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, int kind) {
    return copy(dst, src, count, kind, PER_THREAD_STREAM, SYNC, "cudaMemcpy");
}

EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, int kind, void *stream) {
    return copy(dst, src, count, kind, PER_THREAD(stream), ASYNC, "cudaMemcpyAsync");
}

EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                     size_t height, int kind) {
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, PER_THREAD_STREAM, SYNC, "cudaMemcpy2D");
}

EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                          size_t height, int kind, void *stream) {
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, PER_THREAD(stream), ASYNC, "cudaMemcpy2DAsync");
}

EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count, size_t offset, int kind) {
    return copy_symbol(symbol, (void *)src, count, offset, kind, 1, PER_THREAD_STREAM, SYNC, "cudaMemcpyToSymbol");
}

EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset, int kind) {
    return copy_symbol(symbol, dst, count, offset, kind, 0, PER_THREAD_STREAM, SYNC, "cudaMemcpyFromSymbol");
}

EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count, size_t offset,
                                                int kind, void *stream) {
    return copy_symbol(symbol, (void *)src, count, offset, kind, 1, PER_THREAD(stream), ASYNC,
                       "cudaMemcpyToSymbolAsync");
}

EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count, size_t offset, int kind,
                                                  void *stream) {
    return copy_symbol(symbol, dst, count, offset, kind, 0, PER_THREAD(stream), ASYNC, "cudaMemcpyFromSymbolAsync");
}

EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count) {
    return fill(devPtr, count, value, count, 1, PER_THREAD_STREAM, SYNC, "cudaMemset");
}

EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, void *stream) {
    return fill(devPtr, count, value, count, 1, PER_THREAD(stream), ASYNC, "cudaMemsetAsync");
}

EXPORT cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height) {
    return fill(devPtr, pitch, value, width, height, PER_THREAD_STREAM, SYNC, "cudaMemset2D");
}

EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                          void *stream) {
    return fill(devPtr, pitch, value, width, height, PER_THREAD(stream), ASYNC, "cudaMemset2DAsync");
}

EXPORT cudaError_t cudaStreamSynchronize_ptsz(void *stream) {
    return wait_for(WAIT_STREAM, PER_THREAD(stream), "cudaStreamSynchronize");
}

EXPORT cudaError_t cudaStreamQuery_ptsz(void *stream) {
    return wait_for(WAIT_STREAM, PER_THREAD(stream), "cudaStreamQuery");
}

EXPORT cudaError_t cudaStreamWaitEvent_ptsz(void *stream, void *event, unsigned int flags) {
    return cudaStreamWaitEvent(PER_THREAD(stream), event, flags);
}

EXPORT cudaError_t cudaEventRecord_ptsz(void *event, void *stream) {
    return cudaEventRecord(event, PER_THREAD(stream));
}

EXPORT cudaError_t cudaLaunchHostFunc_ptsz(void *stream, host_fn fn, void *userData) {
    return cudaLaunchHostFunc(PER_THREAD(stream), fn, userData);
}

EXPORT cudaError_t cudaStreamAddCallback_ptsz(void *stream, stream_callback callback, void *userData,
                                              unsigned int flags) {
    return cudaStreamAddCallback(PER_THREAD(stream), callback, userData, flags);
}

#include "textures.h"
#include "tensor_maps.h"
#include "driver_support.h"
#include "driver_textures.h"

/* ------------------------------------------------------------------------ */
/* Everything else NVIDIA's runtime exports: stop with the call's name and site */
/* ------------------------------------------------------------------------ */

#include "graphs.h"
#include "graph_memory.h"
#include "graph_conditionals.h"
#include "graph_params.h"
#include "stream_ordered.h"
#include "memory_hints.h"

#define UNSUPPORTED(name) \
    EXPORT void name(void) { unsupported(#name, NULL); }
#define UNSUPPORTED_BETWEEN_PROCESSES(name)                                                                        \
    EXPORT void name(void) {                                                                                       \
        unsupported(#name " (sharing memory or events with another process: each process gpurace runs has a "     \
                          "simulated device of its own)", NULL);                                                   \
    }
#include "unsupported_calls.h"
