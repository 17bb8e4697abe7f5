"""Compiling a Numba-CUDA kernel to PTX on a machine without a GPU; this module runs where numba is imported.

It is used twice: in the user's own process by `gpurace.numba` (the user
handed over the kernel object), and as a script (`python numba_compile.py
REQUEST`) in the child process that `frontend.numba_kernels` starts to import
an untrusted `.py` file, so that nothing of that file ever runs in gpurace's
process. As a script it imports nothing of gpurace (only the standard
library and numba), which keeps its start-up to numba's own import.

numba-cuda's `compile_ptx` needs no GPU, but two of its paths ask the CUDA
driver for the current device's compute capability, and fail without one:
a kernel decorated with an explicit signature (`@cuda.jit("void(float32[:])")`)
is compiled at decoration time, and a device function is compiled when the
kernel that calls it is typed. `offline` answers the second with the target
architecture, and the script's `cuda.jit` records explicit kernel signatures
instead of compiling them (`lazy_jit`). Device functions are compiled with
line information too, so that a finding inside one names its own line and
the kernel line that called it.

The answer describes each Python argument as the kernel's PTX parameters see
it (`describe_type`): arrays (element type, dimensions) and scalars; the ABI
of arrays is `frontend.numba_kernels`'s business.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import os
import sys
import traceback

class KernelError(Exception):
    """A problem with the user's kernel file or kernel that the user must fix (shown as gpurace's exit-2 message)."""


@contextlib.contextmanager
def offline(cc: tuple[int, int]):
    """numba-cuda compiling device functions for `cc`, with line information, without asking a driver for a device."""
    import numba.cuda.dispatcher as dispatcher

    class TargetDevice:
        compute_capability = cc

    saved = dispatcher.get_current_device, dispatcher.compile_cuda
    real_compile = saved[1]

    def compile_with_lines(*args, **kwargs):
        if not kwargs.get("debug"):
            kwargs["lineinfo"] = True
        return real_compile(*args, **kwargs)

    dispatcher.get_current_device = TargetDevice
    dispatcher.compile_cuda = compile_with_lines
    try:
        yield
    finally:
        dispatcher.get_current_device, dispatcher.compile_cuda = saved


def describe_type(ty) -> dict:
    """A Numba argument type as `frontend.numba_kernels` expects it; KernelError for types gpurace cannot pass yet."""
    from numba.core import types
    from numba.np.numpy_support import as_dtype

    scalars = (types.Integer, types.Float, types.Boolean)  # one PTX parameter each, of the value's width
    if isinstance(ty, types.Array):
        if ty.layout not in ("C", "A") or not isinstance(ty.dtype, scalars):
            raise KernelError(f"{ty}: only arrays of numbers or bools in C order are supported")
        return {"kind": "array", "dtype": as_dtype(ty.dtype).name, "ndim": ty.ndim}
    if isinstance(ty, scalars):
        return {"kind": "scalar", "dtype": as_dtype(ty).name}
    raise KernelError(f"{ty}: arguments of this type are not supported yet (arrays and int, float, bool scalars are)")


def compile_kernel(dispatcher, argtypes: tuple, cc: tuple[int, int], *, numba_errors: bool = False) -> dict:
    """PTX of `dispatcher`'s kernel for `argtypes` (Numba types) and the description of its arguments.
    Numba's own errors (`TypingError`, ...) are KernelErrors naming the kernel, or, with `numba_errors`,
    raised as Numba raised them."""
    from numba import cuda
    from numba.core.errors import NumbaError

    func = dispatcher.py_func
    names = list(inspect.signature(func).parameters)
    if len(names) != len(argtypes):
        raise KernelError(f"kernel {func.__name__} takes {len(names)} argument(s) ({', '.join(names)}), {len(argtypes)} given")
    params = []
    for name, ty in zip(names, argtypes):
        try:
            params.append({"name": name, **describe_type(ty)})
        except KernelError as e:
            raise KernelError(f"kernel {func.__name__}, argument {name}: {e}") from None
    options = dispatcher.targetoptions
    try:
        with offline(cc):
            ptx, _ = cuda.compile_ptx(
                func, tuple(argtypes), lineinfo=True, cc=cc, fastmath=options.get("fastmath", False),
                opt=options.get("opt", True), forceinline=options.get("forceinline", False),
            )  # fmt: skip
    except NumbaError as e:
        if numba_errors:
            raise
        where = f"{func.__code__.co_filename}:{func.__code__.co_firstlineno}"
        raise KernelError(f"{where}: Numba could not compile {func.__name__}:\n{e}") from None
    return {"ptx": ptx, "name": func.__name__, "params": params}


def kernel_llvm(dispatcher, argtypes: tuple, cc: tuple[int, int]) -> str:
    """The LLVM IR Numba generates for `dispatcher`'s kernel at `argtypes`, as `CUDADispatcher.inspect_llvm()`
    gives it: the kernel compiled as Numba compiles it for a launch (its `_Kernel`), for `cc`, with no GPU."""
    from numba.cuda.dispatcher import _Kernel

    with offline(cc):
        return _Kernel(dispatcher.py_func, argtypes, **dispatcher.targetoptions).inspect_llvm()


def lazy_jit(real_jit, decorated=None):
    """`cuda.jit` that keeps a kernel's explicit signatures (`gpurace_signatures`) instead of compiling it now;
    `decorated(kernel)`, when given, is called on each such kernel (to compile it where no GPU is asked)."""
    from numba.cuda.core import sigutils

    def jit(func_or_sig=None, *args, device=False, **kwargs):
        explicit = sigutils.is_signature(func_or_sig) or isinstance(func_or_sig, list)
        if device or not explicit:
            return real_jit(func_or_sig, *args, device=device, **kwargs)
        signatures = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]

        def decorate(func):
            kernel = real_jit(func, *args, **kwargs)
            kernel.gpurace_signatures = signatures
            if decorated is not None:
                decorated(kernel)
            return kernel

        return decorate

    return jit


def signature_types(kernel) -> tuple | None:
    """The argument types of `kernel`'s explicit signature, None when it has none; several signatures are refused."""
    from numba.cuda.core import sigutils

    signatures = getattr(kernel, "gpurace_signatures", None)
    if not signatures:
        return None
    if len(signatures) > 1:
        raise KernelError(f"kernel {kernel.py_func.__name__} has several signatures; checking one of them is not supported yet")
    argtypes, _ = sigutils.normalize_signature(signatures[0])
    return tuple(argtypes)


# --------------------------------------------------------------------------
# The child process: import a kernel file, compile one kernel
# --------------------------------------------------------------------------


def load_kernels(path: str) -> dict:
    """The kernels (`@cuda.jit` dispatchers that are not device functions) that the file at `path` defines, by name."""
    from numba.cuda.dispatcher import CUDADispatcher

    stem = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(stem if stem.isidentifier() else "kernels", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # whatever the user's file raises at import is the user's to fix
        frames = traceback.extract_tb(e.__traceback__)
        where = next((f"{f.filename}:{f.lineno}: " for f in reversed(frames) if f.filename == path), f"{path}: ")
        raise KernelError(f"{where}importing the file failed: {type(e).__name__}: {e}") from None
    return {
        name: value for name, value in vars(module).items()
        if isinstance(value, CUDADispatcher) and not value.targetoptions.get("device")
    }  # fmt: skip


def hinted_types(name: str, hints: list[dict]) -> tuple:
    """Numba types for the arguments `hints` describe (`frontend.numba_kernels.type_hints`), for a kernel without
    an explicit signature."""
    import numpy as np
    from numba.core import types
    from numba.np.numpy_support import from_dtype

    out = []
    for i, hint in enumerate(hints):
        if hint["kind"] == "array":
            if hint["dtype"] is None:
                raise KernelError(
                    f"--arg {i + 1} ({hint['spec']}): kernel {name} has no explicit signature, so a buffer needs its "
                    "element type, e.g. f32:1024 or i32:256:iota"
                )
            out.append(types.Array(from_dtype(np.dtype(hint["dtype"])), hint["ndim"], "C"))
        else:
            out.append(from_dtype(np.dtype(hint["dtype"])))
    return tuple(out)


def serve(request: dict) -> dict:
    """The child's job: import the file, choose the kernel, type its arguments, compile it."""
    from numba import cuda

    cc = tuple(request["cc"])
    cuda.jit = lazy_jit(cuda.jit)
    with offline(cc):  # device functions with explicit signatures compile at import
        kernels = load_kernels(request["path"])
    name = request["kernel"]
    if not kernels:
        triton = " (gpurace reads a file as Triton's when it imports triton at the start of a line)" if "triton" in sys.modules else ""
        raise KernelError(f"{request['path']} defines no @cuda.jit kernel{triton}")
    if name is None:
        if len(kernels) > 1:
            raise KernelError(f"{request['path']} defines several kernels ({', '.join(kernels)}); choose one with --kernel")
        name = next(iter(kernels))
    if name not in kernels:
        raise KernelError(f"no kernel named {name!r} in {request['path']} (kernels: {', '.join(kernels)})")
    kernel = kernels[name]
    argtypes = signature_types(kernel) or hinted_types(name, request["args"])
    return compile_kernel(kernel, argtypes, cc)


def main() -> None:
    """Answer the request in argv[1] with one JSON object on the stdout gpurace reads: {"ok": ...} or {"error": ...}.

    Whatever the kernel file prints goes to stderr, so it cannot be taken for the answer."""
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)  # Numba's simulator has no PTX to give
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    request = json.loads(sys.argv[1])
    sys.path[0] = os.path.dirname(request["path"])  # the file's imports resolve as when Python runs it
    try:
        answer = {"ok": serve(request)}
    except KernelError as e:
        answer = {"error": str(e)}
    with os.fdopen(answer_fd, "w") as out:
        json.dump(answer, out)


if __name__ == "__main__":
    main()
