"""The compiling executor: straight-line runs of register-only instructions, loads and stores as native code.

`install` replaces the interpreter's handler at the first pc of each run with
one that executes the whole run for every thread of the group in one call of
an LLVM-compiled function (`runs` writes the IR, `semantics` holds the exact
ALU semantics, `memory_steps` the loads and stores, `jit` compiles and caches,
`fused` decides when the compiled path is taken). Atomics, strong and generic
accesses, control flow, synchronisation and every instruction form not in
`semantics` stay with the interpreter, which remains the reference: both give
the same registers, memory, events and findings.

Which executor runs a launch: `GPURACE_EXECUTOR` (or `--executor`) is
`auto` (the default), `interpreter` or `native`. `auto` compiles only launches
of at least `AUTO_MIN_THREADS` threads, where the compile (or cache load) can
pay for itself, and only when llvmlite is installed; smaller launches are
interpreted. Large launches gain because a compiled run replaces several
whole-array NumPy passes per instruction by one loop over the group
(`benchmarks/bench_sim.py`: the converged saxpy and a 4096-block tree
reduction).
"""

from __future__ import annotations

import os

import numpy as np

from gpurace.errors import UserError

EXECUTORS = ("interpreter", "native", "auto")
AUTO_MIN_THREADS = 65536
"""Launches this large run their compiled runs under `auto` (below it, compiling costs more than it saves)."""


def chosen_executor(nthreads: int) -> str:
    """`interpreter` or `native`, for a launch of `nthreads` threads."""
    choice = os.environ.get("GPURACE_EXECUTOR", "auto").strip().lower() or "auto"
    if choice not in EXECUTORS:
        raise UserError(f"GPURACE_EXECUTOR={choice!r} is not one of {', '.join(EXECUTORS)}")
    if choice == "auto":
        if nthreads < AUTO_MIN_THREADS or not _llvmlite_available():
            return "interpreter"
        return "native"
    if choice == "native" and not _llvmlite_available():
        raise UserError("the native executor needs llvmlite (pip install llvmlite), which is not installed")
    return choice


def _llvmlite_available() -> bool:
    from importlib.util import find_spec

    return find_spec("llvmlite") is not None


def install(eng, handlers: list) -> None:
    """Put fused handlers at the first pc of every compilable run of `eng`'s program (in place)."""
    if eng.policy.kind == "random" or chosen_executor(eng.geo.nthreads) != "native":  # `fused`: why not random
        return
    if eng.wgmma.slots:  # a fused run would skip the checks on accumulators in flight (`sim.wgmma_ops`)
        return
    if eng.assert_distance is not None:  # nor would it record comparisons' distances (`sim.assert_distance`)
        return
    from gpurace.frontend.ptx.ir import SpecialReg
    from gpurace.sim.native.fused import CompiledModule, fused_handler
    from gpurace.sim.native.memory_steps import memory_step_of
    from gpurace.sim.native.runs import find_runs, write_module

    state = eng.state
    found = find_runs(eng.program, state, lambda fn, pc, ins: memory_step_of(eng, fn, pc, ins))
    if not found:
        return
    ir_text, runs = write_module(eng.program, state, found)
    module = CompiledModule(ir_text, [run.name for run in runs])
    launch_constant: dict[tuple, np.ndarray] = {("blocks",): np.ascontiguousarray(eng.geo.block_of, dtype=np.int64)}
    everyone = np.arange(eng.geo.nthreads)
    for run in runs:
        table: list[np.ndarray | None] = []  # None: an entry the handler fills before each call (`memory_steps`)
        for key in run.operands:
            if key[0] == "reg":
                table.append(state.regs[key[1]])
            elif key[0] == "special":
                if key not in launch_constant:
                    values = state.special(SpecialReg(key[1], key[2]), everyone)
                    launch_constant[key] = np.ascontiguousarray(values, dtype=np.uint32)
                table.append(launch_constant[key])
            else:
                table.append(launch_constant.get(key))
        handlers[run.start] = fused_handler(eng, run, table, module, handlers[run.start])
