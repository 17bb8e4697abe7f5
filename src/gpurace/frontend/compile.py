"""Turn a kernel source file into PTX text with line information.

Which compiler, and why:

* `.ptx` files are read as they are.
* `.cu` files that look device-only go through NVRTC in-process first (the
  `cuda-bindings` package with the `nvidia-cuda-nvrtc` library): it needs no
  host compiler and takes milliseconds, which matters when a test suite
  compiles dozens of kernels. The real file path is the program name, so the
  PTX `.file` directive and every diagnostic name the user's file.
* `.cu` files with host code (`main`, `<<<...>>>` launches, `cuda*` runtime
  calls, host-only headers) need `nvcc -ptx`, which NVRTC cannot replace. A
  quick textual check sends them straight to nvcc; a device-only file that
  NVRTC still rejects (for example because of a header NVRTC does not ship)
  is retried with nvcc. When both fail, the user sees the diagnostics of the
  compiler that fits the file: nvcc's for files with host code, NVRTC's for
  device-only files.
* nvcc is looked up on PATH, then in `$CUDA_HOME/bin` (or `$CUDA_PATH/bin`),
  then in the `nvidia-cuda-nvcc` wheel (`site-packages/nvidia/cu13/bin`). The
  wheel's `nvcc.profile` locates `cicc`, its headers and libraries relative
  to the binary, so it runs as it is, given only a host compiler on PATH.
* Kernels written for GPUVerify include "cuda.h" for its annotation
  intrinsics; gpurace's own cuda.h (`gpuverify.COMPAT_INCLUDE_DIR`) provides
  them. It is on NVRTC's include path always (NVRTC has no cuda.h), and on
  nvcc's only for files in GPUVerify's style, where it also includes the
  toolkit's cuda.h; in those files `#include <cuda.h>` is not taken as a
  sign of host code. It also gives them cooperative groups and cuRAND,
  which GPUVerify's cuda.h declared (`gpuverify.library_macros`).
* NVRTC finds the headers of the NVIDIA wheels (cuRAND's, libcu++ from
  `include/cccl`) through `pypi_include_dirs()`.
* Code that CUDA once accepted and has removed (texture references) fails
  with a message that says so, naming the line (`removed_feature`), not with
  the compiler's puzzled diagnostic.

Both compilers get `-lineinfo` so every PTX instruction carries a `.loc` back
to the source, which is what makes findings point at source lines.

The file is untrusted: NVRTC runs in a forked child and nvcc as a child
process, each within the memory budget and a time limit, and nvcc, which
hands its arguments to a shell, sees only shell-safe paths and no macro
values (`sandbox` says how).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from gpurace.errors import CompileError, UserError
from gpurace.frontend import hip
from gpurace.frontend.gpuverify import COMPAT_INCLUDE_DIR, library_macros, uses_gpuverify
from gpurace.frontend.sandbox import CompilerDir, c_string, call_limited, defines_header, run_limited, shell_safe
from gpurace.limits import Limits, format_size

CUDA12_COMPAT_DIR = Path(__file__).resolve().parent / "include" / "cuda12_compat"
CUDA12_COMPAT_HEADER = "gpurace_cuda12.h"
"""Pre-included wherever nvcc compiles a CUDA source: it gives back the calls and cudaDeviceProp fields CUDA 13
removed that programs written for CUDA 12 use (its comment says what it holds); found by name on the include
path, from `CUDA12_COMPAT_DIR`."""

DEFAULT_ARCH = "compute_75"

_ARCH_RE = re.compile(r"^(?:sm|compute)_(\d+[a-z]?)$")

# Markers of host code that NVRTC cannot compile. A miss is harmless (NVRTC
# fails and nvcc takes over); a false hit only costs nvcc's slower start.
_HOST_CODE_RE = re.compile(
    r"\bmain\s*\("
    r"|<<<"
    r"|\bcuda(?:Malloc|Free|Memcpy|Memset|DeviceSynchronize|DeviceReset|GetLastError|"
    r"StreamCreate|EventCreate|LaunchKernel|SetDevice|HostAlloc|MallocManaged)\w*\s*\("
    r"|#\s*include\s*[<\"](?:cstdio|stdio\.h|iostream|cstdlib|stdlib\.h|vector|string|"
    r"cstring|string\.h|cuda_runtime\.h|cuda_runtime_api\.h|cuda\.h|algorithm|chrono|"
    r"fstream|sstream|memory|random|thread)[>\"]"
)

_CUDA_H_INCLUDE_RE = re.compile(r"#\s*include\s*[<\"]cuda\.h[>\"]")


@dataclass(frozen=True)
class CompileOptions:
    """The options a module was compiled with (`Module.compile_options`), so that more C++ can be compiled against
    the same source in the same way: the type probes of `frontend.type_probe`."""

    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    arch: str = DEFAULT_ARCH
    device_debug: bool = False
    relocatable: bool = False
    hip: bool = False
    nvcc_flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompiledPtx:
    """PTX text, the source it came from, and which compiler produced it.

    `compiler` is "ptx" (the file was PTX already), "nvrtc" or "nvcc";
    `compiler_path` is the nvcc binary used, when it was nvcc; `hip` is true for a HIP source
    (`frontend.hip`).
    """

    text: str
    source_path: str
    compiler: str
    compiler_path: str | None = None
    hip: bool = False


def compile_to_ptx(
    path: str | os.PathLike,
    *,
    include_dirs: Iterable[str | os.PathLike] = (),
    defines: Iterable[str] = (),
    arch: str = DEFAULT_ARCH,
    device_debug: bool = False,
    limits: Limits | None = None,
    appendix: str = "",
    relocatable: bool = False,
    nvcc_flags: Iterable[str] = (),
) -> CompiledPtx:
    """Compile (or read) `path` into PTX with line information.

    `include_dirs` (existing directories) are searched for includes,
    `defines` (`NAME` or `NAME=VALUE`) are macro definitions, `arch` is `compute_XX` or `sm_XX` (both select the
    virtual architecture `compute_XX`, since PTX is what we want).
    `device_debug` compiles without optimisation (`-G`), so that every access
    of the source happens, even a store the optimiser would delete because
    nothing reads it; files written for GPUVerify always are, since
    GPUVerify's verdicts are about the source program.
    The compiler runs within `limits` (memory budget, time), and nothing of
    the file, its name or the options reaches a shell (`sandbox`).
    `appendix` is C++ compiled as if the file ended with it (gpurace's own
    type probes; a `.ptx` file has no C++ to add it to).
    `relocatable` compiles relocatable device code (`-rdc=true`), one file
    of several that `frontend.link` links: its calls of `extern __device__`
    functions stay calls of declared functions, as nvlink would resolve them.
    `nvcc_flags` are options of the program's own build that shape its device
    code (`-std=c++17`, `--expt-relaxed-constexpr`, `--use_fast_math`, checked
    by the caller): a file compiled with them is compiled by nvcc, which takes
    them, so that its PTX is the program's.
    """
    limits = (limits or Limits()).started()
    source = _check_source(Path(path))
    suffix = source.suffix.lower()
    if suffix == ".ptx":
        if appendix:
            raise UserError(f"{source}: a .ptx file has no C++ source to compile more code with")
        return CompiledPtx(read_source(source), str(source), "ptx")
    virtual_arch = normalize_arch(arch)
    includes = [check_include_dir(d) for d in include_dirs]
    macros = [check_define(d) for d in defines]
    original = read_kernel_source(source)
    if suffix in hip.CPP_SUFFIXES and not hip.is_hip_source(source, original):
        raise UserError(
            f"{source}: a {suffix} file is taken for a kernel file only when it is a HIP source (includes <hip/...>); "
            "give a .cu, .hip or .ptx file"
        )
    flags = list(nvcc_flags)
    if hip.is_hip_source(source, original):
        return _compile_hip(
            source, original, appendix, includes, macros, virtual_arch, device_debug, relocatable, flags, limits
        )
    gpuverify = uses_gpuverify(original)
    if gpuverify:
        # GPUVerify's cuda.h declared cooperative groups and cuRAND; gpurace's includes their real headers
        # when the file uses them (each costs seconds of compilation).
        macros += library_macros(original)
    # The appendix names itself in `#line`, so that a diagnostic in it is not taken for one in the file.
    code = original + (f'\n#line 1 "<gpurace type probe>"\n{appendix}' if appendix else "")
    # NVRTC has no cuda.h, so gpurace's compatibility header can always be found there; under nvcc
    # it would shadow the toolkit's cuda.h (which it includes), so only files written for GPUVerify get it.
    nvcc_includes = [*includes, *([str(COMPAT_INCLUDE_DIR)] if gpuverify else []), str(CUDA12_COMPAT_DIR)]
    debug = (["-G"] if device_debug or gpuverify else []) + (["-rdc=true"] if relocatable else [])
    # GPUVerify's own front end includes its cuda.h in every kernel and takes namespace-scope variables
    # as device variables, so kernels of its suites often do neither themselves.
    # (nvcc finds it by name, through the include path, so that its #include_next reaches the toolkit's)
    nvcc_extra = [*debug, "-include", "cuda.h", *flags] if gpuverify else [*debug, *flags]
    nvcc_extra[:0] = ["-include", CUDA12_COMPAT_HEADER]
    if flags or has_host_code(original, gpuverify=gpuverify):
        return _compile_with_nvcc(source, code, nvcc_includes, macros, virtual_arch, nvcc_extra, limits, host_code=True)
    nvrtc_extra = [*debug, f"--pre-include={COMPAT_INCLUDE_DIR / 'cuda.h'}", "-default-device"] if gpuverify else debug
    try:
        return call_limited(
            lambda: _compile_with_nvrtc(source, code, [*includes, str(COMPAT_INCLUDE_DIR)], macros, virtual_arch, nvrtc_extra),
            limits,
            f"{source}: NVRTC",
        )
    except CompileError as nvrtc_error:
        if find_nvcc() is None:
            raise
        try:
            return _compile_with_nvcc(source, code, nvcc_includes, macros, virtual_arch, nvcc_extra, limits, host_code=False)
        except CompileError:
            raise nvrtc_error from None


def _compile_hip(
    source: Path, original: str, appendix: str, includes: list[str], macros: list[str], arch: str,
    device_debug: bool, relocatable: bool, flags: list[str], limits: Limits,
) -> CompiledPtx:
    """A HIP source (`frontend.hip`): nvcc on a private `.cu` copy, with HIP's NVIDIA platform macro, HIP's
    headers and gpurace's compatibility header pre-included; `#line` keeps the `.hip` file's name and lines."""
    include_dir = hip.require_hip_include_dir(source)
    code = original + (f'\n#line 1 "<gpurace type probe>"\n{appendix}' if appendix else "")
    extra = (["-G"] if device_debug else []) + (["-rdc=true"] if relocatable else []) + ["-include", hip.COMPAT_HEADER]
    extra += flags
    try:
        compiled = _compile_with_nvcc(
            source, code, [*includes, *hip.compiler_include_dirs(include_dir)], [*hip.PLATFORM_MACROS, *macros], arch,
            extra, limits, host_code=True, private_copy=True,
        )
    except CompileError as e:
        raise CompileError(hip.without_header_noise(str(e))) from None
    return CompiledPtx(compiled.text, compiled.source_path, compiled.compiler, compiled.compiler_path, hip=True)


def normalize_arch(arch: str) -> str:
    """`sm_80` or `compute_80` -> `compute_80`; anything else is a UserError."""
    m = _ARCH_RE.match(arch.strip())
    if not m:
        raise UserError(f"--arch {arch!r}: expected a GPU architecture such as compute_75 or sm_80")
    return f"compute_{m.group(1)}"


def has_host_code(code: str, *, gpuverify: bool = False) -> bool:
    """True when the source visibly contains host code that only nvcc can compile.

    In a file written for GPUVerify (`gpuverify`), `#include "cuda.h"` means
    gpurace's compatibility header, not the driver API.
    """
    code = _strip_comments(code)
    if gpuverify:
        code = _CUDA_H_INCLUDE_RE.sub(" ", code)
    return _HOST_CODE_RE.search(code) is not None


def nvcc_candidates() -> Iterator[Path]:
    """Where nvcc may be, in the order we try: PATH, $CUDA_HOME, $CUDA_PATH, the PyPI wheel."""
    on_path = shutil.which("nvcc")
    if on_path:
        yield Path(on_path)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            yield Path(root) / "bin" / "nvcc"
    for root in pypi_cuda_roots():
        yield root / "bin" / "nvcc"


def find_nvcc() -> Path | None:
    """The first executable nvcc among `nvcc_candidates()`, or None."""
    for candidate in nvcc_candidates():
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def pypi_cuda_roots() -> list[Path]:
    """The `nvidia/cu13` folders installed by the NVIDIA CUDA wheels (bin, include, lib, nvvm)."""
    try:
        import nvidia  # namespace package shared by the nvidia-* wheels
    except ImportError:
        return []
    return [Path(p) / "cu13" for p in nvidia.__path__ if (Path(p) / "cu13").is_dir()]


def pypi_include_dirs() -> list[Path]:
    """The header folders of the NVIDIA CUDA wheels: each root's `include`, and its `include/cccl` (CCCL's
    libcu++, Thrust and CUB, which nvidia-cuda-cccl installs there) when present."""
    dirs = [root / "include" for root in pypi_cuda_roots()]
    return dirs + [d / "cccl" for d in dirs if (d / "cccl").is_dir()]


# --------------------------------------------------------------------------
# NVRTC
# --------------------------------------------------------------------------


def _compile_with_nvrtc(
    source: Path, code: str, includes: list[str], macros: list[str], arch: str, extra: list[str]
) -> CompiledPtx:
    from cuda.bindings import nvrtc

    options = ["-lineinfo", f"--gpu-architecture={arch}", f"-I{source.parent}", *extra]
    options += [f"-I{d}" for d in includes]
    # NVRTC's own builtin headers do not include cuda_fp16.h & co.; the wheels' include dir has them, and
    # curand_kernel.h (nvidia-curand) needs libcu++ (<cuda/std/...>, in nvidia-cuda-cccl's include/cccl).
    options += [f"-I{d}" for d in pypi_include_dirs()]
    options += [f"-D{m}" for m in macros]
    encoded = [o.encode() for o in options]

    err, prog = nvrtc.nvrtcCreateProgram(code.encode(), str(source).encode(), 0, [], [])
    _check_nvrtc(err, "nvrtcCreateProgram", source)
    try:
        (result,) = nvrtc.nvrtcCompileProgram(prog, len(encoded), encoded)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = _nvrtc_log(nvrtc, prog)
            raise CompileError(removed_feature(log) or f"{source}: NVRTC could not compile it:\n{log}".rstrip())
        err, size = nvrtc.nvrtcGetPTXSize(prog)
        _check_nvrtc(err, "nvrtcGetPTXSize", source)
        buf = bytearray(size)
        (err,) = nvrtc.nvrtcGetPTX(prog, buf)
        _check_nvrtc(err, "nvrtcGetPTX", source)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return CompiledPtx(bytes(buf).rstrip(b"\0").decode(), str(source), "nvrtc")


def _nvrtc_log(nvrtc, prog) -> str:
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS or size <= 1:
        return ""
    buf = bytearray(size)
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return bytes(buf).rstrip(b"\0").decode(errors="replace").strip()


def _check_nvrtc(err, what: str, source: Path) -> None:
    from cuda.bindings import nvrtc

    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CompileError(f"{source}: NVRTC failed in {what}: {err.name}")


# --------------------------------------------------------------------------
# nvcc
# --------------------------------------------------------------------------


def _compile_with_nvcc(
    source: Path, code: str, includes: list[str], macros: list[str], arch: str, extra: list[str], limits: Limits, *,
    host_code: bool, private_copy: bool = False,
) -> CompiledPtx:
    """nvcc -ptx on `source`, whose text is `code`, with nothing on its command line that a shell could
    reinterpret (see `sandbox`). When `code` is not the file's own text (an appendix), the file's name is not
    shell-safe, or `private_copy` asks for it (a name nvcc does not take for CUDA, such as `.hip`), a private
    copy named `kernel.cu` is compiled."""
    from gpurace.frontend.curand_headers import curand_include  # it builds on this module's wheel roots

    nvcc = find_nvcc()
    if nvcc is None:
        why = "it has host code, which " if host_code else ""
        raise CompileError(
            f"{source}: {why}needs nvcc, and none was found on PATH, in $CUDA_HOME/bin "
            "or in the nvidia-cuda-nvcc package"
        )
    with CompilerDir() as tmp:
        include_paths = [tmp.reach(d) for d in includes]
        curand = curand_include(tmp, nvcc)  # after the user's: a toolkit without cuRAND gets the wheel's headers
        if curand is not None:
            include_paths.append(curand)
        if shell_safe(source) and not private_copy and code == read_source(source):
            input_path = str(source)
        else:
            # A private copy under a safe name; its includes are still found beside the original, and
            # `#line` keeps the original name in the line information.
            include_paths.insert(0, tmp.reach(source.parent))
            input_path = tmp.write("src/kernel.cu", f"#line 1 {c_string(str(source))}\n" + code)
        out = tmp.write("kernel.ptx", "")
        cmd = [str(nvcc), "-ptx", "-lineinfo", f"-arch={arch}"]
        if macros:
            cmd += ["-include", tmp.write("defines.h", defines_header(macros))]
        cmd += [*extra, *(f"-I{d}" for d in include_paths), input_path, "-o", out]
        proc = run_limited(cmd, limits, f"{source}: nvcc")
        text = tmp.restore_paths(Path(out).read_text(encoding="utf-8", errors="replace"))
        if proc.returncode != 0 or not text:
            log = (proc.stderr + proc.stdout).strip()
            if proc.returncode < 0 or "std::bad_alloc" in log or "out of memory" in log.lower():
                log += f"\n(the compiler's memory budget is {format_size(limits.max_memory)}, --max-memory)"
            raise CompileError(removed_feature(log) or f"{source}: nvcc could not compile it:\n{log}".rstrip())
    return CompiledPtx(text, str(source), "nvcc", str(nvcc))


# --------------------------------------------------------------------------
# Diagnostics of CUDA that is no longer valid
# --------------------------------------------------------------------------

# What NVRTC and nvcc say about CUDA that older toolkits accepted, and what the user should be told instead.
DEVICE_SYNCHRONIZE_REMOVED = (
    "cudaDeviceSynchronize in device code was removed in CUDA 12 (CUDA Dynamic Parallelism 2): a parent grid cannot "
    "wait for its children; launch the work that needs their results into cudaStreamTailLaunch instead"
)
"""Why a kernel's `cudaDeviceSynchronize()` is refused (by nvcc, or in PTX built for the old CDP1)."""

_REMOVED_FEATURES = (
    (
        re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): error: texture is not a template$", re.M),
        "texture references (`texture<...>`) were removed in CUDA 12: use texture objects (cudaTextureObject_t)",
    ),
    (
        re.compile(r'^(?P<file>.+?)\((?P<line>\d+)\): error: calling a __host__ function\("cudaDeviceSynchronize"\) from a '
                   r"__global__ function", re.M),  # fmt: skip
        DEVICE_SYNCHRONIZE_REMOVED,
    ),
    (
        re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): error: kernel launch from __device__ or __global__ functions "
                   r"requires separate compilation mode", re.M),  # fmt: skip
        "a kernel launch in device code (CUDA Dynamic Parallelism) needs the whole program: run it with `gpurace exec "
        "--nvcc-flag=-rdc=true --nvcc-flag=-lcudadevrt PROGRAM.cu`, which runs the child grids after their parent",
    ),
)


def removed_feature(log: str) -> str | None:
    """`FILE:LINE: what` for the first diagnostic in a compiler's `log` that comes from a feature CUDA removed (or
    one only `gpurace exec` runs), or None.

    The compiler's own words ("texture is not a template") do not say that the
    code was valid CUDA once and how to write it now; this does.
    """
    for pattern, message in _REMOVED_FEATURES:
        m = pattern.search(log)
        if m:
            return f"{m.group('file')}:{m.group('line')}: {message}"
    return None


# --------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------

_UNSUPPORTED = {
    ".py": "Numba kernels (.py) are checked with `gpurace check FILE.py --kernel NAME --grid ... --block ... --arg ...` "
    "or gpurace.numba.check; this command takes .cu, .hip and .ptx files",
}


def _check_source(path: Path) -> Path:
    suffix = path.suffix.lower()
    if suffix in _UNSUPPORTED:
        raise UserError(f"{path}: {_UNSUPPORTED[suffix]}")
    if suffix not in (".cu", ".ptx", *hip.HIP_SUFFIXES, *hip.CPP_SUFFIXES):
        raise UserError(f"{path}: unknown file type {suffix or '(no extension)'!r}; expected a .cu, .hip or .ptx file")
    if not path.exists():
        raise UserError(f"{path}: no such file")
    if not path.is_file():
        raise UserError(f"{path}: not a regular file")
    return path.resolve()


def read_kernel_source(path: Path) -> str:
    """`read_source`, but a HIP source that is not UTF-8 is read as Latin-1 (`hip.read_hip_source`)."""
    try:
        return read_source(path)
    except UserError:
        try:
            text = hip.read_hip_source(path, path.read_bytes())
        except OSError:
            text = None
        if text is None:
            raise
        return text


def read_source(path: Path) -> str:
    """The text of a source file, or a UserError naming it (not UTF-8, unreadable)."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read it: {e.strerror}") from None


_DEFINE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:=[^\x00-\x08\x0a-\x1f\x7f]*)?$")


def check_define(define: str) -> str:
    """`NAME` or `NAME=VALUE`: a C identifier, and a value of one line (a line break would add directives)."""
    if not _DEFINE_RE.match(define):
        raise UserError(
            f"-D {define!r}: expected NAME or NAME=VALUE, with NAME a C identifier and VALUE without control characters"
        )
    return define


def check_include_dir(directory: str | os.PathLike) -> str:
    """An `-I` directory, which must exist (it reaches the compiler only through `sandbox`)."""
    path = Path(directory)
    if not path.is_dir():
        raise UserError(f"-I {str(directory)!r}: no such directory")
    return str(path)


_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def _strip_comments(code: str) -> str:
    return _COMMENT_RE.sub(" ", code)
