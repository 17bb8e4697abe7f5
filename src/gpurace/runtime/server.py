"""The device server: answers one program's CUDA requests (see `protocol`) on a `Device`.

It runs in the gpurace process, one request at a time, until the program's
end closes the socket. Memory calls are checked (`host_checks`) and, when
allowed, carried out by the shim in the shared arenas (host memory the
program registers is given a block there, which the shim makes the
program's memory: `heap.Heap.register`); kernel launches run
in the simulator (`launch.run_launch`) on the same memory. Each copy, memset
and launch is an operation on a stream of the `streams.Timeline`, which
reports those that the program's streams and events leave unordered and that
touch the same bytes. The errors a CUDA
runtime would return go back to the program; what makes the program
impossible to go on with (an unsupported call, a launch the simulator cannot
run) is recorded in `errors` and ends it with exit status 2.
"""

from __future__ import annotations

import re
import select
import socket
import struct
import time
from functools import partial

from gpurace.detect.bytesets import PAGE_SHIFT
from gpurace.detect.footprint import Footprint, LaunchFootprint, Spans
from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature
from gpurace.runtime.device import Device
from gpurace.runtime.graph_memory import Attribute, GraphMemory, GraphMemoryAction
from gpurace.sim.graph_conditionals import CONDITION_BYTES
from gpurace.runtime.host_checks import HostChecks
from gpurace.runtime.launch import device_launch_log, run_launch
from gpurace.runtime.module_images import code_key, read_image
from gpurace.runtime.protocol import (
    GRAPH_NODE_STREAM,
    HEADER,
    HOST_FAULT,
    HOST_MAPPED,
    REPLY,
    STICKY,
    STOP,
    CudaError,
    LaunchFlag,
    MemcpyKind,
    MemoryKind,
    ObjectKind,
    Op,
    Reader,
    VarFlag,
    Wait,
    WireSite,
    encode_reply,
)
from gpurace.runtime.protection import host_pages
from gpurace.runtime.sites import at_where
from gpurace.runtime.streams import Clock, Operation, Timeline
from gpurace.runtime.texture_objects import read_object
from gpurace.runtime.virtual_memory import Refused, VirtualAction, VirtualMemory
from gpurace.sim.printf import DeviceOutput
from gpurace.sim.tensor_maps import CUDA_ERROR_INVALID_VALUE, MAX_RANK, encode_tiled

_NEEDS_LIVE_CONTEXT = frozenset(
    {Op.MALLOC, Op.FREE, Op.FREE_ASYNC, Op.MEMCPY, Op.MEMCPY_2D, Op.MEMSET, Op.LAUNCH, Op.SYNCHRONIZE, Op.STREAM_CREATE, Op.EVENT_RECORD, Op.STREAM_WAIT_EVENT}
)
"""Requests that a sticky launch error answers, without effect, until RESET."""


MEMORY_UNREGISTERED = 0
POINTER_TYPES = {MemoryKind.HOST: 1, MemoryKind.REGISTERED: 1, MemoryKind.DEVICE: 2, MemoryKind.MANAGED: 3}
"""`cudaMemoryType` by kind of block: unregistered (0), host (1: page-locked), device (2), managed (3)."""


class DeviceServer:
    """The requests of one program on `device`; `errors` say why it had to stop, if it did."""

    def __init__(self, device: Device):
        self.device = device
        self.checks = HostChecks(device)
        self.functions: dict[int, tuple[int, str]] = {}  # host stub (or CUfunction) -> module index, mangled name
        self.sticky: CudaError | None = None
        self.errors: list[str] = []
        self.failure: BaseException | None = None  # an internal error, raised again once the program has ended
        self.timeline = Timeline(device.describe_address, budget=device.limits.max_memory // 8)
        self.event_times: dict[int, float] = {}  # event handle -> the device's simulated time at its record
        self._protected_version = self.timeline.version
        self.next_object = 0  # the last texture or surface object handle given out
        self.virtual = VirtualMemory(device.heap)
        self.graph_memory = GraphMemory(device.heap)
        self.partial_footprints = 0  # launches whose footprint outgrew its budget (streams.py: fewer races seen)
        self.compiled: dict[bytes, str] = {}  # code_key(cubin) -> the PTX the program's NVRTC compiled it from
        self._handlers = {
            Op.HELLO: self._hello,
            Op.REGISTER_FUNCTION: self._register_function,
            Op.REGISTER_VAR: self._register_var,
            Op.MODULE_LOAD: self._module_load,
            Op.MODULE_UNLOAD: self._module_unload,
            Op.MODULE_GLOBAL: self._module_global,
            Op.COMPILED_CODE: self._compiled_code,
            Op.MALLOC: self._malloc,
            Op.FREE: self._free,
            Op.FREE_ASYNC: self._free_async,
            Op.MEM_INFO: self._mem_info,
            Op.MEMCPY: self._memcpy,
            Op.MEMCPY_2D: self._memcpy_2d,
            Op.MEMSET: self._memset,
            Op.LAUNCH: self._launch,
            Op.SYNCHRONIZE: self._synchronize,
            Op.RESET: self._reset,
            Op.FUNC_ATTRIBUTES: self._func_attributes,
            Op.STREAM_CREATE: self._stream_create,
            Op.STREAM_DESTROY: self._stream_destroy,
            Op.EVENT_RECORD: self._event_record,
            Op.STREAM_WAIT_EVENT: self._stream_wait_event,
            Op.EVENT_ELAPSED: self._event_elapsed,
            Op.HOST_ACCESS: self._host_access,
            Op.HOST_FLAGS: self._host_flags,
            Op.POINTER_ATTRIBUTES: self._pointer_attributes,
            Op.OBJECT_CREATE: self._object_create,
            Op.OBJECT_DESTROY: self._object_destroy,
            Op.TENSOR_MAP: self._tensor_map,
            Op.VIRTUAL_MEMORY: self._virtual_memory,
            Op.GRAPH_MEMORY: self._graph_memory,
            Op.UNSUPPORTED: self._unsupported,
        }

    def serve(self, sock: socket.socket, deadline: float | None) -> bool:
        """Answer requests until the program closes `sock` (or dies); False when `deadline` (monotonic) passed first."""
        try:
            while True:
                header = _receive(sock, HEADER.size, deadline)
                if header is None:
                    return True
                if header is _TIMED_OUT:
                    return False
                op, length = HEADER.unpack(header)
                payload = _receive(sock, length, None) if length else b""
                if payload is None:
                    return True
                sock.sendall(self.answer(op, payload))
        except (BrokenPipeError, ConnectionResetError):  # the program ended while a thread of it waited for a reply
            return True

    def answer(self, op: int, payload: bytes) -> bytes:
        """The reply to one request, with the changes to the protection of device memory it brought."""
        try:
            op = Op(op)
            if self.sticky is not None and op in _NEEDS_LIVE_CONTEXT:
                reply = encode_reply(self.sticky)
            else:
                reply = self._handlers[op](Reader(payload))
            return self._with_protection(reply)
        except Exception as e:  # noqa: BLE001 - kept, and raised again when the program has ended
            self.failure = self.failure or e
            return encode_reply(STOP)

    def _with_protection(self, reply: bytes) -> bytes:
        """`reply` (made by `encode_reply` with no protection records) with the protection changes since the last."""
        protection = self.device.heap.protection
        if self.timeline.version != self._protected_version:
            self._protected_version = self.timeline.version
            protection.pending_work(op.host_use for op in self.timeline.pending if op.host_use is not None)
        records = protection.take()
        if not records:
            return reply
        status, length, _ = REPLY.unpack_from(reply)
        return encode_reply(status, reply[REPLY.size : REPLY.size + length], records)

    # ------------------------------------------------------------------ start-up

    def _hello(self, r: Reader) -> bytes:
        return encode_reply(CudaError.SUCCESS)

    def _register_function(self, r: Reader) -> bytes:
        handle, host_fun, name = r.u64(), r.u64(), r.str()
        found = self.device.register_function(handle, name)
        if found is None:
            return encode_reply(CudaError.INVALID_DEVICE_FUNCTION)
        index, layout = found
        self.functions[host_fun] = (index, name)
        payload = struct.pack("<I", len(layout)) + b"".join(struct.pack("<II", o, s) for o, s in layout)
        return encode_reply(CudaError.SUCCESS, payload)

    def _register_var(self, r: Reader) -> bytes:
        handle, _host_var, _size, flags, name = r.u64(), r.u64(), r.u64(), r.u32(), r.str()
        alloc = self.device.register_variable(handle, name, managed=bool(flags & VarFlag.MANAGED))
        if alloc is None:
            return encode_reply(CudaError.INVALID_SYMBOL)
        return encode_reply(CudaError.SUCCESS, struct.pack("<Q", alloc.base))

    def _module_load(self, r: Reader) -> bytes:
        """`cuModuleLoad*`: the image becomes a module of its own (`Device.load`); one gpurace cannot run stops
        the program, saying why."""
        handle, path, site, image = r.u64(), r.str(), r.site(), r.bytes()
        where = path or f"the image given to {site.call}"
        try:
            loaded = read_image(image, where, self.device.capability, self.device.limits, self.compiled)
            self.device.load(handle, loaded, where)
        except UserError as e:
            return self._stop(site, str(e))
        return encode_reply(CudaError.SUCCESS)

    def _compiled_code(self, r: Reader) -> bytes:
        """A cubin the program's NVRTC compiled, with its PTX: a module loaded from it runs that PTX."""
        cubin, ptx = r.bytes(), r.str()
        self.compiled[code_key(cubin)] = ptx
        return encode_reply(CudaError.SUCCESS)

    def _module_unload(self, r: Reader) -> bytes:
        """`cuModuleUnload`: its functions are no longer launched (INVALID_DEVICE_FUNCTION, as after a GPU's)."""
        index = self.device.unload(r.u64())
        if index is None:
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        self.functions = {fun: kernel for fun, kernel in self.functions.items() if kernel[0] != index}
        return encode_reply(CudaError.SUCCESS)

    def _module_global(self, r: Reader) -> bytes:
        handle, name = r.u64(), r.str()
        alloc = self.device.loaded_global(handle, name)
        if alloc is None:
            return encode_reply(CudaError.INVALID_SYMBOL)
        return encode_reply(CudaError.SUCCESS, struct.pack("<QQ", alloc.base, alloc.size))

    def _func_attributes(self, r: Reader) -> bytes:
        kernel = self.functions.get(r.u64())
        attrs = self.device.kernel_attributes(*kernel) if kernel else None
        if attrs is None:
            return encode_reply(CudaError.INVALID_DEVICE_FUNCTION)
        payload = struct.pack(
            "<QQQ3II", attrs.static_shared_bytes, attrs.const_bytes, attrs.local_bytes, *attrs.cluster_dims,
            attrs.cluster_dims_must_be_set,
        )  # fmt: skip
        return encode_reply(CudaError.SUCCESS, payload)

    # ------------------------------------------------------------------ memory

    def _malloc(self, r: Reader) -> bytes:
        size, kind, flags, host, site = r.u64(), MemoryKind(r.u32()), r.u32(), r.u64(), r.site()
        if kind is MemoryKind.REGISTERED:
            status, block = self.checks.register(host, size, flags, site)
        else:
            block = self.device.heap.allocate(size, kind, site, flags)
            status = CudaError.SUCCESS if block is not None else CudaError.MEMORY_ALLOCATION
        if block is None:
            return encode_reply(status)
        return encode_reply(CudaError.SUCCESS, struct.pack("<Q", block.allocation.base))

    def _free(self, r: Reader) -> bytes:
        address, kind, site = r.u64(), MemoryKind(r.u32()), r.site()
        if kind is MemoryKind.REGISTERED:
            return encode_reply(self.checks.unregister(address, site))
        self.timeline.host_waits_for_device()  # cudaFree waits for the device's work, as NVIDIA's runtime does
        return encode_reply(self._release(address, kind, site, {}))

    def _free_async(self, r: Reader) -> bytes:
        """`cudaFreeAsync`: the free runs now, as every call does, but in `stream`'s order, not the device's: the
        host does not wait, and the free writes the whole allocation as an operation of `stream`, so work of
        another stream that the program left unordered with it races with it."""
        address, stream, site = r.u64(), r.u64(), r.site()
        if not self.timeline.known_stream(stream):
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        block = self.device.heap.blocks.get(address)
        if block is not None and block.freed_at is None and block.kind is MemoryKind.DEVICE:
            alloc = block.allocation
            self._queue(site, stream, Spans(), Spans(((alloc.canonical_base, alloc.canonical_base + alloc.size),)), blocking=False)
        return encode_reply(self._release(address, MemoryKind.DEVICE, site, self.timeline.stream_clock(stream)))

    def _release(self, address: int, kind: MemoryKind, site: WireSite, clock: Clock) -> CudaError:
        """Free `address` (checked) at `clock` (stream order; empty: after the device's work); a graph allocation's
        address space is then unmapped (`graph_memory`)."""
        status = self.checks.free(address, kind, site)
        if status is CudaError.SUCCESS:
            self.graph_memory.freed(address, clock)
        return status

    def _mem_info(self, _r: Reader) -> bytes:
        """`cudaMemGetInfo`: the bytes of the global arena no live allocation holds, and all of them."""
        heap = self.device.heap
        used = sum(block.allocation.size for block in heap.live())
        return encode_reply(CudaError.SUCCESS, struct.pack("<QQ", max(heap.arena.nbytes - used, 0), heap.arena.nbytes))

    def _host_flags(self, r: Reader) -> bytes:
        """cudaHostGetFlags of page-locked memory (any address inside it): its flags, mapped with unified addressing."""
        block = self.device.heap.block_at(r.u64())
        page_locked = block is not None and block.kind in (MemoryKind.HOST, MemoryKind.REGISTERED)
        if not page_locked or block.freed_at is not None:
            return encode_reply(CudaError.INVALID_VALUE)
        return encode_reply(CudaError.SUCCESS, struct.pack("<I", block.flags | HOST_MAPPED))

    def _pointer_attributes(self, r: Reader) -> bytes:
        """cudaPointerGetAttributes: what memory `address` is in (`POINTER_TYPES`), and its device and host
        addresses. Memory of the arena that no block holds (a `__device__` variable, a graph or virtual memory
        allocation) is device memory; a freed block's is no memory (cudaErrorInvalidValue); any other address
        is host memory the program did not register."""
        address = r.u64()
        block = self.device.heap.block_at(address)
        if block is not None and block.freed_at is not None:
            return encode_reply(CudaError.INVALID_VALUE)
        if block is None:
            arena = self.device.heap.arena
            kind = MemoryKind.DEVICE if arena.table.find(address) is not None else None
        else:
            kind = block.kind
        if kind is None:
            return encode_reply(CudaError.SUCCESS, struct.pack("<IQQ", MEMORY_UNREGISTERED, 0, 0))
        if kind is MemoryKind.DEVICE:
            host = 0
        elif kind is MemoryKind.REGISTERED:  # the program's own address of the byte
            host = block.host + (address - block.allocation.base)
        else:  # managed and page-locked memory have one address
            host = address
        return encode_reply(CudaError.SUCCESS, struct.pack("<IQQ", POINTER_TYPES[kind], address, host))

    def _memcpy(self, r: Reader) -> bytes:
        dst, src, count, direction, stream, is_async, site = r.u64(), r.u64(), r.u64(), r.u32(), r.u64(), r.u32(), r.site()
        if not self.timeline.known_stream(stream):
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        status = self.checks.copy(dst, src, count, direction, site)
        if status is not CudaError.SUCCESS:
            return encode_reply(status)
        blocking = self._copy_blocks(dst, src, direction, bool(is_async))
        to, of = self._in_arena(dst), self._in_arena(src)
        self._queue(site, stream, Spans(((of, of + count),)), Spans(((to, to + count),)), blocking)
        return encode_reply(status, struct.pack("<QQ", to, of))

    def _memcpy_2d(self, r: Reader) -> bytes:
        dst, dpitch, src, spitch, width, height = (r.u64() for _ in range(6))
        direction, stream, is_async, site = r.u32(), r.u64(), r.u32(), r.site()
        if not self.timeline.known_stream(stream):
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        status = self.checks.copy_2d(dst, dpitch, src, spitch, width, height, direction, site)
        if status is not CudaError.SUCCESS:
            return encode_reply(status)
        to, of = self._in_arena(dst), self._in_arena(src)
        reads, writes = Spans.rows(of, spitch, width, height), Spans.rows(to, dpitch, width, height)
        self._queue(site, stream, reads, writes, self._copy_blocks(dst, src, direction, bool(is_async)))
        return encode_reply(status, struct.pack("<QQ", to, of))

    def _memset(self, r: Reader) -> bytes:
        dst, pitch, _value, width, height = r.u64(), r.u64(), r.u32(), r.u64(), r.u64()
        stream, is_async, site = r.u64(), r.u32(), r.site()
        if not self.timeline.known_stream(stream):
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        status = self.checks.memset(dst, pitch, width, height, site)
        if status is not CudaError.SUCCESS:
            return encode_reply(status)
        # cudaMemset is asynchronous, except into managed or page-locked host memory.
        blocking = not is_async and self._host_side(dst)
        to = self._in_arena(dst)
        self._queue(site, stream, Spans(), Spans.rows(to, pitch, width, height), blocking)
        return encode_reply(status, struct.pack("<Q", to))

    def _in_arena(self, address: int) -> int:
        """Where the shim finds the bytes of a pointer that a copy or memset was allowed to use: in the arena for
        device memory (its own address, but for `cudaMalloc` memory: `spread.py`), the pointer itself for host
        memory. The pointer's whole range is in one allocation (the call was checked), so its other bytes
        follow from its first."""
        return self.device.global_arena.canonical(address)

    def _host_side(self, address: int) -> bool:
        """Whether `address` is memory the host can touch: pageable memory, or managed or page-locked memory."""
        return self.device.arena_of(address) is None or self.device.host_visible(address)

    def _copy_blocks(self, dst: int, src: int, direction: int, is_async: bool) -> bool:
        """Whether the host waits for a copy to end (the runtime API's "API synchronization behavior"):
        `cudaMemcpy` does unless it copies device to device; `cudaMemcpyAsync` only into pageable memory."""
        if is_async:
            return self.device.arena_of(dst) is None
        if direction == MemcpyKind.DEVICE_TO_DEVICE:
            return False
        return self._host_side(dst) or self._host_side(src)

    def _queue(self, site: WireSite, stream: int, reads: Spans, writes: Spans, blocking: bool) -> None:
        """A copy or memset that goes ahead, as an operation of the timeline; its races become findings."""
        frame = self.device.source_lines.frame(site)
        what = f"{site.call} {at_where(frame.where())}".rstrip()
        op = Operation(what, Footprint(reads, writes), lambda _address, _write: frame.site())
        self._issue(stream, op, blocking)

    def _issue(self, stream: int, op: Operation, blocking: bool) -> None:
        """Queue `op` on the timeline; its races become findings."""
        visible = [b.allocation for b in self.device.heap.host_visible.values()]
        op.host_use = host_pages(op.footprint, visible) if visible else None
        self.device.findings.extend(self.timeline.issue(stream, op, blocking))

    # ------------------------------------------------------------------ launches and the context

    def _launch(self, r: Reader) -> bytes:
        host_fun, grid, block, shared_bytes, stream, flags = r.u64(), r.dims(), r.dims(), r.u64(), r.u64(), LaunchFlag(r.u32())
        cluster = r.dims() if LaunchFlag.CLUSTER in flags else None
        site, params = r.site(), r.bytes()
        kernel = self.functions.get(host_fun)
        if kernel is None:
            return encode_reply(CudaError.INVALID_DEVICE_FUNCTION)
        module, name = kernel
        if not self.timeline.known_stream(stream):
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        frame = self.device.source_lines.frame(site)
        self.device.launches += 1
        footprint = LaunchFootprint(budget=self.device.limits.max_memory // 8)
        output = DeviceOutput()
        log = device_launch_log(self.device, module)
        try:
            status, launch = run_launch(
                self.device, module, name, grid, block, shared_bytes, params, frame, sinks=[footprint, output, *([log] if log else [])],
                cooperative=LaunchFlag.COOPERATIVE in flags, cluster=cluster,
            )  # fmt: skip
        except UserError as e:
            self.errors.append(f"{_prefix(frame.where())}the launch of {_readable_kernel(name)} cannot be simulated: {e}")
            return encode_reply(STOP)
        what = f"kernel {launch['kernel']} (launched {at_where(launch['host'] or '')})"
        self._issue(stream, Operation(what, footprint.footprint(), footprint.site, launch=launch), blocking=False)
        for grid in log.grids if log else ():  # the grids it launched: it completes when they have (`child_grids`)
            self._issue(stream, Operation(grid.what, grid.footprint, grid.site, launch=grid.launch), blocking=False)
        self.partial_footprints += not footprint.complete
        printed = output.text().encode()
        if status in STICKY:
            self.sticky = CudaError(status)
            return encode_reply(CudaError.SUCCESS, printed)
        return encode_reply(status, printed)

    def _synchronize(self, r: Reader) -> bytes:
        what, handle = Wait(r.u32()), r.u64()
        if what is Wait.DEVICE:
            self.timeline.host_waits_for_device()
        elif what is Wait.STREAM:
            if not self.timeline.known_stream(handle):
                return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
            self.timeline.host_waits_for_stream(handle)
        else:
            self.timeline.host_waits_for_event(handle)
        return encode_reply(CudaError.SUCCESS)

    # ------------------------------------------------------------------ streams and events

    def _stream_create(self, r: Reader) -> bytes:
        handle, flags = r.u64(), r.u32()
        self.timeline.create_stream(handle, non_blocking=bool(flags & 1), graph_node=bool(flags & GRAPH_NODE_STREAM))
        return encode_reply(CudaError.SUCCESS)

    def _stream_destroy(self, r: Reader) -> bytes:
        handle = r.u64()
        if not self.timeline.known_stream(handle) or self.timeline.built_in(handle):
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        self.timeline.destroy_stream(handle)
        return encode_reply(CudaError.SUCCESS)

    def _event_record(self, r: Reader) -> bytes:
        event, stream = r.u64(), r.u64()
        if not self.timeline.known_stream(stream):
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        self.timeline.record_event(event, stream)
        self.event_times[event] = self.device.simulated_seconds
        return encode_reply(CudaError.SUCCESS)

    def _stream_wait_event(self, r: Reader) -> bytes:
        stream, event = r.u64(), r.u64()
        if not self.timeline.known_stream(stream):
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        self.timeline.wait_event(stream, event)
        return encode_reply(CudaError.SUCCESS)

    def _event_elapsed(self, r: Reader) -> bytes:
        """The simulated time of the kernels run between the two records (`Device.simulated_seconds`)."""
        start, end = self.event_times.get(r.u64()), self.event_times.get(r.u64())
        if start is None or end is None:
            return encode_reply(CudaError.INVALID_RESOURCE_HANDLE)
        return encode_reply(CudaError.SUCCESS, struct.pack("<f", (end - start) * 1000.0))

    def _reset(self, r: Reader) -> bytes:
        self.timeline.host_waits_for_device()
        self.device.reset(r.site())
        self.sticky = None
        return encode_reply(CudaError.SUCCESS)

    def _host_access(self, r: Reader) -> bytes:
        """The host code touched a protected page: a race with pending work, or an access a GPU's host could not
        make (HOST_FAULT: the program then crashes, as it would)."""
        address, write, site = r.u64(), bool(r.u32()), r.site()
        frame = self.device.source_lines.frame(site)
        block = self.device.heap.block_at(address)
        if block is None or not block.host_visible or block.freed_at is not None:
            self.checks.host_fault(address, write, block, site)
            return encode_reply(HOST_FAULT)
        race = self.timeline.host_access(address, write, frame.site())
        if race is not None:
            self.device.findings.add(race)
        self.device.heap.protection.opened(address >> PAGE_SHIFT)
        return encode_reply(CudaError.SUCCESS)

    # ------------------------------------------------------------------ texture and surface objects

    def _object_create(self, r: Reader) -> bytes:
        """A texture or surface object over memory the shim has checked; its handle (never 0, never reused)."""
        kind = ObjectKind(r.u32())
        try:
            obj = read_object(kind is ObjectKind.SURFACE, r)
        except UserError as e:
            return self._stop(r.site(), str(e))
        except ValueError:
            return encode_reply(CudaError.INVALID_VALUE)
        self.next_object += 1
        self.device.textures[self.next_object] = obj
        return encode_reply(CudaError.SUCCESS, struct.pack("<Q", self.next_object))

    def _object_destroy(self, r: Reader) -> bytes:
        if self.device.textures.pop(r.u64(), None) is None:
            return encode_reply(CudaError.INVALID_VALUE)
        return encode_reply(CudaError.SUCCESS)

    def _tensor_map(self, r: Reader) -> bytes:
        """`cuTensorMapEncodeTiled`: the map in the simulator's layout, or the driver's error for an invalid one."""
        data_type, rank, address = r.u32(), r.u32(), r.u64()
        if not 1 <= rank <= MAX_RANK:
            r.site()
            return encode_reply(CUDA_ERROR_INVALID_VALUE)
        dims = tuple(r.u64() for _ in range(rank))
        strides = tuple(r.u64() for _ in range(rank - 1))
        box = tuple(r.u32() for _ in range(rank))
        element_strides = tuple(r.u32() for _ in range(rank))
        interleave, swizzle, oob_fill = r.u32(), r.u32(), r.u32()
        site = r.site()
        try:
            encoded = encode_tiled(data_type, address, dims, strides, box, element_strides, interleave, swizzle, oob_fill)
        except UserError as e:
            return self._stop(site, f"{e}; the program was stopped")
        if isinstance(encoded, int):
            return encode_reply(encoded)
        return encode_reply(CudaError.SUCCESS, encoded)

    def _virtual_memory(self, r: Reader) -> bytes:
        """The driver's virtual memory management (`virtual_memory`): one action, four numbers, the call's site."""
        action, a, b, c, d, site = VirtualAction(r.u32()), r.u64(), r.u64(), r.u64(), r.u64(), r.site()
        if action is VirtualAction.UNMAP:
            self.timeline.host_waits_for_device()  # the driver unmaps once the device's work is done
        try:
            status, value = self.virtual.request(action, a, b, c, d, site)
        except Refused as e:
            return self._stop(site, f"{e}; the program was stopped")
        return encode_reply(status, struct.pack("<Q", value))

    def _graph_memory(self, r: Reader) -> bytes:
        """Graph memory nodes and the conditions of conditional nodes (`graph_memory`): one action, three numbers,
        the site of the call."""
        action, a, b, c, site = GraphMemoryAction(r.u32()), r.u64(), r.u64(), r.u64(), r.site()
        memory, status, value = self.graph_memory, CudaError.SUCCESS, 0
        if action is GraphMemoryAction.RESERVE:
            status, value = memory.reserve(a)
        elif action is GraphMemoryAction.ALLOCATE:
            known = self.timeline.known_stream(c)
            after = partial(self.timeline.comes_before, stream=c)  # whether a free comes before, in the stream's order
            status = memory.allocate(a, b, site, after) if known else CudaError.INVALID_RESOURCE_HANDLE
            if status is CudaError.SUCCESS:  # an operation of the node's stream, which writes the whole allocation
                self._queue(site, c, Spans(), Spans(((a, a + b),)), blocking=False)
        elif action is GraphMemoryAction.LIVE:
            value = int(memory.live(a))
        elif action is GraphMemoryAction.TRIM:
            memory.trim()
        elif action is GraphMemoryAction.GET_ATTRIBUTE:
            value = memory.attribute(Attribute(a))
        elif action is GraphMemoryAction.HANDLE:
            value = memory.condition_handle(a, site)
        elif action is GraphMemoryAction.CONDITION:
            condition = memory.condition(a) if self.timeline.known_stream(c) else None
            status = CudaError.SUCCESS if condition is not None else CudaError.INVALID_VALUE
            if condition is not None:  # the node reads it on its stream
                self._queue(site, c, Spans(((a, a + CONDITION_BYTES),)), Spans(), blocking=False)
                value = condition
        elif action is GraphMemoryAction.ASSIGN:
            status = memory.assign(a, b)
        else:
            status = memory.reset_high(Attribute(a))
        return encode_reply(status, struct.pack("<Q", value))

    def _stop(self, site, message: str) -> bytes:
        """Stop the program at the call `site` made, saying why (`message`): the shim then exits with status 2."""
        self.errors.append(f"{_prefix(self.device.source_lines.frame(site).where())}{site.call}: {message}")
        return encode_reply(STOP)

    def _unsupported(self, r: Reader) -> bytes:
        site = r.site()
        frame = self.device.source_lines.frame(site)
        self.errors.append(unsupported_message(site.call, frame.where()))
        return encode_reply(CudaError.SUCCESS)


def unsupported_message(call: str, where: str | None) -> str:
    """Why the program was stopped at an unsupported call (`where`: its host line, when known)."""
    if call.startswith("launch of kernel"):  # the shim names the kernel by its mangled name
        what = re.sub(r"\b_Z\w+", lambda m: _readable_kernel(m.group()), call)
    else:
        what = f"{call} is not supported by gpurace's simulated CUDA runtime"
    return f"{_prefix(where)}{what}; the program was stopped"


def _readable_kernel(mangled: str) -> str:
    """`read_theirs(int*)` for `_Z11read_theirsPi`."""
    sig = demangle_signature(mangled)
    return f"{sig.name}({', '.join(sig.param_types)})" if sig.param_types is not None else sig.name


def _prefix(where: str | None) -> str:
    return f"{where}: " if where else ""


_TIMED_OUT = object()


def _receive(sock: socket.socket, n: int, deadline: float | None) -> bytes | object | None:
    """Exactly `n` bytes; None when the program closed the socket, `_TIMED_OUT` when `deadline` passed first."""
    chunks: list[bytes] = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                return _TIMED_OUT
        chunk = sock.recv(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
