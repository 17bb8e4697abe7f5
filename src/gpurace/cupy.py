"""Checking CuPy kernels (`RawKernel`, `RawModule`, and with CuPy `ElementwiseKernel`, `ReductionKernel`) from Python,
on NumPy arrays, without a GPU.

    import numpy as np, gpurace.cupy
    kernel = gpurace.cupy.RawKernel(r'''
    extern "C" __global__ void double_it(float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= 2;
    }''', "double_it")
    x = np.arange(256, dtype=np.float32)
    report = gpurace.cupy.check(kernel, (2,), (128,), (x, np.int32(256)))
    assert report.clean and x[255] == 510

`kernel` is CuPy's own `cupy.RawKernel` or a `(cupy.RawModule, name)` pair
(CuPy imports without a GPU; only compiling and launching need one), or
gpurace's stand-ins `RawKernel` and `RawModule`, which take CuPy's
constructor arguments and need no CuPy at all. The source is compiled by
gpurace's NVRTC path with the options it can honour
(`frontend.cupy_kernels`), and the launch runs through the same checks as
`gpurace check`; NumPy arrays stand for `cupy.ndarray`s and are updated in
place with what schedule 0 left.

A `cupy.ElementwiseKernel` or `cupy.ReductionKernel` is checked as it is
called, `check(kernel, x, y, out)` or `check(kernel, x, out, axis=1)`:
CuPy's own code generator writes its source for those arrays' types and
shapes, and it is launched as CuPy launches it
(`frontend.cupy_elementwise`, `frontend.cupy_reduction`).

Host code written for CuPy runs its launches in the simulator under
`simulate()`: see there for what it intercepts and what not.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
from collections import OrderedDict

from gpurace.check import check as check_launch
from gpurace.errors import UserError
from gpurace.frontend.cupy_elementwise import elementwise_launch, is_elementwise_kernel
from gpurace.frontend.cupy_generated import GeneratedLaunch
from gpurace.frontend.cupy_reduction import is_reduction_kernel, reduction_launch
from gpurace.frontend.cupy_kernels import CupySource, describe, kernel_args, load_cupy_module, parse_options
from gpurace.frontend.kernels import describe_kernel
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module
from gpurace.python_values import describe_value
from gpurace.report.model import Report
from gpurace.sim.launch import select_kernel

__all__ = ["RawKernel", "RawModule", "Simulation", "check", "simulate"]

_modules: OrderedDict[tuple, Module] = OrderedDict()
"""Compiled modules by source, options and name expressions (an `ElementwiseKernel`'s by its generated source
and compile options), the most recent last: a test suite launches one kernel often. At most `CACHED_MODULES`
are kept."""
CACHED_MODULES = 64


def check(kernel, *launch, **options) -> Report:
    """Check one launch of a CuPy kernel for races and synchronisation bugs; `report.clean` when nothing was found.

    `check(raw_kernel, grid, block, args, shared_mem=0, **options)` checks `raw_kernel(grid, block, args,
    shared_mem=shared_mem)` (`_check_raw`). `check(elementwise_kernel, *args, size=None, block_size=None,
    **options)` checks the call `elementwise_kernel(*args, size=size, block_size=block_size)` of a
    `cupy.ElementwiseKernel` (`_check_elementwise`), and `check(reduction_kernel, *args, axis=None, keepdims=False,
    out=None, **options)` the call `reduction_kernel(*args, axis=axis, keepdims=keepdims, out=out)` of a
    `cupy.ReductionKernel` (`_check_reduction`); outputs they leave out are allocated for the run (`simulate()`
    hands them back). `options` are those of `gpurace.check.check` (`detector`, `model`, `schedules`, `seed`,
    `max_steps`, `limits`, ...). Returns the `Report` that `gpurace check` prints.
    """
    if "arch" in options:
        raise UserError("the architecture of a CuPy kernel is one of its options: -arch=sm_80")
    if is_elementwise_kernel(kernel):
        return _check_elementwise(kernel, launch, **options)
    if is_reduction_kernel(kernel):
        return _check_reduction(kernel, launch, **options)
    return _check_raw(kernel, *launch, **options)


def _check_raw(kernel, grid, block, args, *, shared_mem: int = 0, **options) -> Report:
    """A `RawKernel` launch. `args` is a tuple as CuPy takes it: NumPy arrays (C-contiguous, updated in place)
    where the kernel takes pointers, NumPy scalars typed as its parameters (Python ints pass for integer
    parameters; see `frontend.cupy_kernels` for what CuPy would pass otherwise). A kernel built with
    `enable_cooperative_groups=True` is launched cooperatively, as CuPy does."""
    source = describe(kernel)
    module = _module(source, options.get("limits"))
    name = select_kernel(module, source.name)
    info = describe_kernel(module, next(k for k in module.kernels if k.name == name))
    values = kernel_args(info, args)
    if not isinstance(shared_mem, int) or shared_mem < 0:
        raise UserError(f"shared_mem must be a number of bytes, got {shared_mem!r}")
    options.setdefault("cooperative", source.cooperative)
    report = check_launch(module, grid=grid, block=block, args=values, kernel=name, shared_bytes=shared_mem, **options)
    report.launch["args"] = [describe_value(a) for a in args]
    return report


def _check_elementwise(kernel, args: tuple, *, size: int | None = None, block_size: int | None = None, **options) -> Report:
    """A call of a `cupy.ElementwiseKernel` (`frontend.cupy_elementwise`): inputs (NumPy arrays, of shapes that
    broadcast, strided views too, and numbers), then every output (updated in place) or none, launched as CuPy
    launches it: one thread per element of the loop, `block_size` (default 128) threads per block. Findings in the
    operation name lines of the operation string (line 1 is its first line)."""
    return _check_generated(elementwise_launch(kernel, args, size, block_size), f"ElementwiseKernel {kernel.name}", options)


def _check_reduction(kernel, args: tuple, *, axis=None, keepdims: bool = False, out=None, **options) -> Report:
    """A call of a `cupy.ReductionKernel` (`frontend.cupy_reduction`): inputs as for an `ElementwiseKernel`, then
    every output (updated in place; or `out=` for a kernel of one output) or none, reducing `axis` (an axis, a
    tuple of them, or None for all) with `keepdims` as CuPy does. Findings name lines of the source CuPy generates
    for the call, written to gpurace's cache as `NAME-HASH.cu`."""
    return _check_generated(reduction_launch(kernel, args, axis, keepdims, out), f"ReductionKernel {kernel.name}", options)


def _check_generated(launch: GeneratedLaunch, origin: str, options: dict) -> Report:
    """Compile a kernel CuPy generated (once per source and flags) and check its launch; the report's
    `launch["generated_from"]` names the CuPy kernel object (`origin`) the source was generated from."""
    module = _cached(
        (launch.source, launch.include_dirs, launch.defines, launch.arch),
        lambda: load_module(
            launch.source, include_dirs=launch.include_dirs, defines=launch.defines, arch=launch.arch,
            limits=options.get("limits"),
        ),
    )  # fmt: skip
    report = check_launch(module, grid=launch.grid, block=launch.block, args=launch.args, kernel=launch.name, **options)
    report.launch["args"] = launch.shown
    report.launch["generated_from"] = origin
    return report


def _module(source: CupySource, limits) -> Module:
    flags = parse_options(source.options)
    return _cached((source.code, source.path, source.name_expressions, flags), lambda: load_cupy_module(source, flags, limits))


def _cached(key: tuple, load) -> Module:
    """The module compiled under `key`, compiled by `load()` when it is not among the `CACHED_MODULES` kept."""
    if key in _modules:
        _modules.move_to_end(key)
    else:
        _modules[key] = load()
        if len(_modules) > CACHED_MODULES:
            _modules.popitem(last=False)
    return _modules[key]


class RawKernel:
    """A stand-in for `cupy.RawKernel`, with its constructor: the source, the kernel's name (its `extern "C"`
    or mangled name) and NVRTC options. `backend` and `jitify` do not change what gpurace compiles.

    Calling it, `kernel(grid, block, args, shared_mem=0)`, launches it in the simulator inside `simulate()`
    (and is an error outside, where there is no GPU to launch on: use `check`).
    """

    def __init__(self, code: str, name: str, options=(), backend: str = "nvrtc", *, translate_cucomplex: bool = False,
                 enable_cooperative_groups: bool = False, jitify: bool = False):  # fmt: skip
        self.code = code
        self.name = name
        self.options = tuple(options)
        self.backend = backend
        self.translate_cucomplex = translate_cucomplex
        self.enable_cooperative_groups = enable_cooperative_groups
        self.file_path = None
        self.name_expressions: tuple[str, ...] = ()  # a module's, for a kernel of `RawModule.get_function`

    def __call__(self, grid, block, args, *, shared_mem: int = 0, enable_cooperative_groups: bool = False):
        if not _active:
            raise UserError(
                f"kernel {self.name}: gpurace.cupy.RawKernel launches only inside `with gpurace.cupy.simulate():`; "
                "gpurace.cupy.check(kernel, grid, block, args) checks one launch"
            )
        cooperative = {"cooperative": True} if enable_cooperative_groups else {}
        _active[-1].launch(self, grid, block, args, shared_mem, cooperative)

    def __repr__(self) -> str:
        return f"gpurace.cupy.RawKernel(name={self.name!r})"


class RawModule:
    """A stand-in for `cupy.RawModule`: `code` (or `path` to a `.ptx` file), options and the name expressions
    of the template kernels to instantiate; `get_function(name)` gives a `RawKernel` to launch."""

    def __init__(self, code: str | None = None, *, path: str | None = None, options=(), backend: str = "nvrtc",
                 translate_cucomplex: bool = False, enable_cooperative_groups: bool = False, name_expressions=None,
                 jitify: bool = False):  # fmt: skip
        if (code is None) == (path is None):
            raise UserError("RawModule takes either code or path")
        self.code = code
        self.file_path = path
        self.options = tuple(options)
        self.backend = backend
        self.translate_cucomplex = translate_cucomplex
        self.enable_cooperative_groups = enable_cooperative_groups
        self.name_expressions = tuple(name_expressions or ())

    def get_function(self, name: str) -> RawKernel:
        kernel = RawKernel(self.code, name, self.options, self.backend, translate_cucomplex=self.translate_cucomplex,
                           enable_cooperative_groups=self.enable_cooperative_groups)  # fmt: skip
        kernel.file_path = self.file_path
        kernel.name_expressions = self.name_expressions
        return kernel


class Simulation:
    """The launches of one `simulate()` block: `reports` in launch order; `options` go to every `check`."""

    def __init__(self, options: dict):
        self.options = options
        self.reports: list[Report] = []

    def launch(self, kernel, grid, block, args, shared_mem: int, extra: dict) -> None:
        self.reports.append(check(kernel, grid, block, args, shared_mem=shared_mem, **extra, **self.options))

    def run_generated(self, launch: GeneratedLaunch, origin: str) -> tuple:
        """Check the launch of an `ElementwiseKernel` or `ReductionKernel` call; its outputs, updated by the run."""
        self.reports.append(_check_generated(launch, origin, self.options))
        return launch.outputs

    @property
    def findings(self) -> list:
        return [f for r in self.reports for f in r.findings]


_active: list[Simulation] = []
"""The `simulate()` blocks being run, innermost last: a launch is recorded by the innermost one."""


@contextlib.contextmanager
def simulate(**options):
    """Run every launch of a `gpurace.cupy.RawKernel` (or of a kernel from `gpurace.cupy.RawModule`) made in the
    block in gpurace's simulator with detection, and yield the `Simulation` that collects their reports.

    Findings raise nothing: read `simulation.reports` (or `simulation.findings`). When CuPy is importable,
    `cupy.RawKernel`, `cupy.RawModule`, `cupy.ElementwiseKernel` and `cupy.ReductionKernel` are replaced for
    the block by classes whose calls run in the simulator, so kernels the code creates inside it are
    intercepted; a call of an `ElementwiseKernel` or a `ReductionKernel` returns what CuPy's would, as NumPy
    arrays (outputs left out are allocated). Not intercepted: kernels created before the block (CuPy's classes
    cannot be patched), CuPy arrays and array functions (pass NumPy arrays), streams (a launch runs when it is
    made) and events. `options` are `check`'s.
    """
    simulation = Simulation(options)
    cupy = _import_cupy()
    names = ("RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel")
    saved = None if cupy is None else {n: getattr(cupy, n) for n in names}
    _active.append(simulation)
    try:
        if cupy is not None:
            cupy.RawKernel, cupy.RawModule = RawKernel, RawModule
            cupy.ElementwiseKernel, cupy.ReductionKernel = _generated_kernel_classes()
        yield simulation
    finally:
        _active.remove(simulation)
        for name, value in (saved or {}).items():
            setattr(cupy, name, value)


@functools.cache
def _generated_kernel_classes() -> tuple[type, type]:
    """Subclasses of CuPy's `ElementwiseKernel` and `ReductionKernel` whose calls run in the innermost `simulate()`
    block and return what CuPy's calls return. CuPy is imported only when it is there, so they are made from its
    classes here."""
    from cupy._core._kernel import ElementwiseKernel as elementwise
    from cupy._core._reduction import ReductionKernel as reduction

    def simulation(name: str) -> Simulation:
        if not _active:
            raise UserError(
                f"kernel {name}: a kernel made inside `with gpurace.cupy.simulate():` launches only inside it; "
                "gpurace.cupy.check(kernel, *args) checks one call"
            )
        return _active[-1]

    class ElementwiseKernel(elementwise):
        """`cupy.ElementwiseKernel` inside `simulate()`."""

        def __call__(self, *args, size=None, block_size=None, stream=None):
            launch = elementwise_launch(self, args, size, block_size)
            outputs = simulation(self.name).run_generated(launch, f"ElementwiseKernel {self.name}")
            if self.no_return:
                return None
            return outputs[0] if self.nout == 1 and not self.return_tuple else outputs

    class ReductionKernel(reduction):
        """`cupy.ReductionKernel` inside `simulate()`."""

        def __call__(self, *args, axis=None, keepdims=False, out=None, stream=None):
            launch = reduction_launch(self, args, axis, keepdims, out)
            return simulation(self.name).run_generated(launch, f"ReductionKernel {self.name}")[0]

    return ElementwiseKernel, ReductionKernel


def _import_cupy():
    """CuPy's module when it is installed and imports here (it does without a GPU), else None."""
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        return importlib.import_module("cupy")
    except Exception:  # a CuPy that cannot load its CUDA libraries has no classes to replace
        return None
