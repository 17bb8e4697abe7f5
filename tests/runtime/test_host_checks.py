"""The program's memory calls checked against its allocations (`runtime.host_checks`), without running a program."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.runtime.device import Device
from gpurace.runtime.host_checks import HostChecks
from gpurace.runtime.protocol import CudaError, MemcpyKind, MemoryKind, WireSite
from gpurace.runtime.sites import SourceLines

MODULE = parse_ptx(
    ".version 8.0\n.target sm_75\n.address_size 64\n.global .align 4 .b8 table[64];\n", "vars.ptx"
)
HOST = 0x7FFF_0000_1000  # an address outside both arenas: host memory
H2D, D2H, D2D, DEFAULT = MemcpyKind.HOST_TO_DEVICE, MemcpyKind.DEVICE_TO_HOST, MemcpyKind.DEVICE_TO_DEVICE, MemcpyKind.DEFAULT


def site(call: str) -> WireSite:
    return WireSite(call, ())


@pytest.fixture
def device():
    d = Device([MODULE], arch="compute_75", limits=Limits(max_memory=1 << 30), source_lines=SourceLines())
    yield d
    d.close()


@pytest.fixture
def checks(device):
    return HostChecks(device)


def malloc(device, size, kind=MemoryKind.DEVICE) -> int:
    return device.heap.allocate(size, kind, site("cudaMalloc")).allocation.base


def kinds(device) -> list[str]:
    return [f.kind for f in device.findings.sorted()]


def test_copies_inside_allocations_are_allowed(device, checks):
    d = malloc(device, 256)
    assert checks.copy(d, HOST, 256, H2D, site("cudaMemcpy")) is CudaError.SUCCESS
    assert checks.copy(HOST, d + 128, 128, D2H, site("cudaMemcpy")) is CudaError.SUCCESS
    assert checks.copy(device.variables[0]["table"].base, d, 64, D2D, site("cudaMemcpy")) is CudaError.SUCCESS
    assert checks.memset(d, 256, 256, 1, site("cudaMemset")) is CudaError.SUCCESS
    assert kinds(device) == []


def test_a_copy_past_the_end_is_out_of_bounds(device, checks):
    d = malloc(device, 256)
    assert checks.copy(d, HOST, 260, H2D, site("cudaMemcpy")) is CudaError.INVALID_VALUE
    (f,) = device.findings.sorted()
    assert (f.kind, f.space, f.address.allocation, f.address.offset) == ("out-of-bounds", "global", "cudaMalloc#1", 0)
    assert f.cause.endswith("4 bytes past the end of `cudaMalloc#1` (256 bytes)")


def test_a_copy_in_a_red_zone_names_the_nearest_allocation(device, checks):
    d = malloc(device, 256)
    assert checks.copy(HOST, d + 300, 4, D2H, site("cudaMemcpy")) is CudaError.INVALID_VALUE
    (f,) = device.findings.sorted()
    assert f.kind == "out-of-bounds" and "44 bytes past the end of `cudaMalloc#1`" in f.cause


def test_a_copy_of_freed_memory_is_a_use_after_free(device, checks):
    d = malloc(device, 64)
    assert checks.free(d, MemoryKind.DEVICE, site("cudaFree")) is CudaError.SUCCESS
    assert checks.copy(HOST, d, 4, D2H, site("cudaMemcpy")) is CudaError.INVALID_VALUE
    assert checks.memset(d, 4, 4, 1, site("cudaMemset")) is CudaError.INVALID_VALUE
    assert kinds(device) == ["use-after-free"]  # the same (unknown) line: merged
    assert device.findings.sorted()[0].count == 2


@pytest.mark.parametrize(
    "direction, dst, src",
    [
        (H2D, "host", "host"),  # the destination must be device memory
        (D2H, "host", "host"),  # the source must be device memory
        (D2H, "device", "device"),  # the destination must be host memory
        (H2D, "device", "device"),  # the source must be host memory
    ],
)
def test_a_copy_in_the_wrong_direction(device, checks, direction, dst, src):
    d = malloc(device, 64)
    pointers = {"host": HOST, "device": d}
    assert checks.copy(pointers[dst], pointers[src], 4, direction, site("cudaMemcpy")) is CudaError.INVALID_VALUE
    assert kinds(device) == ["invalid-copy-direction"]


@pytest.mark.parametrize("kind", [MemoryKind.MANAGED, MemoryKind.HOST])
def test_managed_and_pinned_memory_are_both_host_and_device_memory(device, checks, kind):
    m = malloc(device, 64, kind)
    d = malloc(device, 64)
    for dst, src, direction in ((m, d, D2H), (d, m, H2D), (m, m, D2D), (m, HOST, DEFAULT)):
        assert checks.copy(dst, src, 64, direction, site("cudaMemcpy")) is CudaError.SUCCESS
    assert kinds(device) == []


def test_an_unknown_direction_is_an_error_without_a_finding(device, checks):
    assert checks.copy(HOST, HOST, 4, 7, site("cudaMemcpy")) is CudaError.INVALID_MEMCPY_DIRECTION
    assert kinds(device) == []


def test_memset_of_host_memory(device, checks):
    assert checks.memset(HOST, 4, 4, 1, site("cudaMemset")) is CudaError.INVALID_VALUE
    assert kinds(device) == ["invalid-device-pointer"]


def test_2d_copies_check_the_span_of_their_rows(device, checks):
    d = malloc(device, 4 * 128)
    assert checks.copy_2d(d, 128, HOST, 100, 100, 4, H2D, site("cudaMemcpy2D")) is CudaError.SUCCESS
    assert checks.copy_2d(d, 128, HOST, 100, 100, 5, H2D, site("cudaMemcpy2D")) is CudaError.INVALID_VALUE
    assert checks.copy_2d(d, 64, HOST, 100, 100, 2, H2D, site("cudaMemcpy2D")) is CudaError.INVALID_PITCH_VALUE
    assert kinds(device) == ["out-of-bounds"]


@pytest.mark.parametrize(
    "pointer, kind, words",
    [
        ("interior", MemoryKind.DEVICE, "8 bytes into `cudaMalloc#1`"),
        ("host", MemoryKind.DEVICE, "which no CUDA allocation call returned"),
        ("variable", MemoryKind.DEVICE, "the device variable `table`"),
        ("start", MemoryKind.HOST, "it must be freed with cudaFree"),
    ],
)
def test_invalid_frees(device, checks, pointer, kind, words):
    d = malloc(device, 64)
    address = {"interior": d + 8, "host": HOST, "variable": device.variables[0]["table"].base, "start": d}[pointer]
    assert checks.free(address, kind, site("cudaFreeHost" if kind is MemoryKind.HOST else "cudaFree")) is CudaError.INVALID_VALUE
    (f,) = device.findings.sorted()
    assert f.kind == "invalid-free" and words in f.cause
    assert device.heap.live()  # nothing was freed


def test_a_double_free(device, checks):
    d = malloc(device, 64)
    assert checks.free(d, MemoryKind.DEVICE, site("cudaFree")) is CudaError.SUCCESS
    assert checks.free(d, MemoryKind.DEVICE, site("cudaFree")) is CudaError.INVALID_VALUE
    (f,) = device.findings.sorted()
    assert f.kind == "invalid-free" and "already freed" in f.cause


def test_leaks_are_the_allocations_still_live(device, checks):
    malloc(device, 64)
    freed = malloc(device, 32)
    checks.free(freed, MemoryKind.DEVICE, site("cudaFree"))
    checks.leaks()
    (f,) = device.findings.sorted()
    assert f.kind == "leak" and f.cause == "64 bytes allocated by cudaMalloc were never freed"


def test_registered_host_memory_is_the_programs_own_and_no_leak(device, checks):
    malloc(device, 64)
    status, block = checks.register(HOST + 8, 64, 0, site("cudaHostRegister"))
    assert status is CudaError.SUCCESS and block.allocation.base % 4096 == 8
    checks.leaks()
    (f,) = device.findings.sorted()
    assert f.cause == "64 bytes allocated by cudaMalloc were never freed"


def test_freed_addresses_are_never_handed_out_again(device):
    first = malloc(device, 64)
    device.heap.free(device.heap.blocks[first], site("cudaFree"))
    assert malloc(device, 64) > first + 64


def test_calls_that_go_ahead_record_the_device_bytes_they_write(device, checks):
    d = malloc(device, 1024)
    managed = malloc(device, 256, MemoryKind.MANAGED)
    in_arena = device.global_arena.canonical(d) - d  # written bytes are recorded where they are in the arena (heap.py)

    def tracked(addresses):
        return device.heap.written.unwritten.contains(np.array([int(a) + in_arena for a in addresses], dtype=np.uint64))

    assert in_arena < 0  # cudaMalloc memory is addressed far from its bytes
    assert device.heap.written.unwritten.contains(np.array([managed], dtype=np.uint64)).tolist() == [False]  # the host writes managed memory
    assert tracked([d]).tolist() == [True]
    assert checks.copy(d, HOST, 2048, H2D, site("cudaMemcpy")) is CudaError.INVALID_VALUE  # not done: nothing written
    assert checks.memset(d, 16, 16, 1, site("cudaMemset")) is CudaError.SUCCESS
    assert checks.copy_2d(d + 256, 256, HOST, 16, 16, 2, H2D, site("cudaMemcpy2D")) is CudaError.SUCCESS
    probe = np.array([d, d + 16, d + 256, d + 272, d + 512, d + 528], dtype=np.uint64)
    assert tracked(probe).tolist() == [False, True, False, True, False, True]
