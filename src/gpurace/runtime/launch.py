"""One kernel launch of a program under `gpurace exec`: checked as `gpurace check` checks a launch.

The launch runs on the program's device memory itself (`sim.launch.DeviceArgs`):
the kernel reads what the host copied in, and what it writes is what the
host copies out, with nothing copied per launch. It is checked with the
detectors and schedules of the command (`Device.check_options`); several
schedules each start from the memory the launch found, which afterwards
holds what the first one left.

Its findings join the run's (`Device.findings`), each naming the launch that
first showed it (`Finding.launch`: index, kernel, grid, block and the host
line of the launch), so the same race in a thousand launches is one finding
with a count. The CUDA error a GPU would give the program comes back as the
launch's status: an invalid configuration at once, and a fault while the
kernel runs (an illegal address, a trap, a kernel that never ends) as the
sticky error of the next synchronising call.
"""

from __future__ import annotations

from gpurace.check import check
from gpurace.detect.findings import ERROR, Finding
from gpurace.runtime.device import Device
from gpurace.runtime.protocol import CudaError
from gpurace.runtime.sites import HostFrame
from gpurace.sim.geometry import MAX_BLOCK_DIMS, MAX_GRID_DIMS, MAX_THREADS_PER_BLOCK
from gpurace.sim.launch import DeviceArgs
from gpurace.sim.memory import DeviceMemory

# What each kind of finding does to a real launch: faults end the kernel with these errors; races and the
# like go unnoticed by the hardware.
FAULTS = {
    "out-of-bounds": CudaError.ILLEGAL_ADDRESS,
    "write-to-read-only": CudaError.ILLEGAL_ADDRESS,
    "misaligned-access": CudaError.MISALIGNED_ADDRESS,
    "assertion-failure": CudaError.ASSERT,
    "trap": CudaError.LAUNCH_FAILURE,
    "stack-overflow": CudaError.LAUNCH_FAILURE,
    "deadlock": CudaError.LAUNCH_TIMEOUT,
    "livelock": CudaError.LAUNCH_TIMEOUT,
    "timeout": CudaError.LAUNCH_TIMEOUT,
}


def run_launch(
    device: Device, mangled: str, grid: tuple[int, int, int], block: tuple[int, int, int], shared_bytes: int,
    params: bytes, site: HostFrame,
) -> int:
    """Check one launch of kernel `mangled` on `device`; the `cudaError_t` the program gets for it.

    `device.launches` already counts this launch. A launch the simulator
    cannot run raises a UserError (the program is then stopped).
    """
    launch = {
        "index": device.launches,
        "kernel": mangled,
        "grid": list(grid),
        "block": list(block),
        "host": site.where() or None,
    }
    invalid = invalid_configuration(grid, block, shared_bytes, device.shared_optin_bytes)
    if invalid is not None:
        device.findings.add(_launch_error(invalid, site, launch))
        return CudaError.INVALID_CONFIGURATION
    module = device.module_of(mangled)
    memory = DeviceMemory(
        device.global_table,
        device.global_store,
        device.const_table,
        device.const_store,
        symbols={name: (a.space, a.base) for name, a in device.variables[device.modules.index(module)].items()},
    )
    report = check(
        module,
        kernel=mangled,
        grid=grid,
        block=block,
        args=DeviceArgs(memory, params),
        shared_bytes=shared_bytes,
        limits=device.limits,
        **device.check_options,
    )
    status = CudaError.SUCCESS
    launch["kernel"] = report.kernel
    for finding in report.findings:
        finding.launch = launch
        device.findings.add(finding, finding.count)
        if status == CudaError.SUCCESS and finding.kind in FAULTS:
            status = FAULTS[finding.kind]
    return status


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


def _launch_error(why: str, site: HostFrame, launch: dict) -> Finding:
    finding = Finding(
        "invalid-launch",
        ERROR,
        f"the launch fails with cudaErrorInvalidConfiguration: {why}",
        (site.site(),),
        space=None,
    )
    finding.launch = launch
    return finding


def _dims(d) -> str:
    return "x".join(str(v) for v in d)

