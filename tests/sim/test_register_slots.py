"""Registers never live together share a slot (`sim.register_slots`), and no shared slot changes a value.

The kernel mixes what liveness must respect: a register read before any write (its zero), a guarded write
that keeps the old value for the threads whose guard is false, values carried around a loop, and
temporaries that die at once (which share slots).
"""

from __future__ import annotations

import numpy as np

from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import simulate
from gpurace.sim.program import build_program

KERNEL = """
.version 7.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .u32 %r<14>;
  .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r9, 5;            // %r9 is read before any write: 0 + 5
  setp.lt.u32 %p1, %r1, 2;
  mov.u32 %r3, 40;
  @%p1 mov.u32 %r3, 7;            // threads 0 and 1 get 7, the others keep 40
  mov.u32 %r4, 0;
  mov.u32 %r5, 0;
LOOP:
  add.u32 %r6, %r5, 1;
  add.u32 %r4, %r4, %r6;          // 1 + 2 + 3, carried around the loop
  mov.u32 %r5, %r6;
  setp.lt.u32 %p2, %r5, 3;
  @%p2 bra LOOP;
  add.u32 %r10, %r1, 1;           // temporaries, each dead after its one use
  add.u32 %r11, %r10, 1;
  add.u32 %r12, %r11, 1;
  sub.u32 %r13, %r12, %r1;        // 3
  add.u32 %r7, %r2, %r3;
  add.u32 %r8, %r7, %r4;
  add.u32 %r8, %r8, %r13;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r8;
  mov.u32 %r9, 1000;              // the write after the read: the read above still saw 0
  ret;
}
"""


def test_registers_that_are_never_live_together_share_slots():
    program = build_program(parse_ptx(KERNEL), "k")
    regs = program.functions["k"].regs
    assert len(program.reg_types) < len(regs)
    assert len({regs[f"%r{i}"] for i in (10, 11, 12, 13)}) < 4  # the chain of temporaries
    # live at once: the zero read late, the guarded value, the loop's sum and counter
    live = [regs[name] for name in ("%r1", "%r2", "%r3", "%r4", "%r5")]
    assert len(set(live)) == len(live)
    assert regs["%r9"] != regs["%r1"]  # %r1 is written before %r9's zero is read


def test_shared_slots_keep_every_value():
    out = np.zeros(8, dtype=np.uint32)
    result = simulate(parse_ptx(KERNEL), grid=1, block=8, args=[out])
    assert not result.findings
    assert out.tolist() == [5 + 7 + 6 + 3] * 2 + [5 + 40 + 6 + 3] * 6
