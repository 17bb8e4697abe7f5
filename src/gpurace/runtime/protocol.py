"""The wire protocol between a program's host code and gpurace's simulated device.

`gpurace exec` runs the program as a child process against gpurace's own
`libcudart.so.13` (the shim, `runtime/shim/cudart.c`). The shim keeps no
device state of its own (but where registered host memory lies): every CUDA call that concerns the device becomes a
request to the gpurace process (the device server, `runtime/server.py`),
which owns the allocations, checks every copy against them, runs each kernel
launch in the simulator with detection, and answers with a `cudaError_t`.

Device memory is shared, not copied. The server creates two memory files
(`memfd_create`): the global arena, which backs every `cudaMalloc`,
`cudaMallocManaged`, `cudaMallocHost` and `__device__` variable, and the
constant arena, which backs `__constant__` variables. The child inherits
them, and the shim maps them at the addresses the simulator gives those
spaces (`GLOBAL_BASE` and `CONST_BASE`), so a device pointer has the same
value in the program and in the simulator, host code can read managed memory
directly, and copies are plain `memcpy` by the shim once the server has
approved them. Host memory the program registers (`cudaHostRegister`) is
given a block of the global arena too (`heap.Heap.register`), and the shim
makes the program's own memory the arena's there (see the shim's
"Registered host memory"), so that kernels reach it through the device
pointer and the host sees their writes. `cudaMalloc` memory is addressed in the device-only window
(`spread.py`), which the shim reserves and never maps: its bytes are elsewhere in the global arena, and
the server tells the shim where with each copy or memset it approves. The environment tells the shim where things are (the shim
removes these variables, so programs the program starts do not inherit them):

    GPURACE_RUNTIME_FD    the socket to the server (a connected AF_UNIX stream socket)
    GPURACE_GLOBAL_FD     the global arena's memory file; mapped at GPURACE_GLOBAL_BASE (hex), GPURACE_GLOBAL_BYTES long
    GPURACE_CONST_FD      the constant arena's;         mapped at GPURACE_CONST_BASE (hex), GPURACE_CONST_BYTES long
    GPURACE_WINDOW_BASE   the device-only window (hex), GPURACE_WINDOW_BYTES long: reserved, inaccessible
    GPURACE_DEVICE_CC     the virtual device's compute capability (75 for compute_75: the architecture built for)
    GPURACE_DEVICE_SHARED_OPTIN  its shared memory per block with the opt-in, in bytes

Framing (little-endian): a request is `u32 opcode, u32 length, payload`; the
reply is `i32 status (a cudaError_t), u32 length, u32 nprotect, payload`, then
`nprotect` records `u64 start, u64 length, u32 protection` (PROT_NONE,
PROT_READ or PROT_READ_WRITE) that the shim applies, in order, to its
mapping of the global arena before it returns to the program
(`protection.py` says which pages are protected and why). Strings are
`u32 length` and that many UTF-8 bytes. `site` is where the host program made
the call: `str call` (the API's name, e.g. `cudaMemcpy`), `u32 nframes`,
then per frame of the call stack, innermost first and the shim's own frames
left out, `u64 address, str object`: a return address as a link-time address
of its object file (the runtime address minus the object's load bias, what
`addr2line` takes; the call instruction is the byte before it) and that
file's path (0 and an empty path when unknown). The server reports the
innermost frame in the user's code, so a call made through an inline
wrapper of the toolkit's headers (`cudaMalloc<T>`) is reported where the
program calls the wrapper. A launch's site is the stack of its
`__cudaPushCallConfiguration`, that is, of the `<<<...>>>`. `module` is the
handle the shim returned from `__cudaRegisterFatBinary`, one per
translation unit, or a module the program loaded through the driver API
(MODULE_LOAD), whose kernels the driver registers as the runtime does, with
the `CUfunction` handle as `host_fun`.

| opcode | request payload | reply payload |
|---|---|---|
| HELLO | `u32 pid` | - |
| REGISTER_FUNCTION | `u64 module, u64 host_fun, str device_name` | `u32 nparams`, then `u32 offset, u32 size` per parameter |
| REGISTER_VAR | `u64 module, u64 host_var, u64 size, u32 flags (VarFlag), str device_name` | `u64 device_address` |
| MALLOC | `u64 size, u32 kind (MemoryKind), u32 flags, u64 host`, site: `flags` are cudaHostAlloc's (HOST) or cudaHostRegister's (REGISTERED), else 0; `host` is the registered memory's address (REGISTERED), else 0 | `u64 address` (REGISTERED: the device address of `host`) |
| FREE | `u64 address, u32 kind`, site (REGISTERED: `address` is the host pointer given to cudaHostUnregister) | - |
| MEMCPY | `u64 dst, u64 src, u64 count, u32 direction (cudaMemcpyKind), u64 stream, u32 async`, site | `u64 dst, u64 src`: where the shim finds the bytes of each (`dst` and `src` themselves, but in the global arena for `cudaMalloc` memory); status 0: the shim copies |
| MEMCPY_2D | `u64 dst, u64 dpitch, u64 src, u64 spitch, u64 width, u64 height, u32 direction, u64 stream, u32 async`, site | `u64 dst, u64 src` as for MEMCPY: where the first rows are |
| MEMSET | `u64 dst, u64 pitch, u32 value, u64 width, u64 height, u64 stream, u32 async`, site (`cudaMemset` is one row: pitch = width = count, height 1) | `u64 dst` as for MEMCPY; status 0: the shim sets |
| LAUNCH | `u64 host_fun, u32 grid[3], u32 block[3], u64 shared_bytes, u64 stream, u32 flags (LaunchFlag)`, site, `u32 length` + parameter bytes | what the kernel printed (UTF-8, the whole payload) |
| SYNCHRONIZE | `u32 what (Wait), u64 handle` (the stream or event; 0 for the device), site | - |
| STREAM_CREATE | `u64 handle, u32 flags` (the shim's new handle; `cudaStreamNonBlocking` = 1; `GRAPH_NODE_STREAM`: a stream the shim made to replay a graph's node, named so in findings) | - |
| STREAM_DESTROY | `u64 handle` | - |
| EVENT_RECORD | `u64 event, u64 stream` | - |
| STREAM_WAIT_EVENT | `u64 stream, u64 event` | - |
| EVENT_ELAPSED | `u64 start, u64 end` | `f32 milliseconds` |
| RESET | site | - (every allocation freed, variables back to their initial values, the sticky error cleared) |
| FUNC_ATTRIBUTES | `u64 host_fun` | `u64 static_shared_bytes, u64 const_bytes, u64 local_bytes, u32 cluster[3]` (`__cluster_dims__`; zeros without), `u32 cluster_dims_must_be_set` (compiled with an explicit cluster of no fixed dimensions) |
| UNSUPPORTED | site (its `call` names the call) | - (the server records it; the shim then exits with status 2) |
| HOST_ACCESS | `u64 address, u32 write`, site (the faulting instruction's, as frame 0) | - (status 0: the access may go ahead; HOST_FAULT: it crashes the program, as on a GPU) |
| HOST_FLAGS | `u64 address` (a device address: the shim turns a registered host pointer into its own) | `u32 flags` (cudaHostGetFlags) |
| POINTER_ATTRIBUTES | `u64 address` (as for HOST_FLAGS) | `u32 type` (cudaMemoryType), `u64 device_pointer, u64 host_pointer` (cudaPointerGetAttributes) |
| FREE_ASYNC | `u64 address, u64 stream`, site (`cudaFreeAsync`: freed at once, as an operation of `stream` that writes the whole allocation) | - |
| MEM_INFO | - | `u64 free, u64 total` (`cudaMemGetInfo`: the global arena's bytes, and those no live allocation holds) |
| MODULE_LOAD | `u64 module, str path`, site, `u32 length` + the image (`cuModuleLoad*` of the driver API, `libcuda.so.1`: `module` is the shim's new handle, `path` the file `cuModuleLoad` read, else empty; the image is PTX, a fatbinary, a cubin or a linked image of several, `module_images.py`) | - (STOP: an image gpurace cannot run, recorded) |
| MODULE_UNLOAD | `u64 module` | - (INVALID_RESOURCE_HANDLE: no loaded module) |
| MODULE_GLOBAL | `u64 module, str name` (a variable's PTX name) | `u64 address, u64 size` (INVALID_SYMBOL: the module has no such variable) |
| COMPILED_CODE | `u32 length` + a cubin, `str ptx` (the PTX NVRTC compiled the cubin from, for a program that compiles its kernels at run time: `shim/nvrtc_capture.c`) | - (a module later loaded from that cubin runs the PTX) |
| OBJECT_CREATE | `u32 object (ObjectKind), u32 resource (ResourceKind), u64 base, u64 width, u64 height, u64 pitch, u32 dims, u64 depth, u32 layered` (depth: the slices of a 3D array, the layers of a layered one, else 1; layered: bit 0 a layered array, bit 1 a cube map, whose six faces are its layers), the channel format `u32 x, u32 y, u32 z, u32 w, u32 kind`, the sampling `u32 address_mode[3], u32 filter_mode, u32 read_mode, u32 normalized, f32 border[4]` (zeros for a surface), `u32 levels` (0 but for a texture over a mipmapped array, whose level 0 the fields above describe: then `u32 mipmap_filter_mode, f32 level_bias, f32 min_level_clamp, f32 max_level_clamp, u32 max_anisotropy` and `u64 base, u64 width, u64 height, u64 depth` per level), site | `u64 handle` (INVALID_VALUE: a texture CUDA refuses) |
| OBJECT_DESTROY | `u64 handle` | - (INVALID_VALUE: not a live object) |
| TENSOR_MAP | `u32 data_type, u32 rank, u64 address`, `u64` extent per dimension, `u64` stride per dimension but the first, `u32` box extent and `u32` element stride per dimension (innermost first, as `cuTensorMapEncodeTiled` takes them), `u32 interleave, u32 swizzle, u32 oob_fill`, site | the 128-byte map (`sim.tensor_maps`; status 1, CUDA_ERROR_INVALID_VALUE: a map the driver refuses) |
| VIRTUAL_MEMORY | `u32 action (virtual_memory.VirtualAction), u64 a, u64 b, u64 c, u64 d` (the action's numbers, unused ones 0), site (the driver's virtual memory management: `cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`, ...) | `u64` the reserved address or the new handle, else 0 (the driver's errors; STOP: a use gpurace refuses, recorded) |
| GRAPH_MEMORY | `u32 action (graph_memory.GraphMemoryAction), u64 a, u64 b, u64 c` (the action's numbers, unused ones 0), site (graph memory nodes: reserving a graph allocation's address, allocating it when its node runs on stream `c`, the usage attributes; conditional nodes: a handle's condition made, read on stream `c`, assigned its default) | `u64` the reserved address, the new handle, the condition or the figure asked for, else 0 |

A reply with status `STOP` (-1) means gpurace cannot go on with this
program (it has recorded why: a launch it cannot simulate, an internal
error); the shim then ends the program with exit status 2 at once.

Errors and their timing follow CUDA's: a launch that a GPU would refuse
(invalid configuration, too much shared memory) fails at the launch; a
launch that fails while it runs (`STICKY`: an illegal address, ...) succeeds,
and its error is the status of every later request until RESET, as the
error of an asynchronous launch surfaces at the next synchronising call and
then sticks to the context. Every call runs to completion before its reply:
asynchronous copies and launches are synchronous.

The shim answers locally what needs no device: `cudaGetLastError`,
`cudaGetErrorString`, the virtual device's properties, and it makes the
handles of streams and events (unique addresses of its own). Every other
call NVIDIA's runtime exports is a stub that sends UNSUPPORTED and exits; a call that neither defines fails in the dynamic
linker ("undefined symbol: cudaXxx"), which the server reports the same way.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum, IntFlag

ENV_SOCKET = "GPURACE_RUNTIME_FD"
ENV_GLOBAL_FD, ENV_GLOBAL_BASE, ENV_GLOBAL_BYTES = "GPURACE_GLOBAL_FD", "GPURACE_GLOBAL_BASE", "GPURACE_GLOBAL_BYTES"
ENV_CONST_FD, ENV_CONST_BASE, ENV_CONST_BYTES = "GPURACE_CONST_FD", "GPURACE_CONST_BASE", "GPURACE_CONST_BYTES"
ENV_WINDOW_BASE, ENV_WINDOW_BYTES = "GPURACE_WINDOW_BASE", "GPURACE_WINDOW_BYTES"
ENV_DEVICE_CC, ENV_DEVICE_SHARED_OPTIN = "GPURACE_DEVICE_CC", "GPURACE_DEVICE_SHARED_OPTIN"


class Op(IntEnum):
    HELLO = 0
    REGISTER_FUNCTION = 1
    REGISTER_VAR = 2
    MALLOC = 3
    FREE = 4
    MEMCPY = 5
    MEMSET = 6
    LAUNCH = 7
    SYNCHRONIZE = 8
    UNSUPPORTED = 9
    MEMCPY_2D = 10
    RESET = 11
    FUNC_ATTRIBUTES = 12
    STREAM_CREATE = 13
    STREAM_DESTROY = 14
    EVENT_RECORD = 15
    STREAM_WAIT_EVENT = 16
    EVENT_ELAPSED = 17
    HOST_ACCESS = 18
    HOST_FLAGS = 19
    FREE_ASYNC = 20
    MEM_INFO = 21
    MODULE_LOAD = 22
    MODULE_UNLOAD = 23
    MODULE_GLOBAL = 24
    COMPILED_CODE = 30
    OBJECT_CREATE = 40
    OBJECT_DESTROY = 41
    TENSOR_MAP = 42
    VIRTUAL_MEMORY = 43
    GRAPH_MEMORY = 44
    POINTER_ATTRIBUTES = 45


class ObjectKind(IntEnum):
    """What an OBJECT_CREATE makes."""

    TEXTURE = 0  # cudaCreateTextureObject
    SURFACE = 1  # cudaCreateSurfaceObject


class ResourceKind(IntEnum):
    """Where an object's texels are (`sim.textures.Resource.kind`): a CUDA array is allocated by the shim in
    the global arena, row-major with pitch = width x texel size, so all three are global memory."""

    ARRAY = 0
    LINEAR = 1
    PITCH2D = 2


class Wait(IntEnum):
    """What a SYNCHRONIZE request waits for."""

    DEVICE = 0  # cudaDeviceSynchronize
    STREAM = 1  # cudaStreamSynchronize, a successful cudaStreamQuery
    EVENT = 2  # cudaEventSynchronize, a successful cudaEventQuery


class MemoryKind(IntEnum):
    DEVICE = 0  # cudaMalloc
    MANAGED = 1  # cudaMallocManaged
    HOST = 2  # cudaMallocHost / cudaHostAlloc (page-locked host memory, which kernels can reach by UVA)
    REGISTERED = 3  # cudaHostRegister: the program's own memory, page-locked and mapped for the device


GRAPH_NODE_STREAM = 1 << 31
"""A STREAM_CREATE flag: the stream is one the shim made to replay a node of a CUDA graph (shim/graphs.h), not
one the program created; findings name it so, and the program's own streams keep their numbers."""

HOST_MAPPED = 2
"""`cudaHostAllocMapped` and `cudaHostRegisterMapped`: with unified addressing every page-locked block is mapped,
so cudaHostGetFlags reports this bit whatever the program asked for (as NVIDIA's runtime does)."""


class LaunchFlag(IntFlag):
    """How a LAUNCH runs: COOPERATIVE as `cudaLaunchCooperativeKernel` launches (`sim.cooperative`), or with
    `cudaLaunchKernelEx`'s cudaLaunchAttributeCooperative; CLUSTER with cudaLaunchAttributeClusterDimension, whose
    three dimensions follow the flags in the request (`sim.clusters`)."""

    COOPERATIVE = 1
    CLUSTER = 2


class VarFlag(IntFlag):
    CONSTANT = 1  # __constant__
    MANAGED = 2  # __managed__


class MemcpyKind(IntEnum):
    """`cudaMemcpyKind`: which side each pointer of a copy is on (DEFAULT: inferred from the pointers)."""

    HOST_TO_HOST = 0
    HOST_TO_DEVICE = 1
    DEVICE_TO_HOST = 2
    DEVICE_TO_DEVICE = 3
    DEFAULT = 4


class CudaError(IntEnum):
    """The `cudaError_t` values the device server returns (numbers as in `driver_types.h`)."""

    SUCCESS = 0
    INVALID_VALUE = 1
    MEMORY_ALLOCATION = 2
    INVALID_CONFIGURATION = 9
    INVALID_PITCH_VALUE = 12
    INVALID_SYMBOL = 13
    INVALID_DEVICE_POINTER = 17
    INVALID_MEMCPY_DIRECTION = 21
    INVALID_DEVICE_FUNCTION = 98
    INVALID_RESOURCE_HANDLE = 400
    ILLEGAL_ADDRESS = 700
    LAUNCH_OUT_OF_RESOURCES = 701
    LAUNCH_TIMEOUT = 702
    ASSERT = 710
    HOST_MEMORY_ALREADY_REGISTERED = 712
    HOST_MEMORY_NOT_REGISTERED = 713
    HARDWARE_STACK_ERROR = 714
    ILLEGAL_INSTRUCTION = 715
    MISALIGNED_ADDRESS = 716
    INVALID_ADDRESS_SPACE = 717
    INVALID_PC = 718
    LAUNCH_FAILURE = 719
    COOPERATIVE_LAUNCH_TOO_LARGE = 720
    NOT_SUPPORTED = 801
    INVALID_CLUSTER_SIZE = 912


STICKY = frozenset(
    {
        CudaError.ILLEGAL_ADDRESS,
        CudaError.LAUNCH_TIMEOUT,
        CudaError.ASSERT,
        CudaError.HARDWARE_STACK_ERROR,
        CudaError.ILLEGAL_INSTRUCTION,
        CudaError.MISALIGNED_ADDRESS,
        CudaError.INVALID_ADDRESS_SPACE,
        CudaError.INVALID_PC,
        CudaError.LAUNCH_FAILURE,
    }
)
"""Errors that end a running kernel and stick to the context (the shim's `is_sticky` lists the same)."""

STOP = -1
"""The reply status that ends the program (exit status 2); see above."""

HOST_FAULT = 1
"""The reply to HOST_ACCESS when the access would crash the program on a GPU's host (device memory, freed memory)."""

PROT_NONE, PROT_READ, PROT_READ_WRITE = 0, 1, 3  # as mprotect takes them

HEADER = struct.Struct("<II")
REPLY = struct.Struct("<iII")
PROTECT_RECORD = struct.Struct("<QQI")


@dataclass(frozen=True)
class WireSite:
    """A `site` as sent: the call's name and its call stack, (link-time return address, object file) per frame."""

    call: str
    frames: tuple[tuple[int, str], ...]


class Reader:
    """Decodes one request payload, field by field, in the order the table above gives."""

    def __init__(self, payload: bytes):
        self._data = payload
        self._pos = 0

    def _take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self._data, self._pos)
        self._pos += struct.calcsize(fmt)
        return value

    def u32(self) -> int:
        return self._take("<I")

    def u64(self) -> int:
        return self._take("<Q")

    def f32(self) -> float:
        return self._take("<f")

    def dims(self) -> tuple[int, int, int]:
        return (self.u32(), self.u32(), self.u32())

    def bytes(self) -> bytes:
        n = self.u32()
        data = self._data[self._pos : self._pos + n]
        if len(data) != n:
            raise struct.error("truncated payload")
        self._pos += n
        return data

    def str(self) -> str:
        return self.bytes().decode("utf-8", errors="replace")

    def site(self) -> WireSite:
        call = self.str()
        return WireSite(call, tuple((self.u64(), self.str()) for _ in range(self.u32())))


def encode_reply(status: int, payload: bytes = b"", protect: list[tuple[int, int, int]] = ()) -> bytes:
    """A reply, with the protection changes `protect` ((start, length, protection) records)."""
    records = b"".join(PROTECT_RECORD.pack(*r) for r in protect)
    return REPLY.pack(int(status), len(payload), len(protect)) + payload + records
