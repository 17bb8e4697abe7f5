"""Building a whole CUDA program (host and device code) for `gpurace exec`.

The program is linked against the *shared* CUDA runtime (`-cudart shared`),
so that at run time it loads gpurace's `libcudart.so.13` instead of
NVIDIA's; it carries PTX for the chosen virtual architecture (`-arch
compute_XX`, no machine code, which nothing here would run), device line
information (`-lineinfo`) and host debug information (`-g`), from which
`sites.py` turns call sites into source lines. A program that links the
driver (`--nvcc-flag=-lcuda`) finds gpurace's `libcuda.so` (`library_dirs`).

nvcc hands its arguments to a shell, so what reaches its command line is
shell-safe (`frontend.sandbox`): paths through `CompilerDir.reach` or a
private copy under a safe name, macros only as `#define` lines of a
pre-included header. Extra `--nvcc-flag` options are the user's own choice
on the command line, not input from files; they are passed as they are when
made only of characters no shell interprets, and refused otherwise, as are
options that would change what gets built (`-o`, `-c`, `-cudart`, ...) and
`-D` (gpurace's own `-D` reaches the host code too).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from gpurace.errors import CompileError, UserError
from gpurace.frontend import hip
from gpurace.frontend.compile import CUDA12_COMPAT_DIR, CUDA12_COMPAT_HEADER, DEFAULT_ARCH, check_define, check_include_dir, find_nvcc, normalize_arch, read_kernel_source, removed_feature
from gpurace.frontend.curand_headers import curand_include
from gpurace.frontend.sandbox import CompilerDir, c_string, defines_header, run_limited, shell_safe
from gpurace.limits import Limits, format_size

SOURCE_SUFFIXES = frozenset({".cu", ".hip", ".cpp", ".cc", ".cxx", ".c"})
"""What nvcc compiles: CUDA and HIP sources, and host-only C/C++ sources of the same program."""

_FLAG_RE = re.compile(r"^-[A-Za-z0-9_./+=,:-]*$")
_BUILD_SHAPING_FLAGS = re.compile(
    r"^--?(?:o|output-file|c|compile|dc|device-c|dw|device-w|ptx|cubin|fatbin|E|preprocess|M.*|run|lib|shared|dlink|"
    r"device-link|cudart|keep|keep-dir|save-temps|dryrun)(?:=.*)?$"
)
_RELOCATABLE_FLAG = re.compile(r"^--?(?:rdc|relocatable-device-code)=(?:true|1)$")


def relocatable(flags: Iterable[str]) -> bool:
    """Whether nvcc `flags` build relocatable device code (`-rdc=true`): device code then links across files, so
    a kernel may call a `__device__` function, or use a `__device__` variable, that another file defines."""
    return any(_RELOCATABLE_FLAG.match(f) for f in flags)


def check_nvcc_flag(flag: str) -> str:
    """`flag` when it may be passed to nvcc; a UserError saying why not otherwise."""
    if not _FLAG_RE.match(flag):
        raise UserError(
            f"--nvcc-flag {flag!r}: only options made of letters, digits and _ . / + = , : - are passed to nvcc "
            "(nvcc gives its options to a shell)"
        )
    if flag.startswith("-D"):
        raise UserError(f"--nvcc-flag {flag!r}: give macros with gpurace's own -D, which defines them safely")
    if _BUILD_SHAPING_FLAGS.match(flag):
        raise UserError(f"--nvcc-flag {flag!r}: gpurace exec chooses this itself, to build a program it can run")
    return flag


_BUILD_ONLY_FLAG = re.compile(
    r"^(?:-l(?!ineinfo)|-L|--library(?:-path)?=|--?(?:Xlinker|linker-options)(?:=|$)"
    r"|--?(?:gencode|generate-code|arch|gpu-architecture|code|gpu-code)(?:=|$))"
)
_LINKER_PASS_THROUGH = frozenset({"Xlinker", "linker-options"})
"""Linker options whose value may be the next flag (`-Xlinker -Bsymbolic`) rather than after `=`."""
_RELOCATABLE_ANY = re.compile(r"^--?(?:rdc|relocatable-device-code)(?:=|$)")


def device_flags(nvcc_flags: Iterable[str]) -> tuple[str, ...]:
    """The `nvcc_flags` of a program's build that also shape the device code gpurace simulates: all but the
    linker's (`-l`, `-L`, `-Xlinker`), those choosing the GPU targets of the build (`-gencode`, `-arch`: `--arch`
    chooses the PTX the simulator runs) and `-rdc` (which `relocatable` turns into a linked compile of its own).
    Each is checked as `check_nvcc_flag` checks it, since these reach nvcc's command line too."""
    out, skip_next = [], False
    for flag in map(check_nvcc_flag, nvcc_flags):
        if skip_next:
            skip_next = False
        elif _BUILD_ONLY_FLAG.match(flag):
            skip_next = flag.lstrip("-") in _LINKER_PASS_THROUGH
        elif not _RELOCATABLE_ANY.match(flag):
            out.append(flag)
    return tuple(out)


def build_program(
    sources: Iterable[str | os.PathLike],
    *,
    workdir: CompilerDir,
    include_dirs: Iterable[str | os.PathLike] = (),
    defines: Iterable[str] = (),
    arch: str = DEFAULT_ARCH,
    nvcc_flags: Iterable[str] = (),
    library_dirs: Iterable[str | os.PathLike] = (),
    limits: Limits | None = None,
) -> Path:
    """Compile and link `sources` into an executable in `workdir` (which owns it: it goes when the directory does).

    `library_dirs` are searched for the libraries the program links (`-L`): gpurace's own, for `-lcuda`,
    and NVRTC's.
    `include_dirs` and `defines` (`NAME`, `NAME=VALUE`) apply to host and
    device code alike; `arch` is `compute_XX` or `sm_XX`. nvcc runs within
    `limits` (memory budget, time); its diagnostics are the CompileError's
    message.
    """
    limits = (limits or Limits()).started()
    nvcc = find_nvcc()
    if nvcc is None:
        raise CompileError(
            "gpurace exec builds the program with nvcc, and none was found on PATH, in $CUDA_HOME/bin "
            "or in the nvidia-cuda-nvcc package"
        )
    files = [check_program_source(Path(s)) for s in sources]
    if not files:
        raise UserError("gpurace exec needs at least one source file of the program")
    includes = [workdir.reach(check_include_dir(d)) for d in include_dirs]
    macros = [check_define(d) for d in defines]
    flags = [check_nvcc_flag(f) for f in nvcc_flags]
    # Read to tell HIP sources apart only (a file nvcc compiles as it is need not be UTF-8).
    texts = {path: source_text(path) for path in files}
    hip_sources = [path for path, text in texts.items() if hip.is_hip_source(path, text)]
    pre_includes = []
    if hip_sources:
        # HIP's NVIDIA path (frontend.hip): its platform macro and gpurace's compatibility header for every
        # source of the program, HIP's headers on the include path.
        include_dir = hip.require_hip_include_dir(hip_sources[0])
        macros[:0] = hip.PLATFORM_MACROS
        includes += [workdir.reach(d) for d in hip.compiler_include_dirs(include_dir)]
        pre_includes = ["-include", hip.COMPAT_HEADER]
    else:
        includes.append(workdir.reach(CUDA12_COMPAT_DIR))
        pre_includes = ["-include", CUDA12_COMPAT_HEADER]
    inputs = []
    for i, path in enumerate(files):
        suffix = path.suffix.lower()
        # HIP sources (.hip, and .cpp files that include HIP's headers, which hipcc compiles as HIP) are CUDA to nvcc
        as_cuda = hip.compiled_as_cuda(path, texts[path])
        if shell_safe(path) and not as_cuda:
            inputs.append(str(path))
        else:
            # A private copy under a safe name (a HIP source's named .cu, which nvcc compiles as CUDA), whose `#line`
            # keeps the user's name in the debug information; its includes are still found beside the original.
            includes.append(workdir.reach(path.parent))
            text = f"#line 1 {c_string(str(path))}\n" + read_kernel_source(path)
            inputs.append(workdir.write(f"sources/{i}/program{'.cu' if as_cuda else suffix}", text))
    curand = curand_include(workdir, nvcc)  # after the user's: a toolkit without cuRAND gets the wheel's headers
    if curand is not None:
        includes.append(curand)
    executable = workdir.root / "program"
    cmd = [str(nvcc), "-cudart", "shared", "-g", "-lineinfo", f"-arch={normalize_arch(arch)}"]
    if macros:
        cmd += ["-include", workdir.write("defines.h", defines_header(macros))]
    cmd += pre_includes
    cmd += [*flags, *(f"-I{d}" for d in includes), *(f"-L{workdir.reach(Path(d))}" for d in library_dirs)]
    cmd += [*inputs, "-o", str(executable)]
    proc = run_limited(cmd, limits, "nvcc (building the program)")
    if proc.returncode != 0 or not executable.is_file():
        log = (proc.stderr + proc.stdout).strip()
        if proc.returncode < 0 or "out of memory" in log.lower():
            log += f"\n(the compiler's memory budget is {format_size(limits.max_memory)}, --max-memory)"
        names = ", ".join(str(f) for f in files)
        raise CompileError(removed_feature(log) or f"{names}: nvcc could not build the program:\n{log}".rstrip())
    return executable


def source_text(path: Path) -> str:
    """A program source's text, to tell HIP sources apart (`frontend.hip`); bytes that are not UTF-8 replaced."""
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError as e:
        raise UserError(f"{path}: cannot read it: {e.strerror}") from None


def check_program_source(path: Path) -> Path:
    """The absolute path of an existing source file nvcc compiles (see SOURCE_SUFFIXES); a UserError otherwise."""
    if path.suffix.lower() not in SOURCE_SUFFIXES:
        raise UserError(
            f"{path}: gpurace exec builds programs from .cu and .hip sources (and .cpp/.cc/.cxx/.c host sources); "
            f"not {path.suffix or 'a file without an extension'}"
        )
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    return path.resolve()
