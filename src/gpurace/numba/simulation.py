"""`with gpurace.numba.simulate(): kernel[grid, block](*args)`: host code written for a GPU, run in gpurace.

Code that launches Numba kernels also moves data (`cuda.to_device`,
`copy_to_host`), synchronises and asks whether CUDA is there. Under
`simulate()` each of those works on NumPy arrays, which are the simulator's
device memory, and each launch is a `gpurace.numba.check`, so that a test
suite written for a GPU runs, unchanged, on a machine without one, and
fails on races. Numba's functions are replaced on the `numba.cuda` module
and on its dispatcher class for the duration of the block only; code that
imported them by name before the block (`from numba.cuda import to_device`)
keeps the real ones.
"""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np

from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.numba_kernels import compute_capability, require_numba
from gpurace.numba.device import device_replacements
from gpurace.report.model import Report

DEFAULT_FORALL_BLOCK = 128
"""Threads per block of `kernel.forall(n)` without `tpb`: Numba asks the driver's occupancy calculator, which
needs a GPU; 128 is a block size every architecture runs."""


class RacesFound(AssertionError):
    """Launches under `simulate()` had findings: the message is their report, `reports` the launches' reports.
    An AssertionError, so that a test under `simulate()` fails with the report."""

    def __init__(self, reports: list[Report]):
        self.reports = reports
        super().__init__("\n".join(report_text(r) for r in reports if r.findings))


class DeviceArray(np.ndarray):
    """What `cuda.to_device`, `cuda.device_array` and their likes return under `simulate()`: a NumPy array (the
    simulator's device memory is NumPy's) with the methods of Numba's device arrays that host code calls."""

    def copy_to_host(self, ary=None, stream=0):
        host = np.array(self, copy=True).view(np.ndarray)
        if ary is None:
            return host
        ary[...] = host
        return ary

    def copy_to_device(self, ary, stream=0):
        self[...] = ary


class Stream:
    """`cuda.stream()` under `simulate()`: launches run at once, in order, so there is never anything to wait for."""

    def synchronize(self) -> None:
        pass

    @contextlib.contextmanager
    def auto_synchronize(self):
        yield self


class Simulation:
    """The launches of one `simulate()` block: `reports` in launch order; `options` go to every `check`."""

    def __init__(self, options: dict):
        self.options = options
        self.reports: list[Report] = []

    def launch(self, kernel, config: tuple, args: tuple) -> None:
        """`kernel[config](*args)`: config is (grid, block[, stream[, dynamic shared memory bytes]])."""
        from gpurace.numba import check

        if len(config) not in (2, 3, 4):
            raise ValueError("a kernel launch needs kernel[grid, block], optionally with a stream and shared memory bytes")
        grid, block, _stream, shared = (*config, 0, 0)[:4]
        self.reports.append(check(kernel, grid, block, *args, **({"shared_bytes": shared} if shared else {}), **self.options))

    @property
    def findings(self) -> list:
        return [f for r in self.reports for f in r.findings]


def to_device(obj, stream=0, copy=True, to=None):
    if to is not None:
        to.copy_to_device(obj)
        return to
    return np.array(obj, copy=True, order="C").view(DeviceArray)


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    return np.zeros(shape, dtype=dtype, order=order).view(DeviceArray)


def device_array_like(ary, stream=0):
    return device_array(ary.shape, ary.dtype)


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    return np.zeros(shape, dtype=dtype, order=order)


@contextlib.contextmanager
def pinned(*arrays):
    yield


@contextlib.contextmanager
def patched(replacements: dict):
    """`replacements` ((owner, attribute) -> value) set for the block, the originals back after it."""
    saved = {(owner, name): getattr(owner, name) for owner, name in replacements}
    for (owner, name), value in replacements.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for (owner, name), value in saved.items():
            setattr(owner, name, value)


@contextlib.contextmanager
def simulate(*, raise_on_findings: bool = True, arch: str = DEFAULT_ARCH, **options):
    """Run every `kernel[grid, block](*args)` (and `kernel.forall(n)(*args)`) of the block in gpurace instead of on
    a GPU, with detection.

    `cuda.to_device`, `cuda.device_array(_like)`, `cuda.pinned_array`, `copy_to_host` and `copy_to_device`
    work on NumPy arrays (`DeviceArray`); `cuda.synchronize`, `cuda.stream()` and `cuda.pinned` have nothing to
    wait for; `cuda.is_available()` is true; `cuda.get_current_device()` and `cuda.current_context()` answer
    for a device of `arch` (`gpurace.numba.device`); `kernel.inspect_asm()` gives the PTX gpurace simulates and
    `kernel.inspect_llvm()` Numba's LLVM IR for it. Kernels defined inside the block with an explicit signature
    are compiled at their decoration without asking for a GPU (Numba's TypingError is raised there, as Numba
    raises it). Yields the `Simulation`; when the block ends and a launch had findings, raises `RacesFound`
    (unless `raise_on_findings` is False), and an exception of the block itself gets their report as a note.
    `options` are `gpurace.numba.check`'s.
    """
    require_numba()
    from numba import cuda
    from numba.cuda.core import sigutils
    from numba.cuda.dispatcher import CUDADispatcher

    from gpurace.errors import UserError
    from gpurace.frontend import numba_compile
    from gpurace.numba import compiled_for_types, compiled_llvm, compiled_ptx, llvm_for_types  # imports this module

    simulation = Simulation({"arch": arch, **options})
    cc = compute_capability(arch)

    def configure(kernel, config):
        config = config if isinstance(config, tuple) else (config,)
        return lambda *args: simulation.launch(kernel, config, args)

    def inspector(everything, one):
        """`CUDADispatcher.inspect_asm`/`inspect_llvm`: for one signature, or a dict for every signature compiled."""

        def inspect(kernel, signature=None):
            if signature is None:
                return everything(kernel, cc)
            argtypes, _ = sigutils.normalize_signature(signature)
            return one(kernel, tuple(argtypes), cc)

        return inspect

    def compile_at_decoration(kernel):
        """Compile a kernel with one explicit signature now, as Numba does, so that its TypingError is raised by
        the decoration; what gpurace cannot pass yet (records, ...) is refused at the launch, not here."""
        try:
            argtypes = numba_compile.signature_types(kernel)
            compiled_for_types(kernel, argtypes, cc, numba_errors=True)
        except (numba_compile.KernelError, UserError):
            pass

    def forall(kernel, ntasks, tpb=0, stream=0, sharedmem=0):
        block = tpb or DEFAULT_FORALL_BLOCK
        return configure(kernel, (max(1, math.ceil(ntasks / block)), block, stream, sharedmem))

    replacements = {
        (CUDADispatcher, "__getitem__"): configure,
        (CUDADispatcher, "forall"): forall,
        (CUDADispatcher, "inspect_asm"): inspector(compiled_ptx, lambda kernel, argtypes, at: compiled_for_types(kernel, argtypes, at).ptx),
        (CUDADispatcher, "inspect_llvm"): inspector(compiled_llvm, llvm_for_types),
        (cuda, "jit"): numba_compile.lazy_jit(cuda.jit, compile_at_decoration),
        (cuda, "to_device"): to_device,
        (cuda, "device_array"): device_array,
        (cuda, "device_array_like"): device_array_like,
        (cuda, "pinned_array"): pinned_array,
        (cuda, "pinned"): pinned,
        (cuda, "stream"): Stream,
        (cuda, "default_stream"): Stream,
        (cuda, "synchronize"): lambda: None,
        (cuda, "is_available"): lambda: True,
        **device_replacements(cc),
    }
    try:
        # offline: device functions with explicit signatures compile at their decoration
        with patched(replacements), numba_compile.offline(cc):
            yield simulation
    except Exception as e:
        if simulation.findings:
            e.add_note(str(RacesFound(simulation.reports)))
        raise
    if raise_on_findings and simulation.findings:
        raise RacesFound(simulation.reports)


def report_text(report: Report) -> str:
    """The report as `gpurace check` prints it, without colours."""
    from rich.console import Console

    from gpurace.report.text import render_text

    console = Console(record=True, width=120, soft_wrap=True, file=io.StringIO(), color_system=None)
    render_text(report, console)
    return console.export_text()
