"""The engine-facing contract: raw dtypes in and out, fresh outputs, compile-time errors."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Instruction, SourceLoc
from gpurace.sim.alu import compile_alu
from gpurace.sim.alu.rawtypes import raw_dtype

SPECS = """
add.s32 add.cc.u64 addc.cc.s32 sub.s16 sub.cc.u32 subc.u64 mul.lo.u16 mul.hi.s32 mul.wide.s16 mad.lo.s64
mad.hi.cc.u32 madc.lo.u32 madc.hi.cc.s64 mad.wide.u32 mul24.hi.s32 mad24.lo.u32 sad.u16 div.s64 rem.u64
abs.s16 neg.s64 min.u64 max.s16 min.relu.s32 max.u16x2 dp4a.u32.s32 dp2a.lo.u32.u32 popc.b64 clz.b32
bfind.shiftamt.s64 brev.b64 bfe.s64 bfi.b64 fns.b32 szext.wrap.s32 and.b16 or.b64 xor.pred not.b64 cnot.b16
lop3.b32 shl.b16 shr.s16 shr.u64 shf.r.wrap.b32 prmt.b32.rc16
add.rz.f32 sub.rm.ftz.f32 mul.rp.f64 fma.rn.sat.f32 mad.rn.f64 fma.rm.f64 div.approx.ftz.f32 div.rp.f64
rcp.rn.f64 rcp.approx.ftz.f64 sqrt.rz.f32 sqrt.rn.f64 rsqrt.approx.f64 sin.approx.ftz.f32 cos.approx.f32
lg2.approx.f32 ex2.approx.f32 tanh.approx.f32 abs.f64 neg.ftz.f32 min.NaN.f32 max.xorsign.abs.f32 copysign.f64
add.rn.bf16x2 sub.ftz.sat.f16 mul.f16x2 fma.rn.relu.bf16 neg.bf16x2 abs.ftz.f16 min.NaN.f16x2 max.bf16
ex2.approx.f16x2 ex2.approx.ftz.bf16 tanh.approx.bf16
setp.gtu.f64 setp.ls.u16 setp.ne.ftz.f32 setp.nan.bf16 setp.lt.or.u64 set.geu.f32.f32 set.eq.and.u32.s16
selp.f64 selp.b16 slct.s64.s32 slct.ftz.f32.f32 testp.infinite.f64
cvt.rn.f32.u64 cvt.rzi.s8.f64 cvt.rmi.u16.f16 cvt.rpi.s64.bf16 cvt.rn.bf16.f64 cvt.rz.f16.f64 cvt.f64.bf16
cvt.rn.bf16.f16 cvt.rz.f16.u64 cvt.rni.f64.f64 cvt.rm.f32.f64 cvt.u64.s16 cvt.sat.s8.u16 cvt.rz.satfinite.bf16.f32
cvt.rz.f16x2.f32 cvt.rn.relu.bf16x2.f32
""".split()


@pytest.mark.parametrize("spec", SPECS)
def test_every_form_returns_fresh_raw_arrays(spec):
    opcode, *mods = spec.split(".")
    op = compile_alu(Instruction(opcode, tuple(mods), (), text=spec))
    rng = np.random.default_rng(len(spec))
    n = 17
    args = []
    for t in op.src_types:
        dtype = raw_dtype(t)
        if dtype is np.bool_:
            args.append(rng.random(n) < 0.5)
        else:
            args.append(rng.integers(0, np.iinfo(dtype).max, size=n, dtype=dtype, endpoint=True))
    kwargs = {"carry": rng.random(n) < 0.5} if op.carry_in else {}
    frozen = [a.copy() for a in args]
    result = op.fn(*args, **kwargs)
    outs = list(result) if isinstance(result, tuple) else [result]
    if op.carry_out:
        assert outs.pop().dtype == np.bool_
    assert len(outs) == len(op.dst_types)
    for out, t in zip(outs, op.dst_types):
        assert out.dtype == raw_dtype(t) and out.shape == (n,)
        for a in args:
            assert not np.shares_memory(out, a)
    for a, f in zip(args, frozen):
        np.testing.assert_array_equal(a, f)  # inputs untouched


@pytest.mark.parametrize(
    "spec",
    ["add.foo.s32", "div.approx.f64", "cvt.rn.satfinite.e4m3x2.f32", "mul.wide.u64", "shl.s32",
     "add.sat.u32", "setp.lo.f32", "rcp.f32", "sin.f32", "mad.hi.sat.u32", "fma.rn.s32", "lop3.b64"],
)
def test_unsupported_forms_fail_at_compile_time(spec):
    opcode, *mods = spec.split(".")
    instr = Instruction(opcode, tuple(mods), (), loc=SourceLoc("k.cu", 42), ptx_line=99, text=spec + " %r1, %r2;")
    with pytest.raises(UserError) as err:
        compile_alu(instr)
    assert "k.cu:42" in str(err.value) and "PTX line 99" in str(err.value) and spec in str(err.value)
