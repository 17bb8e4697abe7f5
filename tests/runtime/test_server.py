"""The device server's answers to the shim's requests (`runtime.protocol`), request by request."""

from __future__ import annotations

import socket
import struct
import time

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.runtime.device import Device
from gpurace.runtime.launch import launch_record
from gpurace.runtime.protocol import (
    GRAPH_NODE_STREAM,
    HOST_FAULT,
    PROT_NONE,
    PROTECT_RECORD,
    REPLY,
    STOP,
    CudaError,
    LaunchFlag,
    MemcpyKind,
    MemoryKind,
    ObjectKind,
    Op,
    ResourceKind,
    Wait,
)
from gpurace.runtime import server as server_module
from gpurace.runtime.server import DeviceServer
from gpurace.runtime.sites import SourceLines
from gpurace.sim.cooperative import WORKSPACE_NAME
from gpurace.sim.memory.layout import PAGE_SIZE
from gpurace.sim.textures import AddressMode, ChannelKind, FilterMode, SurfaceObject, TextureObject

MODULE = parse_ptx(
    ".version 8.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry _Z4fillPii(.param .u64 p0, .param .u32 p1) { ret; }\n",
    "fill.ptx",
)
STUB = 0x401000  # the host address of the kernel's stub
HOST = 0x7FFF_0000_1000


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def text(s: str) -> bytes:
    return u32(len(s)) + s.encode()


def site(call: str) -> bytes:
    return text(call) + u32(0)  # no frames: an unknown place


@pytest.fixture
def server():
    device = Device([MODULE], arch="compute_75", limits=Limits(max_memory=1 << 30), source_lines=SourceLines())
    yield DeviceServer(device)
    device.close()


def ask_protecting(server: DeviceServer, op: Op, payload: bytes) -> tuple[int, bytes, list[tuple[int, int, int]]]:
    """The reply's status, payload and protection records."""
    reply = server.answer(op, payload)
    status, length, nprotect = REPLY.unpack_from(reply)
    assert len(reply) == REPLY.size + length + nprotect * PROTECT_RECORD.size
    records = reply[REPLY.size + length :]
    return status, reply[REPLY.size : REPLY.size + length], list(PROTECT_RECORD.iter_unpack(records))


def ask(server: DeviceServer, op: Op, payload: bytes) -> tuple[int, bytes]:
    status, payload, _ = ask_protecting(server, op, payload)
    return status, payload


def allocation(size: int, kind: MemoryKind, call: str, flags: int = 0, host: int = 0) -> bytes:
    """A MALLOC payload."""
    return u64(size) + u32(kind) + u32(flags) + u64(host) + site(call)


def malloc(server, size: int) -> int:
    status, payload = ask(server, Op.MALLOC, allocation(size, MemoryKind.DEVICE, "cudaMalloc"))
    assert status == CudaError.SUCCESS
    return struct.unpack("<Q", payload)[0]


def memcpy(server, dst: int, src: int, count: int, kind: MemcpyKind) -> int:
    return ask(server, Op.MEMCPY, u64(dst) + u64(src) + u64(count) + u32(kind) + u64(0) + u32(0) + site("cudaMemcpy"))[0]


def launch(server, flags: LaunchFlag = LaunchFlag(0), grid: int = 1, block: int = 32, cluster=(1, 1, 1)) -> int:
    """A LAUNCH request; with LaunchFlag.CLUSTER, `cluster`'s dimensions follow the flags, as the shim sends them."""
    dims = b"".join(u32(c) for c in cluster) if LaunchFlag.CLUSTER in flags else b""
    payload = (
        u64(STUB) + u32(grid) + u32(1) * 2 + u32(block) + u32(1) * 2 + u64(0) + u64(0) + u32(flags) + dims
        + site("kernel launch") + u32(12) + bytes(12)
    )  # fmt: skip
    return ask(server, Op.LAUNCH, payload)[0]


def register(server) -> tuple[int, bytes]:
    return ask(server, Op.REGISTER_FUNCTION, u64(1) + u64(STUB) + text("_Z4fillPii"))


def fake_launch(monkeypatch, result):
    """Make `run_launch` return (or raise) `result` with the launch's record, recording its calls."""
    calls = []

    def run_launch(device, module, name, grid, block, shared_bytes, params, frame, sinks=(), cooperative=False, cluster=None):
        extra = (("cooperative",) if cooperative else ()) + ((("cluster", cluster),) if cluster is not None else ())
        calls.append((name, grid, block, shared_bytes, params, frame.call) + extra)
        if isinstance(result, Exception):
            raise result
        return result, launch_record(device, name, grid, block, frame)

    monkeypatch.setattr(server_module, "run_launch", run_launch)
    return calls


def test_register_function_answers_the_parameter_layout(server):
    status, payload = register(server)
    assert status == CudaError.SUCCESS and payload == u32(2) + u32(0) + u32(8) + u32(8) + u32(4)
    status, _ = ask(server, Op.REGISTER_FUNCTION, u64(1) + u64(STUB + 16) + text("_Z5otherv"))
    assert status == CudaError.INVALID_DEVICE_FUNCTION


def test_launch_hands_the_kernel_and_its_parameters_to_the_simulator(server, monkeypatch):
    calls = fake_launch(monkeypatch, 0)
    register(server)
    assert launch(server) == CudaError.SUCCESS
    assert calls == [("_Z4fillPii", (1, 1, 1), (32, 1, 1), 0, bytes(12), "kernel launch")]
    assert server.device.launches == 1


def test_a_failed_launch_sticks_until_reset(server, monkeypatch):
    fake_launch(monkeypatch, CudaError.ILLEGAL_ADDRESS)
    register(server)
    d = malloc(server, 64)
    assert launch(server) == CudaError.SUCCESS  # the launch itself succeeds, as an asynchronous one does
    assert memcpy(server, HOST, d, 4, MemcpyKind.DEVICE_TO_HOST) == CudaError.ILLEGAL_ADDRESS
    assert ask(server, Op.SYNCHRONIZE, u32(Wait.DEVICE) + u64(0) + site("cudaDeviceSynchronize"))[0] == CudaError.ILLEGAL_ADDRESS
    assert ask(server, Op.RESET, site("cudaDeviceReset"))[0] == CudaError.SUCCESS
    assert ask(server, Op.SYNCHRONIZE, u32(Wait.DEVICE) + u64(0) + site("cudaDeviceSynchronize"))[0] == CudaError.SUCCESS
    assert server.device.heap.live() == []


def test_a_launch_refused_at_launch_time_is_returned_by_the_launch(server, monkeypatch):
    fake_launch(monkeypatch, CudaError.INVALID_CONFIGURATION)
    register(server)
    assert launch(server) == CudaError.INVALID_CONFIGURATION
    assert ask(server, Op.SYNCHRONIZE, u32(Wait.DEVICE) + u64(0) + site("cudaDeviceSynchronize"))[0] == CudaError.SUCCESS


def test_a_launch_the_simulator_cannot_run_stops_the_program(server, monkeypatch):
    fake_launch(monkeypatch, UserError("unsupported instruction"))
    register(server)
    assert launch(server) == STOP
    assert server.errors == ["the launch of fill(int*, int) cannot be simulated: unsupported instruction"]


def test_an_internal_error_stops_the_program_and_is_kept(server, monkeypatch):
    fake_launch(monkeypatch, ZeroDivisionError("bug"))
    register(server)
    assert launch(server) == STOP
    assert isinstance(server.failure, ZeroDivisionError)


def test_an_unsupported_call_is_recorded(server):
    assert ask(server, Op.UNSUPPORTED, site("cudaHostRegister"))[0] == CudaError.SUCCESS
    assert server.errors == ["cudaHostRegister is not supported by gpurace's simulated CUDA runtime; the program was stopped"]


def test_memory_requests(server):
    d = malloc(server, 64)
    assert memcpy(server, d, HOST, 64, MemcpyKind.HOST_TO_DEVICE) == CudaError.SUCCESS
    assert memcpy(server, d, HOST, 65, MemcpyKind.HOST_TO_DEVICE) == CudaError.INVALID_VALUE
    assert ask(server, Op.MEMSET, u64(d) + u64(64) + u32(0) + u64(64) + u64(1) + u64(0) + u32(0) + site("cudaMemset"))[0] == CudaError.SUCCESS
    assert ask(server, Op.FREE, u64(d) + u32(MemoryKind.DEVICE) + site("cudaFree"))[0] == CudaError.SUCCESS
    assert ask(server, Op.MALLOC, allocation(1 << 40, MemoryKind.DEVICE, "cudaMalloc"))[0] == CudaError.MEMORY_ALLOCATION


def test_kernel_attributes(server):
    register(server)
    status, payload = ask(server, Op.FUNC_ATTRIBUTES, u64(STUB))
    # static shared, constant and local bytes; no __cluster_dims__, nor a cluster launch required
    assert status == CudaError.SUCCESS and struct.unpack("<QQQ3II", payload) == (0, 0, 0, 0, 0, 0, 0)
    assert ask(server, Op.FUNC_ATTRIBUTES, u64(STUB + 1))[0] == CudaError.INVALID_DEVICE_FUNCTION


def test_serving_ends_when_the_program_closes_its_end_or_the_deadline_passes(server):
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert server.serve(ours, time.monotonic() + 0.05) is False  # nothing came in time
        theirs.sendall(struct.pack("<II", Op.HELLO, 4) + u32(1234))
        theirs.shutdown(socket.SHUT_WR)
        assert server.serve(ours, None) is True
        assert theirs.recv(64) == REPLY.pack(CudaError.SUCCESS, 0, 0)


def test_device_memory_is_closed_to_the_host_and_an_access_there_crashes(server):
    status, payload, records = ask_protecting(server, Op.MALLOC, allocation(100, MemoryKind.DEVICE, "cudaMalloc"))
    (d,) = struct.unpack("<Q", payload)
    in_arena = server.device.global_arena.canonical(d)  # the pointer is in the device-only window, its bytes here
    assert status == CudaError.SUCCESS and in_arena != d and records == [(in_arena, 4096, PROT_NONE)]
    assert ask(server, Op.HOST_ACCESS, u64(d + 8) + u32(1) + site("write"))[0] == HOST_FAULT
    (finding,) = server.device.findings.sorted()
    assert finding.kind == "invalid-host-access" and finding.space == "global"
    assert (finding.address.allocation, finding.address.offset) == ("cudaMalloc#1", 8)
    assert finding.sites[0].op == "write" and finding.sites[0].thread is None


def test_stream_and_event_handles_are_checked(server):
    assert ask(server, Op.STREAM_DESTROY, u64(0))[0] == CudaError.INVALID_RESOURCE_HANDLE  # a default stream
    assert ask(server, Op.EVENT_RECORD, u64(0x500) + u64(0x600))[0] == CudaError.INVALID_RESOURCE_HANDLE
    assert ask(server, Op.STREAM_CREATE, u64(0x600) + u32(1))[0] == CudaError.SUCCESS
    assert ask(server, Op.EVENT_RECORD, u64(0x500) + u64(0x600))[0] == CudaError.SUCCESS
    assert ask(server, Op.EVENT_ELAPSED, u64(0x500) + u64(0x700))[0] == CudaError.INVALID_RESOURCE_HANDLE
    assert ask(server, Op.EVENT_RECORD, u64(0x700) + u64(0))[0] == CudaError.SUCCESS
    assert ask(server, Op.EVENT_ELAPSED, u64(0x500) + u64(0x700)) == (CudaError.SUCCESS, struct.pack("<f", 0.0))
    assert ask(server, Op.STREAM_DESTROY, u64(0x600))[0] == CudaError.SUCCESS
    assert ask(server, Op.STREAM_WAIT_EVENT, u64(0x600) + u64(0x500))[0] == CudaError.INVALID_RESOURCE_HANDLE


def test_a_2d_memset_is_checked_from_its_first_row_to_its_last(server):
    d = malloc(server, 1000)
    fields = lambda pitch, width, height: u64(d) + u64(pitch) + u32(0) + u64(width) + u64(height) + u64(0) + u32(0)
    assert ask(server, Op.MEMSET, fields(256, 200, 4) + site("cudaMemset2D"))[0] == CudaError.SUCCESS  # 968 bytes
    assert ask(server, Op.MEMSET, fields(256, 300, 2) + site("cudaMemset2D"))[0] == CudaError.INVALID_PITCH_VALUE
    assert ask(server, Op.MEMSET, fields(256, 100, 5) + site("cudaMemset2D"))[0] == CudaError.INVALID_VALUE
    (finding,) = server.device.findings.sorted()
    assert finding.kind == "out-of-bounds" and finding.cause.endswith("124 bytes past the end of `cudaMalloc#1` (1000 bytes)")


def test_host_visibility_holds_for_every_byte_of_a_block_not_only_its_start(server):
    managed = struct.unpack("<Q", ask(server, Op.MALLOC, allocation(64, MemoryKind.MANAGED, "cudaMallocManaged"))[1])[0]
    device = malloc(server, 64)
    assert server.device.host_visible(managed) and server.device.host_visible(managed + 60)
    assert not server.device.host_visible(device) and not server.device.host_visible(device + 8)
    assert not server.device.host_visible(managed + 4096)  # past the block: no allocation


def register_host(server, host: int, size: int, flags: int = 0) -> tuple[int, int | None]:
    """cudaHostRegister's status, and the device address of the registered memory."""
    status, payload = ask(server, Op.MALLOC, allocation(size, MemoryKind.REGISTERED, "cudaHostRegister", flags, host))
    return status, struct.unpack("<Q", payload)[0] if payload else None


def unregister_host(server, host: int) -> int:
    return ask(server, Op.FREE, u64(host) + u32(MemoryKind.REGISTERED) + site("cudaHostUnregister"))[0]


def test_registered_host_memory_keeps_its_offset_in_the_page_and_its_exact_bounds(server):
    status, d = register_host(server, HOST + 0x10, 10000)
    assert status == CudaError.SUCCESS and d % 4096 == 0x10
    assert server.device.host_visible(d) and server.device.host_visible(d + 9999)
    assert not server.device.host_visible(d + 10000)  # past the range, though in the same page
    assert memcpy(server, d, HOST + 0x10000, 10000, MemcpyKind.HOST_TO_DEVICE) == CudaError.SUCCESS
    assert memcpy(server, d, HOST + 0x10000, 10001, MemcpyKind.HOST_TO_DEVICE) == CudaError.INVALID_VALUE
    (finding,) = server.device.findings.sorted()
    assert finding.cause.endswith("1 byte past the end of `cudaHostRegister#1` (10000 bytes)")


def test_overlapping_registrations_are_refused_without_a_finding(server):
    assert register_host(server, HOST, 256)[0] == CudaError.SUCCESS
    assert register_host(server, HOST + 255, 16) == (CudaError.HOST_MEMORY_ALREADY_REGISTERED, None)
    assert register_host(server, HOST - 16, 17) == (CudaError.HOST_MEMORY_ALREADY_REGISTERED, None)
    assert register_host(server, HOST + 256, 16)[0] == CudaError.SUCCESS  # the same page, other bytes
    assert register_host(server, HOST - 16, 16)[0] == CudaError.SUCCESS
    pinned = struct.unpack("<Q", ask(server, Op.MALLOC, allocation(64, MemoryKind.HOST, "cudaMallocHost"))[1])[0]
    assert register_host(server, pinned + 8, 8)[0] == CudaError.HOST_MEMORY_ALREADY_REGISTERED
    assert register_host(server, malloc(server, 64), 8)[0] == CudaError.INVALID_VALUE  # device memory
    assert server.device.findings.sorted() == []


@pytest.mark.parametrize(
    "pointer, status, words",
    [
        (HOST, CudaError.SUCCESS, None),
        (HOST + 4, CudaError.INVALID_VALUE, "4 bytes into the host memory `cudaHostRegister#1` (256 bytes)"),
        (HOST + 0x9000, CudaError.HOST_MEMORY_NOT_REGISTERED, "which cudaHostRegister did not register"),
    ],
)
def test_unregistering(server, pointer, status, words):
    register_host(server, HOST, 256)
    assert unregister_host(server, pointer) == status
    findings = server.device.findings.sorted()
    if words is None:
        assert findings == []
    else:
        (finding,) = findings
        assert finding.kind == "invalid-free" and words in finding.cause


def test_a_registration_ends_once(server):
    register_host(server, HOST, 256)
    assert unregister_host(server, HOST) == CudaError.SUCCESS
    assert unregister_host(server, HOST) == CudaError.HOST_MEMORY_NOT_REGISTERED
    (finding,) = server.device.findings.sorted()
    assert "whose registration (`cudaHostRegister#1` (256 bytes)) already ended" in finding.cause
    assert register_host(server, HOST, 256)[0] == CudaError.SUCCESS  # the memory may be registered again


def test_registered_memory_is_not_freed_by_cudafree(server):
    _, d = register_host(server, HOST, 256)
    assert ask(server, Op.FREE, u64(d) + u32(MemoryKind.DEVICE) + site("cudaFree"))[0] == CudaError.INVALID_VALUE
    (finding,) = server.device.findings.sorted()
    assert finding.cause.endswith(f"it must be unregistered with cudaHostUnregister of its host pointer 0x{HOST:x}")
    assert server.device.heap.registered_at(HOST) is not None


def test_pinned_memory_is_not_unregistered(server):
    pinned = struct.unpack("<Q", ask(server, Op.MALLOC, allocation(64, MemoryKind.HOST, "cudaHostAlloc"))[1])[0]
    assert unregister_host(server, pinned) == CudaError.INVALID_VALUE
    (finding,) = server.device.findings.sorted()
    assert finding.kind == "invalid-free" and finding.cause.endswith("it must be freed with cudaFreeHost")


def test_host_flags_are_those_of_page_locked_memory_and_say_it_is_mapped(server):
    _, d = register_host(server, HOST, 256, flags=1)
    pinned = struct.unpack("<Q", ask(server, Op.MALLOC, allocation(64, MemoryKind.HOST, "cudaHostAlloc", flags=4))[1])[0]
    assert ask(server, Op.HOST_FLAGS, u64(d + 100)) == (CudaError.SUCCESS, u32(1 | 2))
    assert ask(server, Op.HOST_FLAGS, u64(pinned)) == (CudaError.SUCCESS, u32(4 | 2))
    assert ask(server, Op.HOST_FLAGS, u64(malloc(server, 64)))[0] == CudaError.INVALID_VALUE
    assert ask(server, Op.HOST_FLAGS, u64(HOST))[0] == CudaError.INVALID_VALUE


def test_pending_work_on_registered_memory_closes_its_pages_and_a_host_access_there_races(server):
    _, d = register_host(server, HOST + 0x10, 3 * 4096)
    assert ask(server, Op.STREAM_CREATE, u64(0x600) + u32(1))[0] == CudaError.SUCCESS
    copy = u64(d + 5000) + u64(HOST + 0x10000) + u64(8) + u32(MemcpyKind.HOST_TO_DEVICE) + u64(0x600) + u32(1)
    status, _, records = ask_protecting(server, Op.MEMCPY, copy + site("cudaMemcpyAsync"))
    assert status == CudaError.SUCCESS and records == [((d + 5000) & ~4095, 4096, PROT_NONE)]
    assert ask(server, Op.HOST_ACCESS, u64(d + 5000) + u32(0) + site("read"))[0] == CudaError.SUCCESS
    (race,) = server.device.findings.sorted()
    assert race.kind == "data-race" and (race.address.allocation, race.address.offset) == ("cudaHostRegister#1", 5000)


def test_a_graph_node_stream_is_named_so_and_leaves_the_program_stream_numbers_alone(server):
    flags = 1 | GRAPH_NODE_STREAM  # non-blocking, made by the shim to replay a graph's node
    assert ask(server, Op.STREAM_CREATE, u64(0x600) + u32(flags))[0] == CudaError.SUCCESS
    assert ask(server, Op.STREAM_CREATE, u64(0x700) + u32(0))[0] == CudaError.SUCCESS
    node, mine = server.timeline.streams[0x600], server.timeline.streams[0x700]
    assert (node.name, node.blocking) == ("the stream of a graph node", False)
    assert (mine.name, mine.blocking) == ("stream 1", True)


# ---------------------------------------------------------------------- texture and surface objects


def object_request(obj: int, resource: int, base: int, width: int, height: int, pitch: int, dims: int,
                   fmt=(32, 0, 0, 0, 2), modes=(1, 1, 1), filter_mode=0, read_mode=0, normalized=0, depth=1, layered=0,
                   mipmap=None, levels=()) -> bytes:
    """An OBJECT_CREATE payload (border colour (0.5, 0, 0, 1)); `mipmap` (filter mode, bias, min and max clamp,
    anisotropy) and `levels` ((base, width, height, depth) each) for a texture over a mipmapped array."""
    payload = u32(obj) + u32(resource) + u64(base) + u64(width) + u64(height) + u64(pitch) + u32(dims) + u64(depth) + u32(layered)
    payload += b"".join(u32(v) for v in (*fmt, *modes, filter_mode, read_mode, normalized))
    payload += struct.pack("<4f", 0.5, 0, 0, 1) + u32(len(levels))
    if levels:
        payload += u32(mipmap[0]) + struct.pack("<3f", *mipmap[1:4]) + u32(mipmap[4])
        payload += b"".join(u64(v) for level in levels for v in level)
    return payload + site("cudaCreateTextureObject")


def test_a_texture_over_a_mipmapped_array_knows_its_levels_and_mipmap_fields(server):
    base = malloc(server, 4 * (16 + 4 + 1))
    levels = ((base, 4, 4, 1), (base + 64, 2, 2, 1), (base + 80, 1, 1, 1))
    request = object_request(ObjectKind.TEXTURE, ResourceKind.ARRAY, base, 4, 4, 16, 2, normalized=1,
                             mipmap=(1, 0.5, 0.25, 2.0, 0), levels=levels)
    assert ask(server, Op.OBJECT_CREATE, request)[0] == CudaError.SUCCESS
    mip = server.device.textures[1].mipmap
    assert [(r.base, r.width, r.height, r.pitch, r.dims) for r in mip.levels] == [(b, w, h, 4 * w, 2) for b, w, h, _ in levels]
    assert (mip.filter_mode, mip.bias, mip.min_clamp, mip.max_clamp) == (FilterMode.LINEAR, 0.5, 0.25, 2.0)
    integer = object_request(ObjectKind.TEXTURE, ResourceKind.ARRAY, base, 4, 4, 4, 2, fmt=(8, 0, 0, 0, 1), normalized=1,
                             mipmap=(1, 0, 0, 2, 0), levels=levels)
    assert ask(server, Op.OBJECT_CREATE, integer)[0] == CudaError.INVALID_VALUE  # linear mipmap filtering of integers


def test_texture_and_surface_objects_are_kept_for_the_launches_until_destroyed(server):
    base = malloc(server, 4 * 8 * 3)
    request = object_request(ObjectKind.TEXTURE, ResourceKind.ARRAY, base, 8, 3, 32, 2, modes=(3, 0, 2), filter_mode=1, normalized=1)
    status, payload = ask(server, Op.OBJECT_CREATE, request)
    assert status == CudaError.SUCCESS and struct.unpack("<Q", payload) == (1,)
    tex = server.device.textures[1]
    assert isinstance(tex, TextureObject)
    assert (tex.resource.kind, tex.resource.base, tex.resource.width, tex.resource.height, tex.resource.pitch) == ("array", base, 8, 3, 32)
    assert tex.resource.format.kind is ChannelKind.FLOAT and tex.resource.format.texel_bytes == 4
    assert tex.sampling.address_modes == (AddressMode.BORDER, AddressMode.WRAP, AddressMode.MIRROR)
    assert tex.sampling.filter_mode is FilterMode.LINEAR and tex.sampling.normalized and tex.sampling.border == (0.5, 0, 0, 1)
    layers = object_request(ObjectKind.SURFACE, ResourceKind.ARRAY, base, 8, 1, 32, 1, depth=3, layered=1)
    status, payload = ask(server, Op.OBJECT_CREATE, layers)
    surface = server.device.textures[2]
    assert status == CudaError.SUCCESS and isinstance(surface, SurfaceObject)
    assert (surface.resource.dims, surface.resource.depth, surface.resource.layered) == (1, 3, True)
    assert ask(server, Op.OBJECT_DESTROY, u64(1))[0] == CudaError.SUCCESS
    assert ask(server, Op.OBJECT_DESTROY, u64(1))[0] == CudaError.INVALID_VALUE
    assert list(server.device.textures) == [2]
    assert ask(server, Op.RESET, site("cudaDeviceReset"))[0] == CudaError.SUCCESS
    assert server.device.textures == {}


def test_a_texture_cuda_refuses_is_an_invalid_value(server):
    base = malloc(server, 16)
    int_linear = object_request(ObjectKind.TEXTURE, ResourceKind.ARRAY, base, 16, 1, 16, 1, fmt=(8, 0, 0, 0, 1), filter_mode=1)
    assert ask(server, Op.OBJECT_CREATE, int_linear)[0] == CudaError.INVALID_VALUE
    bad_mode = object_request(ObjectKind.TEXTURE, ResourceKind.LINEAR, base, 4, 1, 0, 1, modes=(9, 0, 0))
    assert ask(server, Op.OBJECT_CREATE, bad_mode)[0] == CudaError.INVALID_VALUE
    no_slices = object_request(ObjectKind.TEXTURE, ResourceKind.ARRAY, base, 4, 1, 4, 3, depth=0)
    assert ask(server, Op.OBJECT_CREATE, no_slices)[0] == CudaError.INVALID_VALUE
    assert server.device.textures == {} and server.errors == []


def test_a_channel_format_gpurace_cannot_read_stops_the_program(server):
    request = object_request(ObjectKind.TEXTURE, ResourceKind.ARRAY, malloc(server, 48), 16, 1, 48, 1, fmt=(8, 8, 8, 0, 1))
    assert ask(server, Op.OBJECT_CREATE, request)[0] == STOP
    assert server.errors == ["cudaCreateTextureObject: cudaChannelFormatDesc {8, 8, 8, 0, kind 1}: only 1, 2 or 4 channels of equal size are supported"]


WORKSPACE_PROBE = parse_ptx(
    ".version 8.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry _Z5probePy(.param .u64 out) {\n"
    "  .reg .b32 %r<3>; .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r1, %envreg1; mov.u32 %r2, %envreg2;\n"
    "  cvt.u64.u32 %rd2, %r1; cvt.u64.u32 %rd3, %r2;\n"
    "  shl.b64 %rd2, %rd2, 32; or.b64 %rd4, %rd2, %rd3;\n"
    "  st.global.u64 [%rd1], %rd4;\n"
    "  ret;\n}\n",
    "probe.ptx",
)
"""A kernel that stores the grid workspace's address, as cooperative groups read it (%envreg1 high, %envreg2 low)."""


@pytest.fixture
def probe_server():
    device = Device([WORKSPACE_PROBE], arch="compute_75", limits=Limits(max_memory=1 << 30), source_lines=SourceLines())
    server = DeviceServer(device)
    assert ask(server, Op.REGISTER_FUNCTION, u64(1) + u64(STUB) + text("_Z5probePy"))[0] == CudaError.SUCCESS
    yield server
    device.close()


def probe(server, out: int, flags: LaunchFlag, grid: int = 1, block: int = 1) -> int:
    payload = (
        u64(STUB) + u32(grid) + u32(1) * 2 + u32(block) + u32(1) * 2 + u64(0) + u64(0) + u32(flags)
        + site("kernel launch") + u32(8) + u64(out)
    )  # fmt: skip
    return ask(server, Op.LAUNCH, payload)[0]


def stored_address(server, out: int) -> int:
    return int(server.device.global_arena.view(out, 8).view(np.uint64)[0])


def test_the_launch_flags_reach_the_simulator(server, monkeypatch):
    calls = fake_launch(monkeypatch, 0)
    register(server)
    assert launch(server, LaunchFlag.COOPERATIVE) == CudaError.SUCCESS
    assert launch(server) == CudaError.SUCCESS
    assert launch(server, LaunchFlag.CLUSTER, grid=4, cluster=(2, 1, 1)) == CudaError.SUCCESS
    assert [c[-1] for c in calls] == ["cooperative", "kernel launch", ("cluster", (2, 1, 1))]


def test_a_cooperative_launch_gets_a_workspace_of_its_own_and_others_none(probe_server):
    out = malloc(probe_server, 8)
    assert probe(probe_server, out, LaunchFlag.COOPERATIVE) == CudaError.SUCCESS
    first = stored_address(probe_server, out)
    workspace = probe_server.device.global_table.find(first)
    assert workspace is not None and (workspace.name, workspace.base, workspace.size) == (WORKSPACE_NAME, first, 8)
    assert first % PAGE_SIZE == 0 and not probe_server.device.global_arena.view(first, 8).any()  # released at the end
    assert probe(probe_server, out, LaunchFlag.COOPERATIVE) == CudaError.SUCCESS
    assert stored_address(probe_server, out) > first  # a new workspace: no two launches share one
    assert probe(probe_server, out, LaunchFlag(0)) == CudaError.SUCCESS
    assert stored_address(probe_server, out) == 0
    assert probe_server.device.findings.sorted() == [] and probe_server.errors == []


def test_a_cooperative_grid_larger_than_the_device_holds_fails_at_the_launch(probe_server):
    out = malloc(probe_server, 8)
    # Blocks of 1024 threads: one per multiprocessor, 40 multiprocessors.
    assert probe(probe_server, out, LaunchFlag.COOPERATIVE, grid=41, block=1024) == CudaError.COOPERATIVE_LAUNCH_TOO_LARGE
    (finding,) = probe_server.device.findings.sorted()
    assert finding.kind == "invalid-launch"
    assert finding.cause.startswith("the launch fails with cudaErrorCooperativeLaunchTooLarge: a cooperative launch of 41 blocks")
    assert "at most 40 blocks of 1024 threads" in finding.cause
    assert stored_address(probe_server, out) == 0  # it never ran
    assert ask(probe_server, Op.SYNCHRONIZE, u32(Wait.DEVICE) + u64(0) + site("cudaDeviceSynchronize"))[0] == CudaError.SUCCESS
