"""Calls through function pointers and virtual function tables, and `brx.idx` jump tables, in the simulator.

Each thread calls the function its own pointer names (threads of one warp may
enter different functions); a call through a pointer that names no function is
an `invalid-call` finding at its line, and a jump-table index past its list
stops the run with a message naming the line. The racy
and race-free twins are in `tests/kernels/indirect/`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import simulate
from gpurace.sim.memory import FUNCTION_BASE

KERNELS = Path(__file__).resolve().parents[1] / "kernels"

PER_THREAD = r"""
__device__ int twice(int x) { return 2 * x; }
__device__ int thrice(int x) { return 3 * x; }
__global__ void k(int* out, int which) {
  int (*f)(int) = (threadIdx.x & which) ? twice : thrice;
  out[threadIdx.x] = f(threadIdx.x);
}
"""

RECURSIVE = r"""
typedef int (*step)(int);
__device__ int fact(int n);
__device__ step next_step(int n) { return fact; }
__device__ __noinline__ int fact(int n) { return n <= 1 ? 1 : n * next_step(n)(n - 1); }
__global__ void k(int* out) {
  step f = threadIdx.x % 2 ? fact : next_step(0);
  out[threadIdx.x] = f(threadIdx.x);
}
"""

CALL_ARGUMENT = r"""
typedef int (*unary)(int);
__global__ void k(int* out, unsigned long long address) {
  out[threadIdx.x] = ((unary)address)(threadIdx.x);  // line 4
}
"""

READ_CODE = r"""
__device__ int one(int x) { return 1; }
__global__ void k(int* out) {
  int (*f)(int) = one;
  out[threadIdx.x] = *(volatile int*)f;  // line 5: reads the code as data
}
"""


def _write(tmp_path, source: str):
    path = tmp_path / "k.cu"
    path.write_text(source)
    return path


def test_each_thread_calls_the_function_its_pointer_names(tmp_path):
    out = np.zeros(32, dtype=np.int32)
    simulate(_write(tmp_path, PER_THREAD), grid=1, block=32, args=[out, 1])
    t = np.arange(32)
    assert (out == np.where(t & 1, 2 * t, 3 * t)).all()


def test_a_function_called_recursively_through_a_pointer_keeps_each_activation(tmp_path):
    out = np.zeros(8, dtype=np.int32)
    simulate(_write(tmp_path, RECURSIVE), grid=1, block=8, args=[out])
    assert list(out) == [1, 1, 2, 6, 24, 120, 720, 5040]


def test_virtual_calls_enter_the_override_of_the_object_the_kernel_built():
    for i, expected in ((0, 1), (1, 2)):
        out = np.zeros(1, dtype=np.int32)
        simulate(KERNELS / "virtual_functions.cu", grid=1, block=1, args=[out, i])
        assert out[0] == expected


def test_a_call_through_an_address_that_is_no_function_is_an_invalid_call_finding(tmp_path):
    result = CliRunner().invoke(
        cli,
        ["check", str(_write(tmp_path, CALL_ARGUMENT)), "--grid", "1", "--block", "4", "--arg", "buf:4", "--arg", "4096",
         "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    (finding,) = json.loads(result.output)["findings"]
    assert finding["kind"] == "invalid-call" and finding["severity"] == "error"
    assert "address 0x1000, which is not the address of a device function" in finding["cause"]
    assert [access["line"] for access in finding["accesses"]] == [4]
    assert finding["count"] == 4 and finding["details"]["address"] == 0x1000


def test_reading_a_function_pointer_as_data_is_out_of_bounds(tmp_path):
    result = CliRunner().invoke(
        cli, ["check", str(_write(tmp_path, READ_CODE)), "--grid", "1", "--block", "4", "--arg", "buf:4", "--format", "json"]
    )
    assert result.exit_code == 1, result.output
    (finding,) = json.loads(result.output)["findings"]
    assert finding["kind"] == "out-of-bounds"
    assert "among device function addresses" in finding["cause"]
    assert [access["line"] for access in finding["accesses"]] == [5]


BRX = """
.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 bias)
{
  .reg .u32 %r<4>;
  .reg .u64 %rd<3>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r3, [bias];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  add.u32 %r2, %r2, %r3;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd1, %rd1, %rd2;
  ts: .branchtargets A, B, C, D;
  brx.idx %r2, ts;
A: st.global.u32 [%rd1], 10; bra.uni E;
B: st.global.u32 [%rd1], 11; bra.uni E;
C: st.global.u32 [%rd1], 12; bra.uni E;
D: st.global.u32 [%rd1], 13;
E: ret;
}
"""


def test_brx_idx_branches_each_thread_to_the_label_its_index_picks(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(BRX)
    assert parse_ptx(BRX).functions["k"].target_lists == {"ts": ("A", "B", "C", "D")}
    out = np.zeros(8, dtype=np.int32)
    simulate(path, grid=1, block=8, args=[out, 0])
    assert list(out) == [10, 11, 12, 13] * 2


def test_brx_idx_past_its_list_names_the_line_and_the_thread(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(BRX)
    result = CliRunner().invoke(cli, ["check", str(path), "--grid", "1", "--block", "8", "--arg", "buf:8", "--arg", "1"])
    assert result.exit_code == 2, result.output
    assert "the index of `brx.idx %r2, ts` is 4 in block (0,0,0) thread (3,0,0)" in result.output
    assert "past the 4 labels of ts" in result.output
    assert "Traceback" not in result.output


def test_function_addresses_lie_outside_every_allocation(tmp_path):
    from gpurace.frontend.load import load_module
    from gpurace.sim.program import build_program

    module = load_module(_write(tmp_path, PER_THREAD))
    program = build_program(module, "_Z1kPii")
    addresses = sorted(program.function_at)
    assert len(addresses) == 2 and addresses[0] >= FUNCTION_BASE
    assert {program.function_at[a] for a in addresses} == {"_Z5twicei", "_Z6thricei"}


CALLTARGETS = """
.version 7.0
.target sm_75
.address_size 64
.func (.param .b32 r) seven() { st.param.b32 [r], 7; ret; }
.visible .entry k(.param .u64 out, .param .u32 lo, .param .u32 hi)
{
  .reg .u32 %r<4>;
  .reg .u64 %rd<3>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r2, [lo];
  ld.param.u32 %r3, [hi];
  mov.b64 %rd2, {%r2, %r3};  // the function's address, which only the .calltargets list names
  {
  .param .b32 ret0;
  targets: .calltargets seven;
  call (ret0), %rd2, (), targets;
  ld.param.b32 %r1, [ret0];
  }
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


def test_a_function_named_only_in_a_calltargets_list_can_be_called(tmp_path):
    from gpurace.sim.memory import function_addresses

    path = tmp_path / "k.ptx"
    path.write_text(CALLTARGETS)
    module = parse_ptx(CALLTARGETS)
    assert module.functions["k"].target_lists == {"targets": ("seven",)}
    out = np.zeros(1, dtype=np.int32)
    address = function_addresses(module.functions)["seven"]
    simulate(path, grid=1, block=1, args=[out, address & 0xFFFFFFFF, address >> 32])
    assert out[0] == 7
