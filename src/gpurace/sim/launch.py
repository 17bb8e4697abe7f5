"""One kernel launch, end to end: pick the kernel, lay out memory, run the engine.

`simulate` is the simulator's public entry point (the `gpurace run` command and
the Python API `gpurace.run` call it). Buffers passed as NumPy arrays are
updated in place when the run ends, so a test can compare them with a NumPy
reference directly. Automatic buffers (`auto`) are placed after every other
global allocation and come back as arrays of the part the kernel used, since
their reservation is far larger than any kernel needs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from gpurace.detect.findings import Finding
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.gpuverify import requirement_bounds
from gpurace.frontend.kernels import KernelInfo, describe_kernel
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module
from gpurace.limits import Limits
from gpurace.frontend.type_probe import TypeProbe
from gpurace.sim import collector
from gpurace.sim.arg_values import AutoBuffer, AutoScalar, Buffer, Launch, StructArg, TensorMapArg, TextureArg
from gpurace.sim.args import AUTO, Resolver, copy_arg
from gpurace.sim.engine import POLICIES, Engine, Policy, RunStats
from gpurace.sim.events import EventSink
from gpurace.sim.clusters import check_cluster, launch_cluster
from gpurace.sim.cooperative import WORKSPACE_ALIGN, WORKSPACE_BYTES, WORKSPACE_NAME, too_large, workspace_bytes
from gpurace.sim.budget import (
    check_constant_memory,
    check_footprint,
    check_local_memory,
    check_shared_memory,
    compute_capability,
)
from gpurace.sim.dynamic_shared import SharedUsage, SharedUsageTracker, automatic_dynamic_bytes, has_extern_shared
from gpurace.sim.device_vars import resolve_variables
from gpurace.sim.geometry import Geometry, check_launch
from gpurace.sim.shared_prefix import SharedPrefix
from gpurace.sim.memory import Allocation, DeviceMemory, Memory, function_addresses
from gpurace.sim.memory.layout import SharedLayout
from gpurace.sim.placement import Placement, copy_back, place_inputs
from gpurace.sim.program import Program, build_program
from gpurace.sim.usage import BufferUsage, UsageTracker
from gpurace.sim.waves import resident_blocks, run_waves
from gpurace.words import plural

Dims = tuple[int, int, int]


@dataclass(frozen=True)
class DeviceArgs:
    """The arguments of a launch on a program's device (`gpurace exec`): the parameter bytes exactly as the
    host code passed them, pointing into `memory`, which the launch uses as its global and constant memory."""

    memory: DeviceMemory
    params: bytes
    grid_workspace: int = 0  # a cooperative launch's grid workspace, placed by the runtime (`sim.cooperative`)


@dataclass
class RunResult:
    """What one launch did: the arguments (buffers hold the kernel's output), findings and statistics.

    For automatic buffers `args` holds the used part (`buffers` says how much
    of each was used), for automatic scalars the packed value; `auto_scalars`
    lists the values `auto` chose. `shared_bytes` is the launch's dynamic
    shared memory per block; `dynamic_shared` says how much of it was used
    when its size was automatic (`sim.dynamic_shared`), else None.
    """

    kernel: KernelInfo
    geometry: Geometry
    args: list[np.ndarray | bytes]
    findings: list[Finding]
    stats: RunStats
    program: Program = field(repr=False)
    memory: Memory = field(repr=False)
    allocations: dict[str, Allocation] = field(default_factory=dict, repr=False)
    buffers: list[BufferUsage] = field(default_factory=list)
    auto_scalars: list[AutoScalar] = field(default_factory=list)
    shared_bytes: int = 0
    dynamic_shared: SharedUsage | None = None

    @property
    def clean(self) -> bool:
        return not self.findings


def as_dims(value, what: str) -> Dims:
    """`grid=`/`block=` of the Python API (an int or 1 to 3 ints) as three dimensions; a UserError naming `what`."""
    dims = (value,) if isinstance(value, (int, np.integer)) else value
    try:
        dims = tuple(dims)
    except TypeError:
        raise UserError(f"{what}: expected 1 to 3 positive integers, got {value!r}") from None
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d > 0 for d in dims):
        raise UserError(f"{what}: expected 1 to 3 positive integers, got {value!r}")
    return tuple(int(d) for d in dims + (1, 1))[:3]  # type: ignore[return-value]


NO_KERNEL_HINT = (
    "a template kernel exists only where it is instantiated: name the instantiation to check with "
    "--kernel 'k<float>', or add an explicit instantiation such as `template __global__ void k<float>(float*);`"
)
"""Why a file may compile to no kernel at all, for the messages of every command that needs one."""


def select_kernel(module: Module, name: str | None) -> str:
    """The mangled name of the kernel to run: by mangled name, by demangled name as a user types it (spaces and
    integer literal suffixes do not matter: `reduce<int,256,true>` names `reduce<int, 256u, true>`), by its
    name without template arguments when only one instantiation has it, or the only kernel. Several matches
    are an error that lists them."""
    kernels = module.kernels
    if not kernels:
        raise UserError(f"{module.source_path or 'the input'} defines no kernel ({NO_KERNEL_HINT})")
    exact = module.functions.get(name) if name is not None else None
    if exact is not None and exact.is_entry and not exact.is_declaration:
        return name  # a mangled name (every launch under `exec`): no other kernel's name can equal it
    infos = [(k.name, describe_kernel(module, k)) for k in kernels]
    listing = ", ".join(info.name for _, info in infos)
    if name is None:
        if len(kernels) == 1:
            return kernels[0].name
        raise UserError(f"{module.source_path} defines several kernels ({listing}); choose one with --kernel")
    wanted = _kernel_key(name)
    matches = [mangled for mangled, info in infos if name == mangled or _kernel_key(info.name) == wanted]
    if not matches and "<" not in name:
        matches = [mangled for mangled, info in infos if info.name.split("<")[0] == name.strip()]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(info.name for mangled, info in infos if mangled in matches)
        raise UserError(f"--kernel {name!r} names several kernels in {module.source_path} ({names}); give one in full")
    raise UserError(f"no kernel named {name!r} in {module.source_path} (kernels: {listing})")


def names_instantiation(module: Module, name: str) -> bool:
    """Whether some kernel of `module` is the template instantiation `name` (`reduce<int,256,true>`) as
    `select_kernel` matches it; False also for a name without template arguments."""
    return "<" in name and any(_kernel_key(describe_kernel(module, k).name) == _kernel_key(name) for k in module.kernels)


_INT_SUFFIX = re.compile(r"\b(\d+)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)\b")


def _kernel_key(name: str) -> str:
    """A kernel name as it is compared: no spaces, no integer literal suffixes (`256u` is `256`)."""
    return _INT_SUFFIX.sub(r"\1", name.replace(" ", ""))


ISOLATED_ARRAYS = 128
"""How many `__device__` arrays of a module are each placed behind AUTO_SPREAD_BYTES of address space: with the
automatic buffers, well within the 2^47 bytes of addresses the simulator's spaces use."""


def place_module_variables(mem: Memory, module: Module, isolated: bool = True) -> dict[str, Allocation]:
    """Allocate the module's `__device__` and `__constant__` variables in `mem`, with their initial values; returns
    their allocations by PTX name.

    Each `__device__` array (the first ISOLATED_ARRAYS of them) is `isolated` as a kernel argument's buffer is
    (`Memory.allocate_global`), so that an index past its end lands in no other variable and is reported as out
    of bounds, never as an access to (or a race on) the variable after it. Scalars (hundreds of them in
    libcu++'s headers) are not indexed, and share one region a red zone apart, as constant memory, which is
    read-only, does. `gpurace exec`, whose device memory is one mapping of bounded size, places every variable
    a red zone apart (`runtime.device`).
    """
    allocs = []
    arrays = 0  # isolated so far
    mem.functions = function_addresses(module.functions)
    for var in module.variables:
        if var.space not in ("global", "const") or var.linkage == "extern":
            continue
        size = max(var.size, var.elem_size)
        const, align = var.space == "const", max(var.align or 1, 1)
        apart = isolated and not const and var.size > var.elem_size and arrays < ISOLATED_ARRAYS
        arrays += apart
        allocs.append((var, mem.allocate_global(var.name, size, const=const, align=align, isolated=apart)))
    for var, alloc in allocs:
        if var.init:
            mem.write_initializer(alloc, var.type, var.init)
    return {var.name: alloc for var, alloc in allocs}


def simulate(
    source: str | os.PathLike | Module,
    *,
    grid,
    block,
    args: list | None = None,
    global_vars: Mapping[str, object] | None = None,
    kernel: str | None = None,
    shared_bytes: int | None = None,
    seed: int = 0,
    policy: str | Policy = "min-pc",
    max_steps: int = 2_000_000,
    sinks: list[EventSink] = (),
    sink_factory: Callable[[Program, Geometry, Memory], list[EventSink]] | None = None,
    progress: Callable[[RunStats], None] | None = None,
    include_dirs=(),
    defines=(),
    arch: str = DEFAULT_ARCH,
    limits: Limits | None = None,
    cooperative: bool = False,
    check_residency: bool = True,
    cluster=None,
    prefix: SharedPrefix | None = None,
) -> RunResult:
    """Run one launch of a kernel and return what it did; arrays in `args` are updated in place.

    `args` has one value per kernel parameter (see `gpurace.sim.args`); any
    of them may be "auto", and None means "auto" for every parameter. A
    `DeviceArgs` instead runs the launch on a program's device memory with
    the parameter bytes its host code passed (`gpurace exec`).

    `global_vars` sets `__device__` variables, by C++ or PTX name, to values
    such as arguments take (`sim.device_vars`); when every argument is
    "auto", pointer variables without an initialiser get automatic buffers.

    `shared_bytes` is the dynamic shared memory per block; None gives a kernel with an `extern __shared__` array
    an automatic size (`sim.dynamic_shared`) and any other kernel 0.

    `policy` is "min-pc", "reverse", "random" (seeded with `seed`), or a `Policy` with its own seed (`check` runs
    several schedules of one input this way: `seed` keeps choosing the `rand` buffers).

    Event sinks that need the launch's program, geometry or memory (detectors)
    come from `sink_factory`, called once memory is laid out. `progress` is
    called with the running statistics every few hundred scheduler steps.

    `limits` bound the launch (default `Limits()`): the thread count, the
    memory of every large allocation, checked before any is made, and, in the
    engine, the wall-clock time and call depth. A launch past a limit, or past
    what CUDA allows (dimensions, shared memory per block, local memory per
    thread), is a UserError that names the option to change.

    `cooperative` launches as `cudaLaunchCooperativeKernel` does (`sim.cooperative`): the launch gets a grid
    workspace (a `DeviceArgs` launch brings its own, placed by the runtime), and a grid whose blocks cannot
    all be resident is a UserError (not with `check_residency` False: the first run that measures automatic
    dynamic shared memory runs with more of it than the launch has).

    `cluster` (an int or 1 to 3 ints) launches with thread-block clusters of that shape, as `cudaLaunchKernelEx`
    with a cluster dimension does; None takes the kernel's `__cluster_dims__`, if any (`sim.clusters`).

    `prefix` makes this `min-pc` run schedule 0 of a check whose other schedules fork from it at the first
    instruction whose order between warps matters (`sim.shared_prefix`).
    """
    limits = (limits or Limits()).started()
    module = source if isinstance(source, Module) else load_module(source, include_dirs=include_dirs, defines=defines, arch=arch, limits=limits)
    mangled = select_kernel(module, kernel)
    fn = module.functions[mangled]
    info = describe_kernel(module, fn)
    grid, block = as_dims(grid, "--grid"), as_dims(block, "--block")
    nthreads = check_launch(grid, block, limits)
    cluster, explicit_cluster = launch_cluster(None if cluster is None else as_dims(cluster, "--cluster"), fn.directives)
    check_cluster(grid, cluster)
    if shared_bytes is not None and (not isinstance(shared_bytes, (int, np.integer)) or shared_bytes < 0):
        raise UserError(f"--shared-bytes: expected a non-negative integer, got {shared_bytes!r}")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise UserError(f"--seed: expected a non-negative integer, got {seed!r}")
    if not isinstance(policy, Policy) and policy not in POLICIES:
        raise UserError(f"--policy: unknown scheduling policy {policy!r} (choose from {', '.join(POLICIES)})")
    program = build_program(module, mangled)
    dynamic_shared = None
    if shared_bytes is None and not isinstance(args, DeviceArgs) and has_extern_shared(program.shared_vars):
        first_run = dict(
            grid=grid, block=block, seed=seed, policy=policy, max_steps=max_steps, limits=limits, cooperative=cooperative,
            cluster=cluster if explicit_cluster else None,
        )
        capacity = automatic_dynamic_bytes(program.shared_vars)
        dynamic_shared = _measure_dynamic_shared(module, mangled, args, global_vars, capacity, first_run)
        shared_bytes = dynamic_shared.bytes
    shared_bytes = shared_bytes or 0
    device = args.memory if isinstance(args, DeviceArgs) else None
    launch = None
    if device is None:
        launch = _resolve_inputs(module, fn, info, args, global_vars, np.random.default_rng(seed), nthreads, limits)
    resident = resident_blocks(grid, block, cluster, limits, cooperative=cooperative)
    _check_resources(module, program, info.name, launch, grid, block, shared_bytes, arch, limits, resident=resident)
    if cooperative and check_residency:
        _check_coresident(program, grid, block, shared_bytes, compute_capability(module, arch))
    elif isinstance(args, DeviceArgs) and args.grid_workspace:
        raise RuntimeError("a grid workspace was given to a launch that is not cooperative")

    collector.before_launch(nthreads)
    with collector.held_back():  # the setup allocates per-thread objects too (`sim.collector`)
        geometry = Geometry.create(grid, block, cluster, explicit_cluster)
        per_wave = resident if resident < geometry.nblocks else None
        mem = Memory(
            per_wave or geometry.nblocks, geometry.block_size, dynamic_shared_bytes=shared_bytes, limits=limits, device=device,
            rank_block=None if per_wave else geometry.rank_block,
        )
        variables = place_module_variables(mem, module) if device is None else {}
        workspace = 0
        if cooperative:
            workspace = args.grid_workspace if device is not None else _place_workspace(mem)
            if not workspace:
                raise RuntimeError("a cooperative launch on a device's memory needs the grid workspace the runtime placed")
        mem.define_shared([(v.name, v.size, v.align or v.elem_size) for v in program.shared_vars])
        if program.entry.frame_size:
            mem.ensure_local(program.entry.frame_size)
        if device is None:
            placed = place_inputs(mem, fn, program, launch, variables)
        else:
            placed = Placement(_device_params(program, info.name, args.params), {}, [])
        mem.set_params(placed.params, program.kernel_params)
        allocations, auto_allocs = placed.allocations, placed.automatic

        tracker = UsageTracker(auto_allocs) if auto_allocs else None
        all_sinks = list(sinks) + ([tracker] if tracker else []) + (sink_factory(program, geometry, mem) if sink_factory else [])
        policy = policy if isinstance(policy, Policy) else Policy(policy, seed if policy == "random" else 0)
        if per_wave is None:
            engine = Engine(
                program, geometry, mem, all_sinks, policy=policy, max_steps=max_steps, progress=progress, limits=limits,
                grid_workspace=workspace, prefix=prefix,
            )  # fmt: skip
            engine.run()
            findings, stats = engine.findings.sorted(), engine.stats
        else:
            findings, stats = run_waves(
                program, geometry, mem, all_sinks, per_wave, policy=policy, max_steps=max_steps, progress=progress, limits=limits,
                prefix=prefix,
            )  # fmt: skip

    collector.after_launch(stats.thread_instructions)
    usage = tracker.usage() if tracker else []
    if launch is not None:
        copy_back(mem, launch, allocations)
    return RunResult(
        kernel=info,
        geometry=geometry,
        args=_results(mem, fn, program, launch, placed, {u.name: u.bytes_used for u in usage}),
        findings=findings,
        stats=stats,
        program=program,
        memory=mem,
        allocations=allocations,
        buffers=usage,
        auto_scalars=launch.auto_scalars() if launch is not None else [],
        shared_bytes=int(shared_bytes),
        dynamic_shared=dynamic_shared,
    )


def _check_coresident(program: Program, grid: Dims, block: Dims, shared_bytes: int, capability: int) -> None:
    """Refuse a cooperative launch whose blocks cannot all be resident at once (`sim.cooperative.too_large`)."""
    static = SharedLayout([(v.name, v.size, v.align or v.elem_size) for v in program.shared_vars], 0).dynamic_base
    why = too_large(grid, block, static + shared_bytes, capability)
    if why is not None:
        raise UserError(f"--cooperative: {why}")


def _place_workspace(mem: Memory) -> int:
    """A fresh grid workspace for a cooperative launch, an allocation of its own; its address."""
    return mem.allocate_global(WORKSPACE_NAME, WORKSPACE_BYTES, init=workspace_bytes(), align=WORKSPACE_ALIGN, symbol=False).base


def _measure_dynamic_shared(module: Module, mangled: str, args, global_vars, capacity: int, launch: dict) -> SharedUsage:
    """Automatic dynamic shared memory (`sim.dynamic_shared`): a first run of the launch with `capacity` bytes per
    block and no detectors, on copies of the arguments, says how many bytes the kernel's indexing reaches."""
    trackers: list[SharedUsageTracker] = []

    def track(_program, _geometry, mem: Memory) -> list[EventSink]:
        trackers.append(SharedUsageTracker(mem.shared))
        return trackers

    copies = None if args is None else [copy_arg(a) for a in args]
    variables = None if global_vars is None else copy_arg(dict(global_vars))
    simulate(
        module, kernel=mangled, args=copies, global_vars=variables, shared_bytes=capacity, sink_factory=track, check_residency=False, **launch
    )
    return trackers[0].usage()


def _resolve_inputs(module: Module, fn, info: KernelInfo, args, global_vars, rng, nthreads: int, limits: Limits) -> Launch:
    """The launch's arguments and `__device__` variable values, resolved by one `Resolver` (one memory budget for
    all their buffers), with the compiler answering questions about C++ types (`frontend.type_probe`)."""
    args = None if args is None else list(args)
    resolver = Resolver(rng, limits, nthreads, TypeProbe(module, limits))
    values = resolver.arguments(info, args, requirement_bounds(module, info))
    automatic = args is None or all(isinstance(a, str) and a.strip() == AUTO for a in args)
    return Launch(values, resolve_variables(resolver, module, fn, global_vars, automatic=automatic))


def _device_params(program: Program, kernel: str, params: bytes) -> bytes:
    """A device launch's parameter bytes, which must be exactly the kernel's parameter space."""
    if len(params) != program.kernel_param_size:
        raise UserError(
            f"a launch of {kernel} passed {plural(len(params), 'byte')} of parameters; "
            f"the kernel's parameters take {program.kernel_param_size}"
        )
    return params


def _results(mem: Memory, fn, program: Program, launch: Launch | None, placed: Placement, used: dict[str, int]) -> list[np.ndarray | bytes]:
    """Each argument after the run: a buffer's array, the used part of an automatic one, a scalar's bytes, and
    a struct's bytes as the kernel got them (with its fields' buffer addresses)."""
    if launch is None:
        return []
    out: list[np.ndarray | bytes] = []
    for p, value in zip(fn.params, launch.values):
        if isinstance(value, (Buffer, TextureArg)):
            out.append(value.array if isinstance(value, Buffer) else value.buffer.array)
        elif isinstance(value, AutoBuffer):
            out.append(_used_part(mem, placed.allocations[value.name], used[value.name], value.dtype))
        elif isinstance(value, (StructArg, TensorMapArg)):
            offset = program.kernel_params[p.name]
            out.append(placed.params[offset : offset + p.size])
        elif isinstance(value, AutoScalar):
            out.append(value.data)
        else:
            out.append(value)
    return out


def _check_resources(
    module: Module, program: Program, kernel: str, launch: Launch | None, grid: Dims, block: Dims, shared_bytes: int, arch: str, limits: Limits,
    *, resident: int,
) -> None:
    """Refuse a launch whose shared or local memory a GPU would refuse, or whose memory the budget cannot hold.

    `launch` is None for a launch on a device's memory, which allocates no buffers of its own. A launch that
    runs in waves (`sim.waves`: `resident` blocks at once) needs per-thread and per-block memory for one wave.

    Runs before the geometry, memory and registers are allocated, so a launch
    too large for them ends with a message naming what to change, not in an
    out-of-memory kill (see `gpurace.sim.budget`).
    """
    buffers = launch.buffers() if launch is not None else []
    shared = SharedLayout([(v.name, v.size, v.align or v.elem_size) for v in program.shared_vars], shared_bytes)
    check_shared_memory(shared, shared_bytes, compute_capability(module, arch), kernel)
    check_local_memory(program)
    check_constant_memory(module)
    nblocks, block_size = grid[0] * grid[1] * grid[2], block[0] * block[1] * block[2]
    check_footprint(
        program,
        module,
        shared,
        nblocks=nblocks,
        resident=resident,
        block_size=block_size,
        buffer_bytes=sum(b.array.nbytes for b in buffers if isinstance(b, Buffer)),
        automatic_buffers=sum(isinstance(b, AutoBuffer) for b in buffers),
        limits=limits,
    )


def _used_part(mem: Memory, alloc: Allocation, nbytes: int, dtype: np.dtype) -> np.ndarray:
    """The first `nbytes` of an automatic buffer (rounded up to whole elements) as an array of `dtype`.

    Only this part is copied: the rest of the reservation was never touched,
    and reading it all would commit memory for nothing.
    """
    count = -(-nbytes // dtype.itemsize)
    return np.frombuffer(bytearray(mem.read(alloc, count * dtype.itemsize)), dtype=dtype)

