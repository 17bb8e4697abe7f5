"""Throughput of a few hot ALU instructions on 1M-element batches.

Run: python benchmarks/bench_alu.py  (prints element-ops per second for each). The round-to-nearest fmas run
twice: through the NumPy emulation and through LLVM's fma (`sim.native.array_fma`), with their ratio.
"""

from __future__ import annotations

import time

import numpy as np

from gpurace.frontend.ptx.ir import Instruction
from gpurace.sim.alu import compile_alu
from gpurace.sim.native import array_fma

N = 1_000_000
REPEAT = 20


def compiled(spec: str):
    opcode, *mods = spec.split(".")
    return compile_alu(Instruction(opcode, tuple(mods), (), text=spec))


def throughput(spec: str, args) -> float:
    """Million element-ops per second of `spec` on `args`."""
    fn = compiled(spec).fn
    fn(*args)  # warm up (and load LLVM, for a compiled fma)
    start = time.perf_counter()
    for _ in range(REPEAT):
        fn(*args)
    return REPEAT * N / (time.perf_counter() - start) / 1e6


def main() -> None:
    rng = np.random.default_rng(0)
    ints = rng.integers(0, 2**32, size=(3, N), dtype=np.uint64).astype(np.uint32)
    floats = rng.standard_normal((3, N)).astype(np.float32).view(np.uint32)
    doubles = rng.standard_normal((3, N)).view(np.uint64)
    cases = {
        "add.s32": (ints[0], ints[1]),
        "setp.lt.s32": (ints[0], ints[1]),
        "cvt.rn.f32.s32": (ints[0],),
    }
    for spec, args in cases.items():
        print(f"{spec:<16} {throughput(spec, args):10.1f} M element-ops/s")
    for spec, args in {"fma.rn.f32": tuple(floats), "fma.rn.f64": tuple(doubles)}.items():
        array_fma.EMULATED_BEFORE_COMPILING = 10**18
        emulated = throughput(spec, args)
        array_fma.EMULATED_BEFORE_COMPILING = 0
        llvm = throughput(spec, args)
        print(f"{spec:<16} {emulated:10.1f} M element-ops/s emulated, {llvm:.1f} compiled ({llvm / emulated:.1f}x)")


if __name__ == "__main__":
    main()
