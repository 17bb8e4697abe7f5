"""The device Numba's host code asks about under `simulate()`: `cuda.get_current_device()`, `cuda.current_context()`.

Test suites written for a GPU ask the device for its compute capability
before they launch anything (numba-cuda's own `skip_unless_cc_*` decorators,
`cuda.get_current_device().compute_capability >= (9, 0)` at import) and
size launches from its attributes. Without a driver those calls fail, so
under `simulate()` they answer for the simulated device: the architecture
kernels are compiled for, and the limits every CUDA device of it has.
"""

from __future__ import annotations

from dataclasses import dataclass

SIMULATED_SMS = 1
"""Multiprocessors the simulated device reports: gpurace runs blocks one after another on no real hardware, so a
host that sizes a grid by the multiprocessors gets the smallest grid, the cheapest to simulate."""


@dataclass(frozen=True)
class SimulatedDevice:
    """Numba's `Device`, as far as host code reads it: identity, compute capability and launch limits."""

    compute_capability: tuple[int, int]
    id: int = 0
    MAX_THREADS_PER_BLOCK: int = 1024
    MAX_BLOCK_DIM_X: int = 1024
    MAX_BLOCK_DIM_Y: int = 1024
    MAX_BLOCK_DIM_Z: int = 64
    MAX_GRID_DIM_X: int = 2**31 - 1
    MAX_GRID_DIM_Y: int = 65535
    MAX_GRID_DIM_Z: int = 65535
    MAX_SHARED_MEMORY_PER_BLOCK: int = 48 * 1024
    WARP_SIZE: int = 32
    MULTIPROCESSOR_COUNT: int = SIMULATED_SMS

    @property
    def name(self) -> bytes:
        major, minor = self.compute_capability
        return f"gpurace simulated sm_{major}{minor}".encode()

    @property
    def uuid(self) -> str:
        return "GPU-00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class SimulatedContext:
    """Numba's `Context` of the simulated device: launches run at once, so there is nothing to synchronise."""

    device: SimulatedDevice

    def synchronize(self) -> None:
        pass

    def reset(self) -> None:
        pass


def device_replacements(compute_capability: tuple[int, int]) -> dict:
    """`simulate()`'s replacements ((owner, attribute) -> value) that answer for the simulated device."""
    from numba import cuda
    from numba.cuda import api
    from numba.cuda.cudadrv import devices

    context = SimulatedContext(SimulatedDevice(compute_capability))

    def get_context(devnum=None):
        return context

    def get_current_device():
        return context.device

    return {
        (devices, "get_context"): get_context,
        (api, "current_context"): get_context,
        (cuda, "current_context"): get_context,
        (cuda, "get_current_device"): get_current_device,
    }
