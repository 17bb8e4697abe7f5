"""One kernel launch of a program under `gpurace exec`: checked as `gpurace check` checks a launch.

The launch runs on the program's device memory itself (`sim.launch.DeviceArgs`):
the kernel reads what the host copied in, and what it writes is what the
host copies out, with nothing copied per launch. It is checked with the
detectors and schedules of the command (`Device.check_options`); several
schedules each start from the memory the launch found, which afterwards
holds what the first one left.

A launch the command's filters leave out (`Device.launch_filter`,
`filters.LaunchFilter`) is simulated once, with schedule 0's policy and no
detector: the program still gets exactly what the kernel computes and the
error a GPU would give, but nothing from the launch is reported.

A checked launch also records its footprint (`detect.footprint`), for the
stream-order races of `streams.py`. Every launch, checked or not, watches
its global memory accesses with a
`detect.initcheck.GlobalInitCheck`: a checked launch's reads of `cudaMalloc`
memory that nothing wrote are findings, and what any launch writes counts as
written for the launches after it.

Its findings join the run's (`Device.findings`), each naming the launch that
first showed it (`Finding.launch`: index, kernel, grid, block and the host
line of the launch), so the same race in a thousand launches is one finding
with a count. The CUDA error a GPU would give the program comes back as the
launch's status: an invalid configuration at once, and a fault while the
kernel runs (an illegal address, a trap, a kernel that never ends) as the
sticky error of the next synchronising call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from gpurace.check import check
from gpurace.detect.findings import ERROR, Address, Finding
from gpurace.detect.footprint import LaunchFootprint, Spans, first_common
from gpurace.detect.initcheck import GlobalInitCheck
from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature
from gpurace.report.model import format_launch
from gpurace.runtime.child_grids import run_child_grids
from gpurace.runtime.device import SIMULATED_CLOCK_HZ, Device
from gpurace.runtime.protocol import CudaError
from gpurace.runtime.sites import HostFrame, at_where
from gpurace.sim.clusters import cluster_refusal, launch_cluster
from gpurace.sim.cooperative import WORKSPACE_BYTES, WORKSPACE_NAME, too_large, workspace_bytes
from gpurace.sim.device_runtime import DeviceLaunchLog, allocates_on_device, launches_kernels
from gpurace.sim.geometry import MAX_BLOCK_DIMS, MAX_GRID_DIMS, MAX_THREADS_PER_BLOCK, format_dims
from gpurace.sim.events import EventSink
from gpurace.sim.launch import DeviceArgs, simulate
from gpurace.sim.memory import DeviceMemory
from gpurace.sim.memory.layout import PAGE_SIZE, Allocation
from gpurace.words import plural

# What each kind of finding does to a real launch: faults end the kernel with these errors; races and the
# like go unnoticed by the hardware.
FAULTS = {
    "out-of-bounds": CudaError.ILLEGAL_ADDRESS,
    "write-to-read-only": CudaError.ILLEGAL_ADDRESS,
    "misaligned-access": CudaError.MISALIGNED_ADDRESS,
    "assertion-failure": CudaError.ASSERT,
    "trap": CudaError.LAUNCH_FAILURE,
    "stack-overflow": CudaError.LAUNCH_FAILURE,
    "invalid-call": CudaError.ILLEGAL_INSTRUCTION,
    "deadlock": CudaError.LAUNCH_TIMEOUT,
    "livelock": CudaError.LAUNCH_TIMEOUT,
    "timeout": CudaError.LAUNCH_TIMEOUT,
}


@dataclass(frozen=True)
class LaunchOutcome:
    """What became of one launch, for a progress line: `launch` as `Finding.launch` names it; `left_out_by` the
    option that left it unchecked (None when it was checked); `findings` the distinct findings it showed;
    `replayed` whether it repeated an earlier launch exactly and was not simulated again (`runtime.repeats`)."""

    launch: dict
    left_out_by: str | None
    findings: int
    replayed: bool = False

    def describe(self) -> str:
        """`launch 12 of reduce (grid 64x1x1, block 256x1x1) at app.cu:41: checked, 1 finding`, with `, replayed`
        after a replayed launch."""
        replayed = ", replayed" if self.replayed else ""
        if self.left_out_by is not None:
            return f"{format_launch(self.launch)}: not checked ({self.left_out_by}){replayed}"
        return f"{format_launch(self.launch)}: checked, {plural(self.findings, 'finding')}{replayed}"


def launch_record(device: Device, mangled: str, grid, block, site: HostFrame) -> dict:
    """The launch as `Finding.launch` names it: the latest one, which `device.launches` counts."""
    return {
        "index": device.launches,
        "kernel": _kernel_name(mangled),
        "grid": list(grid),
        "block": list(block),
        "host": site.where() or None,
    }


@lru_cache(maxsize=None)
def _kernel_name(mangled: str) -> str:
    """The kernel's name as findings show it, demangled once per kernel rather than at each of its launches."""
    return demangle_signature(mangled).name


def run_launch(
    device: Device, module: int, mangled: str, grid: tuple[int, int, int], block: tuple[int, int, int], shared_bytes: int,
    params: bytes, site: HostFrame, sinks: Sequence[EventSink] = (), cooperative: bool = False,
    cluster: tuple[int, int, int] | None = None,
) -> tuple[int, dict]:
    """Run one launch of kernel `mangled` of `device.modules[module]`, checked unless its filter says otherwise; the
    `cudaError_t` the program gets for it, and the launch as its findings name it (`launch_record`).
    `sinks` watch its run (the first schedule's, when checked). A `cooperative` launch
    (`cudaLaunchCooperativeKernel`) gets a grid workspace of its own, and fails with
    `cudaErrorCooperativeLaunchTooLarge` when its blocks cannot all be resident (`sim.cooperative`). `cluster`:
    the dimensions of `cudaLaunchKernelEx`'s cudaLaunchAttributeClusterDimension (None: the kernel's own
    `__cluster_dims__`, if any; `sim.clusters`).

    `device.launches` already counts this launch. A launch the simulator
    cannot run raises a UserError (the program is then stopped).
    """
    launch = launch_record(device, mangled, grid, block, site)
    left_out_by = device.launch_filter.select(mangled)
    invalid = invalid_configuration(grid, block, shared_bytes, device.shared_optin_bytes)
    too_many = _not_coresident(device, module, mangled, grid, block, shared_bytes) if cooperative and invalid is None else None
    bad_cluster = _cluster_refusal(device, module, mangled, grid, cluster) if invalid is None else None
    replayed = False
    if invalid is not None:
        findings = [_launch_error("cudaErrorInvalidConfiguration", invalid, site)]
        status = CudaError.INVALID_CONFIGURATION
    elif bad_cluster is not None:
        findings = [_launch_error("cudaErrorInvalidClusterSize", bad_cluster, site)]
        status = CudaError.INVALID_CLUSTER_SIZE
    elif too_many is not None:
        findings = [_launch_error("cudaErrorCooperativeLaunchTooLarge", too_many, site)]
        status = CudaError.COOPERATIVE_LAUNCH_TOO_LARGE
    else:
        findings, steps, replayed = _execute_or_replay(
            device, module, mangled, grid, block, shared_bytes, params, sinks, checked=left_out_by is None,
            cooperative=cooperative, cluster=cluster,
        )
        device.simulated_seconds += steps / SIMULATED_CLOCK_HZ
        status = next((FAULTS[f.kind] for f in findings if f.kind in FAULTS), CudaError.SUCCESS)
    if left_out_by is None:
        device.checked_launches += 1
        for finding in findings:
            finding.launch = launch
            device.findings.add(finding, finding.count)
    if device.on_launch is not None:
        device.on_launch(LaunchOutcome(launch, left_out_by, len(findings), replayed))
    log = next((s for s in sinks if isinstance(s, DeviceLaunchLog)), None)
    if log is not None:
        children = run_child_grids(device, module, launch, log, sinks, run_launch, device_launch_log)
        status = status if status != CudaError.SUCCESS else children
    return status, launch


def device_launch_log(device: Device, module: int, depth: int = 0) -> DeviceLaunchLog | None:
    """The sink through which a grid uses the device runtime (`sim.device_runtime`): it records the launches
    made from device code, when kernels of `module` make any, and gives the device heap, when they allocate;
    None when they do neither."""
    if module not in device.runtime_use:
        code = device.modules[module]
        device.runtime_use[module] = (launches_kernels(code), allocates_on_device(code))
    launches, allocates = device.runtime_use[module]
    if not (launches or allocates):
        return None
    return DeviceLaunchLog(depth=depth, heap=device.device_heap if allocates else None, records=launches)


def _execute_or_replay(
    device: Device, module: int, mangled: str, grid, block, shared_bytes: int, params: bytes, sinks: Sequence[EventSink], *,
    checked: bool, cooperative: bool, cluster: tuple[int, int, int] | None,
) -> tuple[list[Finding], int, bool]:
    """`_execute`, or the outcome of an earlier launch this one repeats exactly (`runtime.repeats`; a cooperative
    launch never does: each has a grid workspace of its own; nor one whose kernels launch kernels or allocate on the
    device, `DeviceLaunchLog`); and whether it was that."""
    repeats = device.repeats
    footprint = next((s for s in sinks if isinstance(s, LaunchFootprint)), None)
    once = cooperative or any(isinstance(s, DeviceLaunchLog) for s in sinks)  # children: never replayed
    key = None if once else repeats.key(device, module, mangled, grid, block, cluster, shared_bytes, params)
    if key is not None:
        replayed = repeats.replay(key, device, checked, footprint)
        if replayed is not None:
            return (*replayed, True)
    watch = repeats.watch(key, device, footprint, checked) if key is not None else None
    findings, steps = _execute(
        device, module, mangled, grid, block, shared_bytes, params, [*sinks, *(watch.sinks if watch else ())], checked=checked,
        cooperative=cooperative, cluster=cluster,
    )
    _refuse_waiting_for_host(device, findings, sinks)
    if watch is not None:
        repeats.remember(key, device, checked, watch, findings, steps, FAULTS)
    return findings, steps, False


def _refuse_waiting_for_host(device: Device, findings: list[Finding], sinks: Sequence[EventSink]) -> None:
    """A UserError (the program is stopped) when the kernel spun without progress on memory the host can write.

    Every launch runs to its end when it is issued, before the host goes on, so a kernel that waits for a flag
    the host sets after the launch (in managed or page-locked memory) would wait forever here, and a livelock
    would be a false finding: such programs are refused, naming what the kernel waits on."""
    livelock = next((f for f in findings if f.kind == "livelock"), None)
    footprint = next((s for s in sinks if isinstance(s, LaunchFootprint)), None)
    if livelock is None or footprint is None:
        return
    reads = footprint.footprint().reads
    for block in device.heap.host_visible.values():
        alloc = block.allocation
        if first_common(reads, Spans(((alloc.base, alloc.base + alloc.size),))) is not None:
            spin = livelock.sites[0].loc if livelock.sites else None
            where = f" at {spin.file.rsplit('/', 1)[-1]}:{spin.line}" if spin is not None else ""
            raise UserError(
                f"it spins{where} reading {alloc.name}, memory the host can write, with nothing in the launch left "
                "to change it: gpurace runs each launch to its end when it is issued, so a kernel that waits for "
                "a later write by the host cannot be simulated"
            )


def _cluster_refusal(device: Device, module: int, mangled: str, grid, cluster: tuple[int, int, int] | None) -> str | None:
    """Why a GPU refuses the launch's cluster dimensions (`cluster`, else the kernel's `__cluster_dims__`) with its
    grid, or None (also for a launch without clusters)."""
    dims, _ = launch_cluster(cluster, device.modules[module].functions[mangled].directives)
    why = cluster_refusal(grid, dims)
    return f"cluster {format_dims(dims)}: {why}" if why is not None else None


def _not_coresident(device: Device, module: int, mangled: str, grid, block, shared_bytes: int) -> str | None:
    """Why a cooperative launch cannot have all its blocks resident on the virtual device, or None."""
    attributes = device.kernel_attributes(module, mangled)
    static = attributes.static_shared_bytes if attributes is not None else 0
    return too_large(grid, block, static + shared_bytes, device.capability)


def _execute(
    device: Device, module: int, mangled: str, grid, block, shared_bytes: int, params: bytes, sinks: Sequence[EventSink], *,
    checked: bool, cooperative: bool, cluster: tuple[int, int, int] | None = None,
) -> tuple[list[Finding], int]:
    """Run the launch on the device's memory: checked (`gpurace.check.check`, every detector and schedule of the
    command) or only simulated. The findings, of which the simulator's own decide the launch's CUDA error, and
    the scheduler steps of the run whose memory the program keeps (its simulated time).

    A cooperative launch's grid workspace is placed in the global arena for this launch alone (a new address,
    so two launches never share one), and its page goes back to the system when the launch ends."""
    workspace = _place_workspace(device) if cooperative else None
    try:
        return _run(device, module, mangled, grid, block, shared_bytes, params, sinks, checked, workspace, cluster)
    finally:
        if workspace is not None:
            device.global_arena.release(workspace.base, PAGE_SIZE)


def _place_workspace(device: Device) -> Allocation:
    """A fresh grid workspace at the start of a page of the global arena (`sim.cooperative`)."""
    try:
        workspace = device.global_table.place(WORKSPACE_NAME, WORKSPACE_BYTES, PAGE_SIZE)
    except MemoryError:
        raise UserError("the simulated device's global memory has no room left for a cooperative launch's grid workspace") from None
    device.global_arena.view(workspace.base, WORKSPACE_BYTES)[:] = np.frombuffer(workspace_bytes(), dtype=np.uint8)
    return workspace


def _run(
    device: Device, index: int, mangled: str, grid, block, shared_bytes: int, params: bytes, sinks: Sequence[EventSink],
    checked: bool,
    workspace: Allocation | None,
    cluster: tuple[int, int, int] | None = None,
) -> tuple[list[Finding], int]:
    """`_execute`'s run, with the grid workspace of a cooperative launch (None: not cooperative) and the launch's
    cluster dimensions (None: the kernel's own)."""
    module = device.modules[index]
    memory = DeviceMemory(
        device.global_table,
        device.global_store,
        device.const_table,
        device.const_store,
        symbols={name: (a.space, a.base) for name, a in device.variables[index].items()},
        textures=device.textures,
    )
    init_check = GlobalInitCheck(device.heap.written)
    launch = dict(
        kernel=mangled, grid=grid, block=block, shared_bytes=shared_bytes, limits=device.limits, sinks=[init_check, *sinks],
        args=DeviceArgs(memory, params, grid_workspace=workspace.base if workspace is not None else 0),
        cooperative=workspace is not None, cluster=cluster,
    )  # fmt: skip
    if checked:
        report = check(module, **launch, **device.check_options)
        first_run = report.stats.get("schedules", [report.stats])[0]  # one schedule: the report is its run's
        unwritten = [_with_allocating_line(device, f) for f in init_check.finish()]
        findings = [_naming_freed_memory(device, f) for f in report.findings] + unwritten
        steps = first_run["steps"]
    else:
        # Schedule 0 of a check is the simulator's default policy, so the program sees the same memory either way.
        same_run = {k: v for k, v in device.check_options.items() if k in ("seed", "max_steps")}
        result = simulate(module, **launch, **same_run)
        findings, steps = result.findings, result.stats.steps
    init_check.commit()
    return findings, steps


def _with_allocating_line(device: Device, finding: Finding) -> Finding:
    """An uninitialised read of `cudaMalloc` memory, with the host line that allocated it (cause and details)."""
    block = device.heap.block_of_canonical(finding.address.address) if finding.address is not None else None
    if block is not None:
        where = device.source_lines.frame(block.allocated_at).where()
        if where:
            finding.cause += f" (`{block.allocation.name}` was allocated {at_where(where)})"
            finding.details["allocated_at"] = where
    return finding


def _naming_freed_memory(device: Device, finding: Finding) -> Finding:
    """An out-of-bounds access into an allocation that was freed (its address space unmapped, as a GPU's: `heap`),
    with the allocation and the host lines that allocated and freed it in its cause and details, in place of the
    nearest live allocation, which the simulator names."""
    address = finding.details.get("address")
    if finding.kind != "out-of-bounds" or address is None:
        return finding
    block = device.heap.freed_block_at(address)
    if block is not None:
        alloc = block.allocation
        allocated, freed = (at_where(device.source_lines.frame(site).where()) for site in (block.allocated_at, block.freed_at))
        access = finding.cause.split(": ", 1)[0]  # the simulator's `out-of-bounds N-byte global access at 0x...`
        finding.cause = (
            f"{access}: in `{alloc.name}` ({plural(alloc.size, 'byte')}, allocated {allocated}), which was freed "
            f"{freed}: a use after free"
        )
        finding.details.update(allocated_at=allocated, freed_at=freed)
        finding.address = Address(alloc.name, address - alloc.base, address)
    return finding


def invalid_configuration(grid, block, shared_bytes: int, shared_optin_bytes: int) -> str | None:
    """Why a GPU would refuse to launch with this configuration (`cudaErrorInvalidConfiguration`), or None."""
    threads = block[0] * block[1] * block[2]
    if min(*grid, *block) < 1:
        return f"a grid or block dimension is 0 (grid {_dims(grid)}, block {_dims(block)})"
    if any(b > m for b, m in zip(block, MAX_BLOCK_DIMS)) or threads > MAX_THREADS_PER_BLOCK:
        return (
            f"a block of {_dims(block)} ({threads} threads) is more than a GPU allows: at most {MAX_THREADS_PER_BLOCK} "
            f"threads, {_dims(MAX_BLOCK_DIMS)} per axis"
        )
    if any(g > m for g, m in zip(grid, MAX_GRID_DIMS)):
        return f"a grid of {_dims(grid)} is more than a GPU allows ({_dims(MAX_GRID_DIMS)} per axis)"
    if shared_bytes > shared_optin_bytes:
        return f"{shared_bytes} bytes of dynamic shared memory are more than a block can have ({shared_optin_bytes})"
    return None


def _launch_error(error: str, why: str, site: HostFrame) -> Finding:
    return Finding(
        "invalid-launch",
        ERROR,
        f"the launch fails with {error}: {why}",
        (site.site(),),
        space=None,
    )


def _dims(d) -> str:
    return "x".join(str(v) for v in d)

