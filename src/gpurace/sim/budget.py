"""What a launch will cost, checked before anything of it is allocated.

Two kinds of bound apply to a launch:

* the hardware's: shared memory per block (48 KiB static, more up to the
  architecture's maximum when dynamic), local memory per thread (512 KiB)
  and constant memory (64 KiB). A launch past them fails on a GPU, so here
  it is an input error naming the option or the kernel, not a simulation
  that runs out of memory;
* gpurace's memory budget (`Limits.max_memory`): the per-thread state
  (registers, local memory, coordinates and scheduler state), shared memory
  of every block, argument buffers, automatic buffers and module variables.
  Each is checked alone, so the message names the input that is too large,
  then all together.

The estimates are of the simulator's own arrays; detectors add their own
state on top, which the command line's address-space limit bounds.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.ptx.ir import Module
from gpurace.limits import LimitExceeded, Limits, format_size
from gpurace.sim.memory import AUTO_BUFFER_BYTES, AUTO_GUARD_BYTES
from gpurace.sim.memory.layout import (
    MAX_CONSTANT_BYTES,
    MAX_LOCAL_BYTES_PER_THREAD,
    MAX_STATIC_SHARED_BYTES,
    SharedLayout,
    max_shared_bytes,
)
from gpurace.sim.program import Program, thread_state_bytes

SIMULATOR_BYTES_PER_THREAD = 320
"""The simulator's per-thread arrays besides registers and local memory (coordinates, special registers, pc,
status, call stack): about 260 bytes measured with tracemalloc on a 65,536-thread launch, rounded up."""

COORDINATE_BYTES_PER_THREAD = 52
"""The launch's `Geometry` arrays (thread and block coordinates, block, warp and lane ids), which the detectors
read for every thread while a launch runs in waves; a launch that runs whole counts them in the simulator state."""

_CAPABILITY_RE = re.compile(r"(?:sm|compute)_(\d+)")


def compute_capability(module: Module, arch: str) -> int:
    """The compute capability (75 for sm_75) the module targets: its `.target`, else `arch`, else 75."""
    for name in (*module.target, arch):
        m = _CAPABILITY_RE.match(name.strip())
        if m:
            return int(m.group(1))
    return 75


def check_shared_memory(layout: SharedLayout, dynamic_bytes: int, capability: int, kernel: str) -> None:
    """A LimitExceeded when shared memory is more than one block may have on the GPU.

    Static shared memory is limited to 48 KiB on every GPU; more, up to the
    architecture's opt-in maximum, must be dynamic (`extern __shared__`,
    sized by `--shared-bytes`).
    """
    static = layout.dynamic_base
    if static > MAX_STATIC_SHARED_BYTES:
        raise LimitExceeded(
            f"kernel {kernel}: {format_size(static)} of static shared memory per block is more than the "
            f"{format_size(MAX_STATIC_SHARED_BYTES)} CUDA allows; larger arrays must be dynamic "
            "(extern __shared__, sized with --shared-bytes)"
        )
    limit = max_shared_bytes(capability)
    if layout.size > limit:
        raise LimitExceeded(
            f"--shared-bytes {dynamic_bytes}: {format_size(layout.size)} of shared memory per block (with "
            f"{format_size(static)} of static shared memory) is more than the {format_size(limit)} per block that "
            f"compute_{capability} GPUs allow (--arch selects another architecture)"
        )


def check_constant_memory(module: Module) -> None:
    """A LimitExceeded when the module's `__constant__` variables are more than a GPU's constant memory."""
    total = sum(max(v.size, v.elem_size) for v in module.variables if v.space == "const" and v.linkage != "extern")
    if total > MAX_CONSTANT_BYTES:
        raise LimitExceeded(
            f"{module.source_path or 'the module'}: {format_size(total)} of __constant__ variables is more than the "
            f"{format_size(MAX_CONSTANT_BYTES)} of constant memory a GPU has"
        )


def check_local_memory(program: Program) -> None:
    """A LimitExceeded when a function's local frame (its local arrays and spills) is more than a thread may have."""
    for name, info in program.functions.items():
        if info.frame_size > MAX_LOCAL_BYTES_PER_THREAD:
            raise LimitExceeded(
                f"function {demangle_signature(name).name} needs {format_size(info.frame_size)} of local memory per thread (local arrays and "
                f"spills), more than the {format_size(MAX_LOCAL_BYTES_PER_THREAD)} per thread a GPU allows"
            )


class Part(NamedTuple):
    """One large allocation of a launch: its name, what sizes it (the options to change) and its bytes."""

    name: str
    detail: str
    nbytes: int


def check_footprint(
    program: Program,
    module: Module,
    shared: SharedLayout,
    *,
    nblocks: int,
    resident: int,
    block_size: int,
    buffer_bytes: int,
    automatic_buffers: int,
    limits: Limits,
) -> None:
    """A LimitExceeded when the launch's memory, each part or all together, is more than the memory budget."""
    parts = launch_footprint(
        program, module, shared, nblocks=nblocks, resident=resident, block_size=block_size, buffer_bytes=buffer_bytes,
        automatic_buffers=automatic_buffers,
    )  # fmt: skip
    for part in parts:
        limits.check_memory(part.nbytes, f"{part.name} ({part.detail})")
    listing = ", ".join(f"{part.name} {format_size(part.nbytes)}" for part in parts if part.nbytes)
    limits.check_memory(sum(part.nbytes for part in parts), f"the launch ({listing})")


def launch_footprint(
    program: Program,
    module: Module,
    shared: SharedLayout,
    *,
    nblocks: int,
    resident: int,
    block_size: int,
    buffer_bytes: int,
    automatic_buffers: int,
) -> list[Part]:
    """The large allocations of a launch whose blocks run `resident` at a time (`sim.waves`).

    Registers, local and shared memory are those of the resident blocks; the
    launch's coordinates are kept for every thread. Buffers count twice: the
    arguments' arrays and their copy in simulated global memory. An automatic
    buffer costs address space for its reservation and guard, whatever the
    kernel touches.
    """
    n = resident * block_size
    threads = f"{n:,} threads of --grid and --block" if resident == nblocks else f"{n:,} threads at once (--resident-threads)"
    per_thread = thread_state_bytes(program) + SIMULATOR_BYTES_PER_THREAD
    frame = program.entry.frame_size
    variables = sum(max(v.size, v.elem_size) for v in module.variables if v.space in ("global", "const") and v.linkage != "extern")
    automatic = AUTO_BUFFER_BYTES + AUTO_GUARD_BYTES
    launch = nblocks * block_size
    return [
        Part("registers and simulator state", f"{per_thread:,} bytes per thread x {threads}", per_thread * n),
        Part("thread coordinates", f"{COORDINATE_BYTES_PER_THREAD} bytes per thread x {launch:,} threads of --grid and --block",
             COORDINATE_BYTES_PER_THREAD * launch if resident != nblocks else 0),
        Part("local memory", f"{frame:,} bytes per thread x {threads}", frame * n),
        Part("shared memory", f"{shared.stride:,} bytes per block x {resident:,} blocks; --shared-bytes, --grid", shared.stride * resident),
        Part("argument buffers", "--arg, with their copy in simulated global memory", 2 * buffer_bytes),
        Part("automatic buffers", f"{automatic_buffers} x {format_size(automatic)} of address space", automatic_buffers * automatic),
        Part("module variables", "its __device__ and __constant__ variables", variables),
    ]
