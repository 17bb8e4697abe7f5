"""The livelock look's hash of each thread's registers (`Engine._look`) in one compiled pass.

At the end of every round without a memory write the engine hashes, per thread, its pc and the register slots
written since its last look, and compares the result with that look's. NumPy does it in two passes over the
threads per slot (an xor, then a multiply) plus one for the pc; in a converged loop over a million threads that
was a fifth of the simulation. The compiled function walks the threads once, keeping each thread's hash in a
machine register, and gives the same 64-bit values bit for bit (the same constants, each register zero-extended
to 64 bits as NumPy's mixed-type xor does), so a look compares equal under either, whichever ran before.

One function per sequence of slot widths (the IR names no address), compiled on first use and cached like the
compiled runs (`jit`).
"""

from __future__ import annotations

import ctypes

import numpy as np

PC_FACTOR = 0x9E3779B97F4A7C15
"""What a thread's pc is multiplied by to start its hash."""
SLOT_PRIME = 0x100000001B3
"""What the hash is multiplied by after each register is xored in."""

_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)


def _signed(value: int) -> int:
    """A 64-bit constant as LLVM prints it (two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _ir(widths: tuple[int, ...], name: str) -> str:
    """out[i] = hash of thread idx[i] (or i, when idx is null) over pcs and the registers in the table."""
    loads = []
    h = "%h0"
    for k, bits in enumerate(widths):
        loads += [
            f"  %base{k}p = getelementptr ptr, ptr %table, i64 {k}",
            f"  %base{k} = load ptr, ptr %base{k}p",
            f"  %p{k} = getelementptr i{bits}, ptr %base{k}, i64 %g",
            f"  %r{k} = load i{bits}, ptr %p{k}",
        ]
        wide = f"%r{k}" if bits == 64 else f"%w{k}"
        if bits != 64:
            loads.append(f"  %w{k} = zext i{bits} %r{k} to i64")
        loads += [f"  %x{k} = xor i64 {h}, {wide}", f"  %h{k + 1} = mul i64 %x{k}, {_signed(SLOT_PRIME)}"]
        h = f"%h{k + 1}"
    body = "\n".join(loads)
    return f"""
define void @{name}(ptr noalias %pcs, ptr noalias %idx, i64 %n, ptr noalias %table, ptr noalias %out) {{
entry:
  %sparse = icmp ne ptr %idx, null
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %thread]
  br i1 %sparse, label %pick, label %thread
pick:
  %ip = getelementptr i64, ptr %idx, i64 %i
  %picked = load i64, ptr %ip
  br label %thread
thread:
  %g = phi i64 [%picked, %pick], [%i, %loop]
  %pcp = getelementptr i64, ptr %pcs, i64 %g
  %pc = load i64, ptr %pcp
  %h0 = mul i64 %pc, {_signed(PC_FACTOR)}
{body}
  %op = getelementptr i64, ptr %out, i64 %i
  store i64 {h}, ptr %op
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


def look_hash(pcs: np.ndarray, idx: np.ndarray | None, regs: list[np.ndarray]) -> np.ndarray:
    """The uint64 hash of each thread of `idx` (every thread when None): its pc in `pcs` (int64, one per
    thread of the launch), then each array of `regs` (one per thread, unsigned or bool) xored in and mixed."""
    from gpurace.sim.native.jit import load

    widths = tuple(8 if r.dtype == np.bool_ else r.dtype.itemsize * 8 for r in regs)
    name = "gpurace_look_hash_" + ("_".join(map(str, widths)) or "pc")
    function = load(_ir(widths, name), [name], _SIGNATURE)[name]
    n = len(pcs) if idx is None else len(idx)
    if idx is not None:
        idx = np.ascontiguousarray(idx, dtype=np.int64)
    table = np.array([r.ctypes.data for r in regs] or [0], dtype=np.uint64)
    out = np.empty(n, dtype=np.uint64)
    function(pcs.ctypes.data, None if idx is None else idx.ctypes.data, n, table.ctypes.data, out.ctypes.data)
    return out
