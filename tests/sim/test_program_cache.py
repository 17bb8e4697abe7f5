"""A kernel is flattened once per module, and a launch names it by its mangled name without the module's other kernels."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import select_kernel, simulate
from gpurace.sim.program import build_program

TWO_KERNELS = r"""
.version 7.0
.target sm_75
.address_size 64

.visible .entry _Z3addPi(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd2, %rd2, %rd3;
    ld.global.u32 %r2, [%rd2];
    add.s32 %r2, %r2, 1;
    st.global.u32 [%rd2], %r2;
    ret;
}

.visible .entry _Z3subPi(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd2, %rd2, %rd3;
    ld.global.u32 %r2, [%rd2];
    sub.s32 %r2, %r2, 1;
    st.global.u32 [%rd2], %r2;
    ret;
}
"""


def test_each_kernel_is_flattened_once_per_module_and_launches_share_it():
    module = parse_ptx(TWO_KERNELS)
    add = build_program(module, "_Z3addPi")
    assert build_program(module, "_Z3addPi") is add
    assert build_program(module, "_Z3subPi") is not add
    assert replace(module).programs == {}  # a changed copy of a module flattens its kernels afresh
    data = np.arange(8, dtype=np.int32)
    for _ in range(2):
        simulate(module, grid=1, block=8, args=[data], kernel="_Z3addPi")
    assert data.tolist() == list(range(2, 10)) and module.programs["_Z3addPi"] is add


def test_a_mangled_name_selects_its_kernel_and_a_demangled_one_still_does():
    module = parse_ptx(TWO_KERNELS)
    assert select_kernel(module, "_Z3subPi") == "_Z3subPi"
    assert select_kernel(module, "sub") == "_Z3subPi"
    assert select_kernel(module, "add") == "_Z3addPi"
