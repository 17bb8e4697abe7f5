"""Triton kernels (`@triton.jit` in a `.py` file) for `gpurace check FILE.py --kernel NAME`.

A kernel file is Python, so reading it means running it: gpurace never
imports it in its own process. A forked child (`sandbox.call_limited`,
within the memory budget and the compile timeout, like nvcc) imports the
file, finds the kernel and compiles it with Triton as `gpurace.triton.check`
does (`frontend.triton_kernels`), then hands back the parsed PTX; only that
comes back. The file's text alone says which front end reads it: a file
that imports `triton` is a Triton file (`is_triton_file`), any other `.py`
file a Numba one.

The arguments come from `--arg` before the child starts: buffers
(`TYPE:COUNT[:INIT]`, of a named element type, since Triton types a pointer
by its tensor's) become NumPy arrays, integers Python ints and other
numbers floats, which Triton types as it would types them from Python.
Constexpr meta-parameters come from `--meta NAME=VALUE` (an int, a float,
`true`/`false`, else the text as a string) and the warps per program from
`--num-warps`; a launch has `--grid` programs of `num_warps * 32` threads.
An autotuned kernel (`@triton.autotune`) runs with the configuration that
`--config N` numbers in its configs list (0 when not given), where a GPU
would benchmark them all and keep the fastest; heuristics
(`@triton.heuristics`) compute their meta-parameters from the arguments.

Whatever the file's code does while it is imported is reported as what it
did: an exception by its type and message, `sys.exit` by its status, a
child that dies (`os._exit`, a signal) by its exit status or signal
(`sandbox.call_limited`); only a MemoryError or the timeout reads as an
overrun of the budget.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.kernels import ParamInfo
from gpurace.frontend.numba_kernels import _CPP_NAMES, array_shape
from gpurace.frontend.triton_kernels import TritonKernel
from gpurace.limits import Limits
from gpurace.sim.args import SPEC_DTYPES, Resolver
from gpurace.sim.arg_values import Buffer

_IMPORTS_TRITON = re.compile(r"^\s*(import\s[^\n#]*\btriton\b|from\s+triton\b)", re.M)


def is_triton_file(path) -> bool:
    """Whether the `.py` file `path` imports Triton (read as text, never run)."""
    try:
        return Path(path).suffix.lower() == ".py" and bool(_IMPORTS_TRITON.search(Path(path).read_text(errors="replace")))
    except OSError:
        return False


def parse_meta(items: tuple[str, ...]) -> dict:
    """`--meta NAME=VALUE` options as {NAME: value}: ints, floats, true/false, else the text."""
    meta: dict = {}
    for item in items:
        name, eq, text = (s.strip() for s in item.partition("="))
        if not eq or not name or not text:
            raise UserError(f"--meta {item!r}: expected NAME=VALUE, e.g. --meta BLOCK=256")
        if name in meta:
            raise UserError(f"--meta {item!r}: {name} is given twice")
        meta[name] = _meta_value(text)
    return meta


def _meta_value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (lambda t: int(t, 0), float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def resolve_args(specs: list[str], rng: np.random.Generator, limits: Limits, nthreads: int) -> list:
    """The `--arg` specs as Python values for a Triton kernel: NumPy arrays for buffers, ints and floats."""
    resolver = Resolver(rng, limits, nthreads)
    values = []
    for i, spec in enumerate(specs):
        label = f"--arg {i + 1} ({spec[:40]!r})"
        head, _, rest = spec.partition(":")
        if not rest:
            try:
                values.append(int(spec, 0))
            except ValueError:
                try:
                    values.append(float(spec))
                except ValueError:
                    raise UserError(f"{label}: Triton kernels take buffers (TYPE:COUNT[:INIT]) and numbers") from None
            continue
        dtype = SPEC_DTYPES.get(head)
        if dtype is None:
            kinds = ", ".join(SPEC_DTYPES)
            raise UserError(f"{label}: a Triton kernel's buffer needs its element type, one of {kinds} (e.g. f32:1024)")
        shape = array_shape(spec, label)
        if shape is not None:
            spec = ":".join([head, str(int(np.prod(shape))), *rest.split(":")[1:]])
        cpp = _CPP_NAMES[np.dtype(dtype)]
        value = resolver.value(spec, ParamInfo(f"arg{i}", f"{cpp}*", "u64", 8, f"arg{i}"), label)
        if not isinstance(value, Buffer):
            raise UserError(f"{label}: Triton kernels take buffers (TYPE:COUNT[:INIT]) and numbers")
        values.append(value.array if shape is None else value.array.reshape(shape))
    return values


def compile_file(
    path: str, kernel: str | None, args: list, meta: dict, *, num_warps: int | None, config: int | None, cc: int,
    limits: Limits,
) -> tuple[TritonKernel, int, int | None]:
    """Kernel `kernel` of the Triton file `path` compiled for `args` and `meta` in a forked child (module
    docstring); its warps per program (`num_warps`, else the autotuning configuration's, else 4); and the
    autotuning configuration checked (`config`, 0 when not given; None when the kernel is not autotuned,
    where a `config` given is a UserError)."""
    from gpurace.frontend.sandbox import call_limited
    from gpurace.frontend.triton_kernels import require_triton

    require_triton()
    source = Path(path)
    if not source.is_file():
        raise UserError(f"{path}: no such file" if not source.exists() else f"{path}: not a regular file")
    return call_limited(
        lambda: _compile_in_child(source.resolve(), kernel, args, meta, num_warps, config, cc),
        limits,
        f"{path}: importing the file and compiling its Triton kernel",
    )


def _compile_in_child(path: Path, kernel: str | None, args: list, meta: dict, num_warps: int | None, config: int | None, cc: int):
    """Runs in the child: import the file, find the kernel, compile it (its errors are UserErrors)."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    from gpurace.frontend.triton_kernels import apply_heuristics, bind, compile_kernel, unwrap
    from gpurace.triton import DEFAULT_STAGES, DEFAULT_WARPS

    module = _import_file(path)
    kernels = {n: v for n, v in vars(module).items() if isinstance(v, (JITFunction, Autotuner, Heuristics))}
    if kernel is None:
        if len(kernels) != 1:
            names = ", ".join(sorted(kernels)) or "none"
            raise UserError(f"{path}: pass --kernel: the file's Triton kernels are {names}")
        kernel = next(iter(kernels))
    if kernel not in kernels:
        names = ", ".join(sorted(kernels)) or "none"
        raise UserError(f"{path}: no Triton kernel {kernel!r} (the file's Triton kernels: {names})")
    kernel_fn = unwrap(kernels[kernel], config or 0, "--config")
    if config is not None and not kernel_fn.configs:
        raise UserError(f"--config {config}: kernel {kernel} is not autotuned (@triton.autotune), so it has no configurations to choose from")
    if kernel_fn.pre_hook is not None:
        raise UserError(f"--config {config or 0}: the autotuning configuration has a pre_hook, which runs on the launch's "
                        "tensors: the command line does not run it (gpurace.triton.check does)")  # fmt: skip
    meta = apply_heuristics(kernel_fn, tuple(args), {**kernel_fn.config_kwargs, **meta})
    missing = [p.name for p in kernel_fn.jit.params[len(args):] if p.is_constexpr and not p.has_default and p.name not in meta]
    if missing:
        raise UserError(f"kernel {kernel}: no value for meta-parameter {missing[0]!r}: pass --meta {missing[0]}=VALUE")
    bound = bind(kernel_fn.jit, tuple(args), meta)
    num_warps = num_warps or kernel_fn.num_warps or DEFAULT_WARPS
    compiled = compile_kernel(kernel_fn.jit, bound, num_warps=num_warps, num_stages=kernel_fn.num_stages or DEFAULT_STAGES, cc=cc)
    return compiled, num_warps, (config or 0) if kernel_fn.configs else None


def _import_file(path: Path):
    """The user's file imported as a module. Whatever its code does to stop the import is a UserError
    saying what: an exception (its type and message) or `sys.exit` (its status). Only a MemoryError
    passes, for the child's caller to report as the memory budget's overrun. What the code prints goes
    to stderr: stdout is the report's (`--format json` would not parse with the file's output in it)."""
    sys.stdout.flush()
    os.dup2(2, 1)
    spec = importlib.util.spec_from_file_location(f"gpurace_triton_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except MemoryError:
        raise
    except SystemExit as e:
        raise UserError(f"{path}: importing the file failed: its code called sys.exit({e.code!r})") from None
    except BaseException as e:  # the user's code: whatever it raised, named
        raise UserError(f"{path}: importing the file failed: {type(e).__name__}: {e}") from None
    return module
