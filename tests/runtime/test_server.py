"""The device server's answers to the shim's requests (`runtime.protocol`), request by request."""

from __future__ import annotations

import socket
import struct
import sys
import time
import types

import pytest

from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.runtime.device import Device
from gpurace.runtime.launch import launch_record
from gpurace.runtime.protocol import (
    HOST_FAULT,
    PROT_NONE,
    PROTECT_RECORD,
    REPLY,
    STOP,
    CudaError,
    MemcpyKind,
    MemoryKind,
    Op,
    Wait,
)
from gpurace.runtime import server as server_module
from gpurace.runtime.server import DeviceServer
from gpurace.runtime.sites import SourceLines

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


def launch(server) -> int:
    payload = u64(STUB) + u32(1) * 3 + u32(32) + u32(1) * 2 + u64(0) + u64(0) + site("kernel launch") + u32(12) + bytes(12)
    return ask(server, Op.LAUNCH, payload)[0]


def register(server) -> tuple[int, bytes]:
    return ask(server, Op.REGISTER_FUNCTION, u64(1) + u64(STUB) + text("_Z4fillPii"))


def fake_launch(monkeypatch, result):
    """Make `run_launch` return (or raise) `result` with the launch's record, recording its calls."""
    calls = []

    def run_launch(device, name, grid, block, shared_bytes, params, frame, sinks=()):
        calls.append((name, grid, block, shared_bytes, params, frame.call))
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
    assert server.errors == ["the launch of _Z4fillPii cannot be simulated: unsupported instruction"]


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
    assert status == CudaError.SUCCESS and struct.unpack("<QQQ", payload) == (0, 0, 0)
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
    assert status == CudaError.SUCCESS and records == [(d, 4096, PROT_NONE)]
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
