"""The device-only window (`runtime.spread`): where `cudaMalloc` memory is addressed, apart from its bytes."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.runtime.device import Device
from gpurace.runtime.protocol import MemoryKind, WireSite
from gpurace.runtime.sites import SourceLines
from gpurace.runtime.spread import GAP_BYTES, WINDOW_BASE, Spread
from gpurace.sim.memory.layout import GLOBAL_BASE, PAGE_SIZE

MODULE = parse_ptx(
    ".version 8.0\n.target sm_75\n.address_size 64\n"
    ".global .align 4 .b8 table[64];\n.global .align 4 .u32 count;\n.global .attribute(.managed) .align 4 .b8 shared_with_host[64];\n",
    "vars.ptx",
)
SITE = WireSite("cudaMalloc", ())


@pytest.fixture
def device():
    d = Device([MODULE], arch="compute_75", limits=Limits(max_memory=1 << 30), source_lines=SourceLines())
    yield d
    d.close()


def test_the_window_hands_out_addresses_a_gap_apart_then_the_oldest_freed_ranges_then_none():
    spread = Spread(base=1 << 40, nbytes=3 * (GAP_BYTES + PAGE_SIZE), gap=GAP_BYTES)
    first, second, third = (spread.take(100) for _ in range(3))
    assert (first, second, third) == tuple((1 << 40) + GAP_BYTES + i * (GAP_BYTES + PAGE_SIZE) for i in range(3))
    assert spread.take(1) is None  # used up, nothing freed
    spread.give_back(second, 100)
    spread.give_back(first, 100)
    assert spread.take(2 * PAGE_SIZE) is None  # no freed range holds two pages
    assert spread.take(PAGE_SIZE) == second  # the oldest freed range first
    assert spread.take(PAGE_SIZE) == first
    assert spread.take(PAGE_SIZE) is None


def test_cudamalloc_memory_is_addressed_in_the_window_and_its_bytes_packed_in_the_arena(device):
    heap, arena = device.heap, device.global_arena
    a = heap.allocate(100, MemoryKind.DEVICE, SITE).allocation
    b = heap.allocate(100, MemoryKind.DEVICE, SITE).allocation
    managed = heap.allocate(100, MemoryKind.MANAGED, SITE).allocation
    assert WINDOW_BASE < a.base and b.base - a.end >= GAP_BYTES  # far apart ...
    assert arena.contains(a.canonical_base) and b.canonical_base - a.canonical_base == PAGE_SIZE  # ... their bytes a page apart
    assert managed.shift == 0 and managed.base == managed.canonical_base  # the host dereferences managed memory
    assert heap.allocate(100, MemoryKind.HOST, SITE).allocation.base > managed.end  # placed after it, not over it
    assert arena.canonical(b.base + 8) == b.canonical_base + 8 and arena.canonical(managed.base) == managed.base
    table = arena.table
    past_a = np.array([a.end, a.end + GAP_BYTES - PAGE_SIZE], dtype=np.uint64)
    assert not table.contains(past_a, 4).any()  # an overrun of `a` reaches no allocation
    assert table.find_canonical(b.canonical_base + 8) is b and heap.block_of_canonical(a.canonical_base).allocation is a


def test_a_freed_blocks_addresses_are_handed_out_again_only_once_the_window_is_used_up(device):
    heap, spread = device.heap, device.global_arena.spread
    first = heap.allocate(100, MemoryKind.DEVICE, SITE)
    heap.free(first, SITE)
    spread._next = spread.limit  # the window's fresh address space used up
    again = heap.allocate(100, MemoryKind.DEVICE, SITE)
    assert again.allocation.base == first.allocation.base and again.allocation.canonical_base > first.allocation.canonical_base
    assert heap.freed_block_at(first.allocation.base) is None and heap.block_at(first.allocation.base) is again
    packed = heap.allocate(100, MemoryKind.DEVICE, SITE).allocation  # nothing freed left: addressed where its bytes are
    assert packed.shift == 0 and GLOBAL_BASE <= packed.base < WINDOW_BASE


def test_device_arrays_are_addressed_in_the_window_scalars_and_managed_variables_where_their_bytes_are(device):
    variables = device.variables[0]
    assert variables["table"].base >= WINDOW_BASE and variables["table"].shift > 0
    assert variables["count"].shift == 0 and variables["shared_with_host"].shift == 0
