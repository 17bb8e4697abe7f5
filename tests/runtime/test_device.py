"""The simulated device of `gpurace exec`: arenas, module variables in place, kernel parameter layouts."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from gpurace.frontend.kernels import param_layout
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.runtime.device import Device
from gpurace.runtime.protocol import MemoryKind, WireSite
from gpurace.runtime.sites import SourceLines
from gpurace.sim.memory.layout import CONST_BASE, GLOBAL_BASE, REDZONE
from gpurace.sim.program import build_program

HEADER = ".version 8.0\n.target sm_75\n.address_size 64\n"

FIRST = parse_ptx(
    HEADER
    + ".global .align 4 .u32 counter = 7;\n"
    + ".const .align 4 .b8 coef[16];\n"
    + ".global .align 8 .u64 where = generic(counter);\n"
    + ".global .attribute(.managed) .align 4 .u32 shared_total;\n"
    + ".visible .entry _Z4stepPiic(.param .u64 p0, .param .u32 p1, .param .u8 p2) { ret; }\n",
    "first.ptx",
)
SECOND = parse_ptx(
    HEADER
    + ".global .align 4 .u32 counter = 9;\n"
    + ".global .align 8 .u64 where = generic(counter);\n"
    + ".visible .entry _Z3mixc6float4(.param .u8 q0, .param .align 16 .b8 q1[16], .param .u64 q2) { ret; }\n",
    "second.ptx",
)


@pytest.fixture
def device():
    d = Device([FIRST, SECOND], arch="compute_75", limits=Limits(max_memory=1 << 30), source_lines=SourceLines())
    yield d
    d.close()


def word(d: Device, address: int, dtype=np.uint32) -> int:
    arena = d.arena_of(address)
    return int(arena.view(address, np.dtype(dtype).itemsize).view(dtype)[0])


def test_arenas_start_where_the_simulator_puts_global_and_constant_memory(device):
    assert device.global_arena.base == GLOBAL_BASE and device.const_arena.base == CONST_BASE
    assert device.global_arena.nbytes == (1 << 30) // 2  # half the memory budget
    assert device.global_store is device.global_arena.store and device.global_store.dtype == np.uint8


def test_variables_of_each_module_get_their_own_addresses_and_initial_values(device):
    first, second = device.variables
    assert first["counter"].base == GLOBAL_BASE and first["coef"].base == CONST_BASE
    assert second["counter"].base > first["shared_total"].end + REDZONE - 1
    assert word(device, first["counter"].base) == 7 and word(device, second["counter"].base) == 9
    # a pointer initializer holds the address its own module's variable has in the arena
    assert word(device, first["where"].base, np.uint64) == first["counter"].base
    assert word(device, second["where"].base, np.uint64) == second["counter"].base


def test_a_variable_is_found_in_the_module_of_its_translation_units_kernels(device):
    assert device.register_function(handle=2, mangled="_Z3mixc6float4") is not None
    assert device.register_variable(2, "counter", managed=False) == device.variables[1]["counter"]
    # a unit that registered no kernel takes the first module defining the name
    assert device.register_variable(9, "counter", managed=False) == device.variables[0]["counter"]
    assert device.register_variable(9, "missing", managed=False) is None
    assert device.register_function(handle=3, mangled="_Z7unknownv") is None


def test_managed_variables_are_host_memory_too(device):
    alloc = device.register_variable(1, "shared_total", managed=True)
    assert alloc.base in device.host_visible_variables


@pytest.mark.parametrize("module, kernel", [(FIRST, "_Z4stepPiic"), (SECOND, "_Z3mixc6float4")])
def test_parameter_layout_is_the_simulators(module, kernel):
    fn = module.functions[kernel]
    program = build_program(module, kernel)
    assert param_layout(fn) == [(program.kernel_params[p.name], p.size) for p in fn.params]


def test_parameters_sit_at_their_alignment():
    assert param_layout(SECOND.functions["_Z3mixc6float4"]) == [(0, 1), (16, 16), (32, 8)]


def test_reset_frees_everything_and_restores_initial_values(device):
    site = WireSite("cudaDeviceReset", ())
    counter = device.variables[0]["counter"]
    device.global_arena.view(counter.base, 4)[:] = 0xFF
    block = device.heap.allocate(64, MemoryKind.DEVICE, site)
    device.reset(site)
    assert word(device, counter.base) == 7
    assert block.freed_at == site and device.heap.live() == []


BUDGET_ACCOUNTING = r"""
import resource
import gpurace.limits as limits
from gpurace.limits import Limits, limit_address_space
from gpurace.runtime.device import Device
from gpurace.runtime.protocol import MemoryKind, WireSite
from gpurace.runtime.sites import SourceLines
from gpurace.frontend.sandbox import mapped_bytes

def soft():
    return resource.getrlimit(resource.RLIMIT_AS)[0]

limit_address_space(1 << 30, mapped_bytes())
start = soft()
device = Device([], arch="compute_75", limits=Limits(max_memory=1 << 30), source_lines=SourceLines())
arenas = device.global_arena.nbytes + device.const_arena.nbytes
print(soft() - start == arenas)
block = device.heap.allocate(1 << 20, MemoryKind.DEVICE, WireSite("cudaMalloc", ()))
print(soft() - start == arenas - (1 << 20))
device.heap.free(block, WireSite("cudaMalloc", ()))
print(soft() - start == arenas)
device.heap.allocate(1 << 20, MemoryKind.DEVICE, WireSite("cudaMalloc", ()))
device.close()
print(soft() == start)
"""


def test_the_budget_counts_the_programs_allocations_not_the_device_memorys_mapping():
    # in a process of its own: the address-space limit is the whole process's, as under the gpurace command
    out = subprocess.run([sys.executable, "-c", BUDGET_ACCOUNTING], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True"] * 4, out.stderr
