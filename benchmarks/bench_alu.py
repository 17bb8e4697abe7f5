"""Throughput of a few hot ALU instructions on 1M-element batches.

Run: python benchmarks/bench_alu.py  (prints element-ops per second for each).
"""

from __future__ import annotations

import time

import numpy as np

from gpurace.frontend.ptx.ir import Instruction
from gpurace.sim.alu import compile_alu

N = 1_000_000
REPEAT = 20


def compiled(spec: str):
    opcode, *mods = spec.split(".")
    return compile_alu(Instruction(opcode, tuple(mods), (), text=spec))


def main() -> None:
    rng = np.random.default_rng(0)
    ints = rng.integers(0, 2**32, size=(3, N), dtype=np.uint64).astype(np.uint32)
    floats = rng.standard_normal((3, N)).astype(np.float32).view(np.uint32)
    cases = {
        "add.s32": (ints[0], ints[1]),
        "fma.rn.f32": (floats[0], floats[1], floats[2]),
        "setp.lt.s32": (ints[0], ints[1]),
        "cvt.rn.f32.s32": (ints[0],),
    }
    for spec, args in cases.items():
        fn = compiled(spec).fn
        fn(*args)  # warm up
        start = time.perf_counter()
        for _ in range(REPEAT):
            fn(*args)
        elapsed = time.perf_counter() - start
        print(f"{spec:<16} {REPEAT * N / elapsed / 1e6:10.1f} M element-ops/s")


if __name__ == "__main__":
    main()
