"""Checking Numba-CUDA kernels from Python, on NumPy arrays, without a GPU.

    import numpy as np, gpurace.numba
    from numba import cuda

    @cuda.jit
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    x = np.arange(256, dtype=np.float32)
    report = gpurace.numba.check(double, 2, 128, x)
    assert report.clean and x[255] == 510

The kernel object is the user's own, so it is compiled in this process
(`frontend.numba_compile`, with the argument types Numba gives the values),
unlike a `.py` file on the command line, which only a child process imports.
Its PTX runs through the same checks as `gpurace check`; arrays are updated
in place with what the kernel wrote (what schedule 0 left, when several
schedules run). Host code written for a GPU runs under `simulate()` (`numba.simulation`), and
`pytest -p gpurace.numba.pytest_plugin` runs a test suite that way (`numba.pytest_plugin`).
numba-cuda is an optional dependency: `pip install 'gpurace[numba]'`.
"""

from __future__ import annotations

import weakref

import numpy as np

from gpurace.check import check as check_launch
from gpurace.check import describe_arg
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.numba_kernels import (
    NumbaKernel, compute_capability, drop_generated_volatile, expand_args, kernel_from_answer, numba_module,
    require_numba,
)  # fmt: skip
from gpurace.numba.simulation import DeviceArray, RacesFound, Simulation, simulate
from gpurace.python_values import host_arrays
from gpurace.report.model import Report
from gpurace.sim.args import pack_scalar

__all__ = ["DeviceArray", "RacesFound", "Simulation", "check", "compile_kernel", "simulate"]

_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Compiled kernels by dispatcher, then by (argument types, compute capability): a test suite checks one kernel often."""
_llvm: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""LLVM IR by dispatcher, then by (argument types, compute capability), for `inspect_llvm()`."""


def check(kernel, grid, block, *args, arch: str = DEFAULT_ARCH, **options) -> Report:
    """Check one launch `kernel[grid, block](*args)` of a `@cuda.jit` kernel for races and synchronisation bugs.

    `args` are NumPy arrays (C-contiguous, updated in place) and numbers; `options` are those of
    `gpurace.check.check` (`detector`, `model`, `schedules`, `seed`, `shared_bytes`, `max_steps`, `limits`, ...).
    Returns the `Report` `gpurace check` prints; `report.clean` when nothing was found. A CPU tensor of another
    library (PyTorch's) stands for an array too, sharing its memory (`python_values.host_array`).
    """
    args = host_arrays(args)
    compiled = compile_kernel(kernel, args, arch)
    if len(args) != len(compiled.params):
        names = ", ".join(p.name for p in compiled.params)
        raise UserError(f"kernel {compiled.name} takes {len(compiled.params)} argument(s) ({names}), {len(args)} given")
    module = numba_module(compiled, kernel.py_func.__code__.co_filename)
    values = [_value(p, a) for p, a in zip(compiled.params, args)]
    report = check_launch(module, grid=grid, block=block, args=expand_args(compiled, values), **options)
    report.launch["args"] = [describe_arg(a) for a in args]
    return report if "model" in options else drop_generated_volatile(report)


def compile_kernel(kernel, args: tuple, arch: str = DEFAULT_ARCH) -> NumbaKernel:
    """The PTX and arguments of `kernel` compiled for the types Numba gives `args`, compiled once per types."""
    require_numba()
    from numba.cuda.dispatcher import CUDADispatcher

    from gpurace.frontend import numba_compile

    if not isinstance(kernel, CUDADispatcher) or kernel.targetoptions.get("device"):
        raise UserError(f"{kernel!r} is not a @cuda.jit kernel")
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
            raise UserError(f"argument {i + 1}: arrays must be C-contiguous (np.ascontiguousarray makes a copy that is)")
    try:
        argtypes = numba_compile.signature_types(kernel)  # a kernel defined under `simulate` keeps its signature
        if argtypes is None:
            argtypes = tuple(kernel.typeof_pyval(a) for a in args)
    except numba_compile.KernelError as e:
        raise UserError(str(e)) from None
    except ValueError as e:  # a value Numba cannot type
        raise UserError(f"kernel {kernel.py_func.__name__}: {e}") from None
    return compiled_for_types(kernel, argtypes, compute_capability(arch))


def compiled_for_types(kernel, argtypes: tuple, cc: tuple[int, int], *, numba_errors: bool = False) -> NumbaKernel:
    """`kernel` compiled for the Numba types `argtypes` and compute capability `cc`, once per both; Numba's own
    errors raised as Numba raises them with `numba_errors`, else UserErrors."""
    from gpurace.frontend import numba_compile

    cache = _compiled.setdefault(kernel, {})
    if (argtypes, cc) not in cache:
        try:
            cache[argtypes, cc] = kernel_from_answer(numba_compile.compile_kernel(kernel, argtypes, cc, numba_errors=numba_errors))
        except numba_compile.KernelError as e:
            raise UserError(str(e)) from None
    return cache[argtypes, cc]


def compiled_ptx(kernel, cc: tuple[int, int]) -> dict:
    """The PTX of `kernel` for each argument types it was compiled for at `cc` (its explicit signature's at
    least), as `CUDADispatcher.inspect_asm()` maps signatures to assembly."""
    from gpurace.frontend import numba_compile

    explicit = numba_compile.signature_types(kernel)
    if explicit is not None:
        compiled_for_types(kernel, explicit, cc)
    return {argtypes: k.ptx for (argtypes, at), k in _compiled.get(kernel, {}).items() if at == cc}


def llvm_for_types(kernel, argtypes: tuple, cc: tuple[int, int]) -> str:
    """The LLVM IR Numba generates for `kernel` at `argtypes` and `cc`, once per both (Numba numbers each
    module it builds, so a second compile would not give the same text)."""
    from gpurace.frontend import numba_compile

    cache = _llvm.setdefault(kernel, {})
    if (argtypes, cc) not in cache:
        cache[argtypes, cc] = numba_compile.kernel_llvm(kernel, argtypes, cc)
    return cache[argtypes, cc]


def compiled_llvm(kernel, cc: tuple[int, int]) -> dict:
    """`llvm_for_types` for each argument types `kernel` was compiled for at `cc`, keyed as `compiled_ptx`, as
    `CUDADispatcher.inspect_llvm()` maps signatures to IR (tests of code generation read it)."""
    return {argtypes: llvm_for_types(kernel, argtypes, cc) for argtypes in compiled_ptx(kernel, cc)}


def _value(param, value):
    """A Python argument as `expand_args` takes it: arrays as they are, numbers packed with their Numba type."""
    if param.kind == "scalar":
        return pack_scalar(value, param.dtype, f"argument {param.name} ({param.dtype})")
    if not isinstance(value, np.ndarray) or value.dtype != param.dtype or value.ndim != param.ndim:
        given = f"{value.dtype}[{value.ndim}d]" if isinstance(value, np.ndarray) else type(value).__name__
        raise UserError(
            f"argument {param.name}: the kernel's signature takes a {param.ndim}d array of {param.dtype}, {given} given"
        )
    return value
