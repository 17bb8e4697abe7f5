"""Correctly rounded fused multiply-add over whole arrays, compiled with LLVM.

NumPy has no fma, so the interpreter emulates it (`alu.floating.fma64`:
TwoProduct, TwoSum and a rounding to odd, about fifteen array passes). In
double-precision kernels (molecular dynamics, stencils) that emulation was a
third of the whole simulation. LLVM's `llvm.fma` intrinsic is correctly
rounded for every input, subnormals, overflow and NaNs included (it is the
host's FMA instruction, or libm's `fma`), so one compiled loop gives the same
bits in one pass.

Loading LLVM takes about as long as emulating eight million elements, so a
process emulates that many first and compiles only past them: short runs
(most checks, the tests) never load LLVM, and a long double-precision run pays
for it once. Both are exact, so no result depends on which one ran. Only
round-to-nearest: the host runs in that mode, and directed roundings stay
with the emulation.
"""

from __future__ import annotations

import ctypes

import numpy as np

from gpurace.sim.native.jit import load

#: Elements this process emulates before it loads LLVM (about as long as loading it takes).
EMULATED_BEFORE_COMPILING = 8_000_000
_emulated = 0

_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_LLVM_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def _ir(ty: str, name: str) -> str:
    """out[i] = fma(a[i], b[i], c[i]) for i < n."""
    return f"""
declare {ty} @llvm.fma.{'f32' if ty == 'float' else 'f64'}({ty}, {ty}, {ty})

define void @{name}(ptr noalias %a, ptr noalias %b, ptr noalias %c, ptr noalias %out, i64 %n) {{
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pa = getelementptr {ty}, ptr %a, i64 %i
  %pb = getelementptr {ty}, ptr %b, i64 %i
  %pc = getelementptr {ty}, ptr %c, i64 %i
  %po = getelementptr {ty}, ptr %out, i64 %i
  %x = load {ty}, ptr %pa
  %y = load {ty}, ptr %pb
  %z = load {ty}, ptr %pc
  %r = call {ty} @llvm.fma.{'f32' if ty == 'float' else 'f64'}({ty} %x, {ty} %y, {ty} %z)
  store {ty} %r, ptr %po
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


def wanted(*operands: np.ndarray) -> bool:
    """Whether this fma should run compiled; counts it as emulated when not."""
    global _emulated
    if _emulated >= EMULATED_BEFORE_COMPILING:
        return True
    _emulated += max(x.size for x in operands)
    return False


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a*b + c rounded once to nearest, element by element (float32 or float64 arrays of one dtype)."""
    if not a.dtype == b.dtype == c.dtype:
        raise TypeError(f"fma of {a.dtype}, {b.dtype} and {c.dtype} arrays: the compiled loop reads one type")
    ty = _LLVM_TYPES[a.dtype]
    name = f"gpurace_fma_{ty}"
    function = load(_ir(ty, name), [name], _SIGNATURE)[name]
    a, b, c = (np.ascontiguousarray(x) for x in np.broadcast_arrays(a, b, c))
    out = np.empty_like(a)
    function(a.ctypes.data, b.ctypes.data, c.ctypes.data, out.ctypes.data, out.size)
    return out
