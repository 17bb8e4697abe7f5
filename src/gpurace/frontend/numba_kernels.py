"""Numba-CUDA kernels (`@cuda.jit` in a `.py` file): PTX from numba-cuda, and launch arguments in Numba's ABI.

A kernel file is Python, so reading it means running it. gpurace never
imports it: a child process does (`frontend.numba_compile` run as a script,
no shell, within the memory budget and the compile timeout, like nvcc:
`sandbox.run_limited`), compiles the kernel named by `--kernel` with
numba-cuda's `compile_ptx(..., lineinfo=True)` and answers with the PTX and
a description of the kernel's arguments, as JSON. The argument types are the
kernel's explicit signature when it has one, else those of the `--arg`
values (`type_hints`): `f32:1024` is a `float32[::1]`, `f32:64,32` a
`float32[:, ::1]` of 64x32 (`array_shape`), an integer an `int64` and any
other number a `float64`, as Numba types Python's own values. The PTX's
line information names the `.py` file, so findings point at Python lines.

Numba's ABI passes an array as several PTX parameters, in this order (a
NumPy array's `ArrayStruct`): `meminfo` and `parent` (pointers to the
Python objects behind it, never read by device code: 0 here), `nitems`,
`itemsize`, the data pointer, then `shape[0..ndim)` and `strides[0..ndim)`
in bytes; every one is 64 bits. A scalar is one parameter of its own width
(`bool` one byte). `expand_args` turns one value per Python argument into
one per PTX parameter in that layout (the data parameter takes the array
itself, so the simulator places and updates it as any buffer), and
`numba_module` names the parameters after the Python ones (`x`,
`x.shape[0]`), so that reports say `x` rather than `arg4`. The layout is
checked against the PTX's parameter list, so a numba-cuda that changes it
is refused, not misread.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import struct
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from gpurace.detect.rules import CAUSE_TEXT, Cause
from gpurace.errors import CompileError, UserError
from gpurace.frontend import numba_compile
from gpurace.frontend.compile import normalize_arch
from gpurace.frontend.kernels import ParamInfo
from gpurace.frontend.ptx.ir import Module, SourceLoc
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.report.model import Report
from gpurace.sim.args import AUTO, CPP_DTYPES, SPEC_DTYPES, Resolver
from gpurace.sim.arg_values import Buffer

INSTALL_HINT = "install gpurace[numba] (pip install 'gpurace[numba]')"

ARRAY_FIELDS = ("meminfo", "parent", "nitems", "itemsize")
"""The PTX parameters of an array before its data pointer (then shape, then strides, one per dimension)."""

# C++ spellings of element types, for the parameter descriptions `sim.args.Resolver` reads specs against.
_CPP_NAMES = {np.dtype(dt): name for name, dt in reversed(CPP_DTYPES.items())}


@dataclass(frozen=True)
class NumbaParam:
    """One Python argument of a Numba kernel: an array (element type, dimensions) or a scalar (its type)."""

    name: str
    kind: str  # "array" or "scalar"
    dtype: np.dtype
    ndim: int = 0

    def ptx_names(self) -> list[str]:
        """Names of the PTX parameters this argument becomes (see the module docstring)."""
        if self.kind == "scalar":
            return [self.name]
        dims = range(self.ndim)
        return [
            *(f"{self.name}.{f}" for f in ARRAY_FIELDS), self.name,
            *(f"{self.name}.shape[{k}]" for k in dims), *(f"{self.name}.strides[{k}]" for k in dims),
        ]  # fmt: skip

    def ptx_sizes(self) -> list[int]:
        return [self.dtype.itemsize] if self.kind == "scalar" else [8] * (5 + 2 * self.ndim)


@dataclass(frozen=True)
class NumbaKernel:
    """What compiling a Numba kernel gave: its PTX, its Python name and arguments."""

    ptx: str
    name: str
    params: tuple[NumbaParam, ...]


def is_numba_file(path) -> bool:
    return Path(path).suffix.lower() == ".py"


def require_numba() -> None:
    """A UserError unless numba-cuda is installed (looked up without importing it)."""
    if importlib.util.find_spec("numba_cuda") is None or importlib.util.find_spec("numba") is None:
        raise UserError(f"Numba kernels (.py files) need numba-cuda: {INSTALL_HINT}")


def compute_capability(arch: str) -> tuple[int, int]:
    """`compute_75`/`sm_75` -> (7, 5), the form numba-cuda takes."""
    digits = re.sub(r"\D", "", normalize_arch(arch))
    return int(digits[:-1]), int(digits[-1])


def kernel_from_answer(answer: dict) -> NumbaKernel:
    """A NumbaKernel from `numba_compile.compile_kernel`'s answer."""
    params = tuple(NumbaParam(p["name"], p["kind"], np.dtype(p["dtype"]), p.get("ndim", 0)) for p in answer["params"])
    return NumbaKernel(answer["ptx"], answer["name"], params)


# --------------------------------------------------------------------------
# `gpurace check FILE.py`: the child process
# --------------------------------------------------------------------------


def type_hints(specs: list[str]) -> list[dict]:
    """What each `--arg` says of its argument's Numba type, for a kernel without explicit signature: buffers
    (`TYPE:COUNT[:INIT]`, `buf:...` of no type) and numbers (ints are int64, others float64)."""
    hints = []
    for i, spec in enumerate(specs):
        head, _, rest = spec.partition(":")
        if spec.strip() in (AUTO, "null") or head in ("bytes", "struct"):
            raise UserError(
                f"--arg {i + 1} ({spec[:40]!r}): Numba kernels take buffers (TYPE:COUNT[:INIT]) and numbers; "
                f"{head or spec} is not supported for them yet"
            )
        if rest:
            dtype = SPEC_DTYPES.get(head)
            if dtype is None and head != "buf":
                kinds = ", ".join(SPEC_DTYPES)
                raise UserError(f"--arg {i + 1} ({spec[:40]!r}): unknown buffer kind {head!r} (use buf or one of {kinds})")
            ndim = len(array_shape(spec, f"--arg {i + 1}") or (0,))
            name = None if dtype is None else np.dtype(dtype).name
            hints.append({"kind": "array", "dtype": name, "ndim": ndim, "spec": spec[:40]})
            continue
        try:
            int(spec, 0)
            hints.append({"kind": "scalar", "dtype": "int64"})
        except ValueError:
            hints.append({"kind": "scalar", "dtype": "float64"})
    return hints


def array_shape(spec: str, label: str) -> tuple[int, ...] | None:
    """The shape of a buffer spec whose COUNT gives dimensions, `f32:64,32:rand` -> (64, 32) (like `--grid X,Y`);
    None for a plain COUNT, which `sim.args` reads."""
    count = spec.split(":")[1] if spec.count(":") else ""
    if "," not in count:
        return None
    try:
        shape = tuple(int(d) for d in count.split(","))
    except ValueError:
        shape = ()
    if not shape or min(shape) < 0:
        raise UserError(f"{label} ({spec[:40]!r}): the dimensions of a buffer are non-negative integers, e.g. f32:64,32")
    return shape


def compile_file(path: str, kernel: str | None, specs: list[str], *, arch: str, limits: Limits) -> NumbaKernel:
    """Compile kernel `kernel` (None: the file's only one) of the Numba file `path` in a child process (module
    docstring); its errors are UserErrors, its crash or overrun a CompileError."""
    from gpurace.frontend.sandbox import run_limited

    require_numba()
    source = Path(path)
    if not source.is_file():
        raise UserError(f"{path}: no such file" if not source.exists() else f"{path}: not a regular file")
    request = {"path": str(source.resolve()), "kernel": kernel, "args": type_hints(specs), "cc": compute_capability(arch)}
    proc = run_limited([sys.executable, numba_compile.__file__, json.dumps(request)], limits, f"{path}: numba-cuda")
    try:
        answer = json.loads(proc.stdout)
        if "error" in answer:
            raise UserError(str(answer["error"]))
        return kernel_from_answer(answer["ok"])
    except (ValueError, KeyError, TypeError, AttributeError):  # no answer (the child died), or not one of ours
        log = proc.stderr.strip()[-4000:] or f"(no answer; the compiling process ended with status {proc.returncode})"
        raise CompileError(f"{path}: numba-cuda could not compile it:\n{log}") from None


def resolve_specs(compiled: NumbaKernel, specs: list[str], rng: np.random.Generator, limits: Limits, nthreads: int) -> list:
    """The `--arg` specs as values of the kernel's arguments: NumPy arrays for arrays (of the argument's element
    type), packed bytes for scalars; made, checked and named by `sim.args.Resolver`."""
    if len(specs) != len(compiled.params):
        names = ", ".join(p.name for p in compiled.params) or "none"
        raise UserError(f"kernel {compiled.name} takes {len(compiled.params)} argument(s) ({names}), {len(specs)} given")
    resolver = Resolver(rng, limits, nthreads)
    values = []
    for i, (p, spec) in enumerate(zip(compiled.params, specs)):
        shape = array_shape(spec, f"--arg {i + 1}")
        if p.kind == "array" and len(shape or (0,)) != p.ndim:
            raise UserError(
                f"--arg {spec[:40]!r} for {p.name}: the kernel takes a {p.ndim}-dimensional array; give its "
                f"dimensions as COUNT, e.g. f32:{','.join(['16'] * p.ndim)}"
            )
        if shape is not None:  # the buffer of that many elements, shaped after it is made
            head, _, rest = spec.partition(":")
            spec = ":".join([head, str(math.prod(shape)), *rest.split(":")[1:]])
        cpp = _CPP_NAMES.get(p.dtype)
        if cpp is None:
            raise UserError(f"--arg {i + 1} for {p.name}: arguments of type {p.dtype} are not supported yet")
        if p.kind == "array":
            info = ParamInfo(p.name, f"{cpp}*", "u64", 8, p.name)
        else:
            info = ParamInfo(p.name, cpp, "", p.dtype.itemsize, p.name)
        value = resolver.value(spec, info, f"--arg {spec[:40]!r} for {p.name} ({p.dtype}{'[:]' if p.kind == 'array' else ''})")
        if isinstance(value, Buffer):
            if value.array.dtype != p.dtype:
                raise UserError(
                    f"--arg {spec[:40]!r} for {p.name}: a buffer of {value.array.dtype} was given, the kernel's "
                    f"signature takes {p.dtype}"
                )
            value = value.array if shape is None else value.array.reshape(shape)
        values.append(value)
    return values


def load_numba_launch(
    path: str, kernel: str | None, specs: list[str], *, arch: str, limits: Limits, seed: int, nthreads: int
) -> tuple[Module, list]:
    """The module of `gpurace check FILE.py` and its launch arguments, one per PTX parameter."""
    compiled = compile_file(path, kernel, specs, arch=arch, limits=limits)
    values = resolve_specs(compiled, specs, np.random.default_rng(seed), limits, nthreads)
    return numba_module(compiled, path), expand_args(compiled, values)


# --------------------------------------------------------------------------
# Module and arguments
# --------------------------------------------------------------------------


def numba_module(compiled: NumbaKernel, path: str | None) -> Module:
    """The parsed PTX of a Numba kernel, its entry named as in Python and its parameters after the Python ones.

    Numba mangles the module, name, ABI tags and argument types into the
    entry's name (`_ZN2k110reduce_sumB2v1B106cw51c...E5ArrayIfLi1E1C...`); reports and `--kernel` use the
    Python name, unless a device function or variable of the module has it already. The PTX's parameter list
    must have the layout `NumbaParam.ptx_sizes` expects.
    """
    ptx = compiled.ptx
    if "cudaCGGetIntrinsicHandle" in ptx:  # numba-cuda links the device runtime's implementation at load time
        raise UserError(
            f"{path or compiled.name}: kernel {compiled.name}: grid synchronisation (cuda.cg.this_grid().sync()) "
            "in Numba kernels is not supported yet"
        )
    where = f"{path or compiled.name} (PTX from numba-cuda)"
    module = parse_ptx(ptx, where)
    # A kernel typed into an interpreter has a file name (`<stdin>`) but no file.
    module.source_path = str(Path(path).resolve()) if path and Path(path).is_file() else None
    if len(module.kernels) != 1:
        raise UserError(f"{where}: expected one kernel, found {len(module.kernels)}")
    fn = module.kernels[0]
    taken = {*module.functions, *(v.name for v in module.variables)}
    if compiled.name not in taken:  # its parameters keep their names: only the entry's own name is the kernel's
        del module.functions[fn.name]
        fn.name = compiled.name
        module.functions[fn.name] = fn
    name = fn.name
    expected = [s for p in compiled.params for s in p.ptx_sizes()]
    if [p.size for p in fn.params] != expected:
        raise UserError(
            f"{where}: kernel {compiled.name} has PTX parameters of {[p.size for p in fn.params]} bytes, gpurace "
            f"expects {expected} from its arguments: this numba-cuda's argument layout is not supported"
        )
    module.param_names[name] = tuple(n for p in compiled.params for n in p.ptx_names())
    _name_inlined_functions(module)
    return module


_ABI_TAG = re.compile(r"\[abi:[^\]]*\]")
"""An ABI tag as the demangler writes it: Numba tags every function with its ABI version and a hash of its options."""


def _name_inlined_functions(module: Module) -> None:
    """The line information's names of inlined device functions (demangled) without Numba's ABI tags, which
    would make `store` read `kernels::store[abi:v2][abi:cw51cXTLSUwv1sDUaKthrqNgqq...]` in every report."""
    cleaned: dict[SourceLoc, SourceLoc] = {}

    def clean(loc: SourceLoc | None) -> SourceLoc | None:
        if loc is None:
            return None
        if loc not in cleaned:
            function = loc.function and _ABI_TAG.sub("", loc.function)
            cleaned[loc] = replace(loc, inlined_at=clean(loc.inlined_at), function=function)
        return cleaned[loc]

    for fn in module.functions.values():
        fn.body = [ins if ins.loc is None else replace(ins, loc=clean(ins.loc)) for ins in fn.body]


def expand_args(compiled: NumbaKernel, values: list) -> list:
    """One value per PTX parameter from one per Python argument (module docstring): an array becomes its
    ABI fields around the array itself; scalars stay as they are (their packed bytes)."""
    out = []
    for p, value in zip(compiled.params, values):
        if p.kind == "scalar":
            out.append(value)
            continue
        words = [0, 0, value.size, value.itemsize]
        out += [struct.pack("<q", w) for w in words]
        out.append(value)
        out += [struct.pack("<q", w) for w in (*value.shape, *value.strides)]
    return out


VOLATILE_NOT_ATOMIC = CAUSE_TEXT[Cause.VOLATILE_NOT_ATOMIC]

VOLATILE_DROPPED = "numba_volatile_dropped"
"""`Report.stats` key: how many "volatile is not atomic" warnings `drop_generated_volatile` left out."""


def drop_generated_volatile(report: Report) -> Report:
    """`report` without its "volatile is not atomic" warnings (in place), counted in `stats[VOLATILE_DROPPED]`.

    Numba's language has no volatile: its only volatile accesses are its own lowering's, the `ld.volatile` that
    starts the compare-and-swap loop of `cuda.atomic.max`/`min`/`nanmax`/`nanmin` on floats and of `add`/`sub`
    on float64 before sm_60. Against the loop's `atom.cas`, or another thread's loop, that load is morally strong
    under the PTX memory model Numba's PTX obeys (`.relaxed.sys` against an atomic of covering scope), so it does
    not race; the warning is the `cuda` model's, which holds C++'s volatile to its word. A kernel checked with an
    explicit `model` keeps them.
    """
    kept = [f for f in report.findings if f.cause != VOLATILE_NOT_ATOMIC]
    report.stats[VOLATILE_DROPPED] = len(report.findings) - len(kept)
    report.findings = kept
    return report
