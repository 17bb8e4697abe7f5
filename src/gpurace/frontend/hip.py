"""HIP sources, checked as CUDA through HIP's own NVIDIA path.

HIP's headers compile on NVIDIA's toolchain: with `__HIP_PLATFORM_NVIDIA__`
(and `__HIP_PLATFORM_NVCC__`) defined, `hip/hip_runtime.h` includes `hip/nvidia_detail/*`, which map the
`hip*` runtime calls onto `cuda*` (inline functions), `hipLaunchKernelGGL`
onto `<<<...>>>`, `hipThreadIdx_x` onto `threadIdx.x`, and leave
`__syncthreads`, atomics and `__shfl*` to CUDA's own. So a HIP file is a
CUDA file to gpurace once those headers are found: it is compiled by nvcc
(the headers include `cuda_runtime.h`, which NVRTC cannot), under a private
name ending in `.cu` with a `#line` naming the `.hip` file, so that every
finding names the HIP source's lines.

A file is HIP when its name ends in `.hip`, or when it includes a header of
HIP's (`#include <hip/...>`), as `.cu` and `.cpp` files written against HIP
do (hipcc compiles `.cpp` files as HIP; HIP's own samples are often `.cpp`),
or uses HIP's API while its own header includes HIP's. A HIP source that is
not UTF-8 is read as Latin-1.

Where the headers are (`find_hip_include_dir`): `--hip-path DIR` (which sets
`$HIP_PATH` for the command), else `$HIP_PATH`, else `/opt/rocm`, else
`/usr` (Debian's `libamdhip64-dev` installed), else `~/.cache/gpurace/hip/usr`
(the same package unpacked with `dpkg -x`). DIR may be the root (`DIR/include/hip/
hip_runtime.h`) or the include folder itself (`DIR/hip/hip_runtime.h`).
HIP's headers are not part of gpurace; without them a HIP file is an input
error (exit 2) whose message says how to get them.

HIP's 2022 headers (Debian bookworm's 5.2) call some CUDA runtime functions
by signatures CUDA 13 removed or changed (host API only); gpurace's
pre-included `hip_compat/gpurace_hip_nvidia.h` gives them back, for CUDA 13
and later, without touching the HIP headers, and maps HIP's mask-less warp
votes (`__ballot`, `__any`, `__all`) onto CUDA's `*_sync` forms over
`__activemask()`.

Warp size: the NVIDIA path has 32-lane warps (`warpSize` is 32), while AMD
GPUs of the GCN/CDNA families run wavefronts of 64. Every report on a HIP
kernel says that its warp-level findings assume 32-lane warps
(`WARP_SIZE_NOTE`); gpurace does not simulate 64-lane wavefronts.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpurace.cache import cache_dir
from gpurace.errors import UserError

HIP_SUFFIXES = frozenset({".hip"})

CPP_SUFFIXES = frozenset({".cpp", ".cc", ".cxx"})
"""C++ files that are HIP sources when they include HIP's headers (hipcc compiles them as HIP; HIP's own samples
are often `.cpp` files); other C++ files are host code, not kernel files."""

PLATFORM_MACROS = ("__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__")
"""What selects HIP's NVIDIA path in `hip/hip_runtime.h` (`__HIP_PLATFORM_NVIDIA__` since HIP 4.0,
`__HIP_PLATFORM_NVCC__` before), both defined as hipcc defines them on NVIDIA's platform, so that a file that tests
either before it includes HIP's headers sees the platform it is compiled for."""

COMPAT_DIR = Path(__file__).parent / "include" / "hip_compat"
COMPAT_HEADER = "gpurace_hip_nvidia.h"
"""gpurace's pre-included compatibility header (found by name on the include path, from `COMPAT_DIR`)."""

SEARCHED_ROOTS = ("/opt/rocm", "/usr")
"""Where HIP's headers are looked for when neither --hip-path nor $HIP_PATH names a folder (then `user_root()`)."""

INSTALL_HINT = (
    "install them with `apt-get install --no-install-recommends libamdhip64-dev` (Debian, Ubuntu), "
    "or unpack them without AMD's runtime: `apt-get download libamdhip64-dev && mkdir -p ~/.cache/gpurace/hip && "
    "dpkg -x libamdhip64-dev_*.deb ~/.cache/gpurace/hip` (found there; elsewhere, give --hip-path DIR/usr or set HIP_PATH)"
)


def user_root() -> Path:
    """`$XDG_CACHE_HOME/gpurace/hip/usr` (default `~/.cache/gpurace/hip/usr`): where `dpkg -x PACKAGE
    ~/.cache/gpurace/hip` puts Debian's headers, searched after `SEARCHED_ROOTS`."""
    return cache_dir() / "hip" / "usr"

WARP_SIZE_NOTE = (
    "HIP source compiled for NVIDIA's path: warpSize is 32 and warp-level findings (intra-warp races, "
    "__shfl*, ballots, warp masks) assume 32-lane warps as on NVIDIA GPUs, not AMD's 64-lane wavefronts"
)

_HIP_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]hip/', re.MULTILINE)
# HIP's API, for files that include HIP's headers through a header of their own (`#include "app.hpp"`).
_HIP_API_RE = re.compile(
    r"\bhip(?:LaunchKernelGGL|Malloc\w*|Memcpy\w*|Memset\w*|Free|DeviceSynchronize|GetLastError|Stream\w+|Event\w+)"
    r"\s*\(|\bhip(?:ThreadIdx|BlockIdx|BlockDim|GridDim)_[xyz]\b|\bHIP_DYNAMIC_SHARED\b"
)
_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def is_hip_source(path: str | os.PathLike, text: str | None = None) -> bool:
    """True for a `.hip` file, or a file whose `text` includes one of HIP's headers (`#include <hip/...>`) or
    uses HIP's API (`hipLaunchKernelGGL(`, `hipMalloc(`, `hipThreadIdx_x`, ...: HIP's headers come from a header
    of its own)."""
    if Path(path).suffix.lower() in HIP_SUFFIXES:
        return True
    if text is None:
        return False
    code = _COMMENT_RE.sub(" ", text)
    return _HIP_INCLUDE_RE.search(code) is not None or _HIP_API_RE.search(code) is not None


def compiled_as_cuda(path: str | os.PathLike, text: str) -> bool:
    """Whether nvcc must be given `path` (whose `text` is given) as a `.cu` file: a `.hip` file, or a `.cpp`-family
    file that is a HIP source (hipcc compiles those as HIP, nvcc by their name as host C++)."""
    suffix = Path(path).suffix.lower()
    return suffix in HIP_SUFFIXES or (suffix in CPP_SUFFIXES and is_hip_source(path, text))


def read_hip_source(path: Path, raw: bytes) -> str | None:
    """The text of a file that is not UTF-8, when it is a HIP source (read as Latin-1, as the AMD SDK samples that
    HIP's examples come from are written: a `©` in the licence); None otherwise."""
    text = raw.decode("latin-1")
    return text if is_hip_source(path, text) else None


def _include_dir_of(root: Path) -> Path | None:
    """The folder that holds `hip/hip_runtime.h` for a root given as `DIR` or `DIR/include`, or None."""
    for candidate in (root / "include", root):
        if (candidate / "hip" / "hip_runtime.h").is_file():
            return candidate
    return None


def find_hip_include_dir() -> Path | None:
    """The include folder of HIP's headers (`$HIP_PATH`, then `SEARCHED_ROOTS`), or None when none has them.

    A `$HIP_PATH` that names a folder without them is an error, not a reason to look elsewhere: the user
    asked for that folder.
    """
    given = os.environ.get("HIP_PATH")
    if given:
        found = _include_dir_of(Path(given))
        if found is None:
            raise UserError(
                f"--hip-path / HIP_PATH {given!r}: no hip/hip_runtime.h in it or in its include folder; {INSTALL_HINT}"
            )
        return found
    for root in (*SEARCHED_ROOTS, user_root()):
        found = _include_dir_of(Path(root))
        if found is not None:
            return found
    return None


def require_hip_include_dir(source: str | os.PathLike) -> Path:
    """`find_hip_include_dir()`, or a UserError naming `source` that says how to install HIP's headers."""
    found = find_hip_include_dir()
    if found is None:
        raise UserError(
            f"{source}: a HIP source needs HIP's headers (hip/hip_runtime.h), and none were found in "
            f"$HIP_PATH, {', '.join(f'{r}/include' for r in (*SEARCHED_ROOTS, user_root()))}; {INSTALL_HINT}"
        )
    return found


def set_hip_path(directory: str) -> None:
    """`--hip-path DIR`: check DIR and make it `$HIP_PATH` for this command (and the compilers it runs)."""
    if not Path(directory).is_dir():
        raise UserError(f"--hip-path {directory!r}: no such directory")
    if _include_dir_of(Path(directory)) is None:
        raise UserError(f"--hip-path {directory!r}: no hip/hip_runtime.h in it or in its include folder; {INSTALL_HINT}")
    os.environ["HIP_PATH"] = str(Path(directory).resolve())


# HIP 5.2's nvidia_hip_runtime_api.h defines CUDA_11010 twice (meaning CUDA_11020 the second time): a warning of
# the host preprocessor on every compile, which would open every compile error's log.
_REDEFINITION_WARNING_RE = re.compile(
    r'(?:In file included from [^\n]*\n(?:[ \t]+from [^\n]*\n)*)?[^\n]*nvidia_hip_runtime_api\.h:\d+: warning: '
    r'"CUDA_11010" redefined\n(?:[ \t]*\d*[ \t]*\|[^\n]*\n)*'
    r'[^\n]*: note: this is the location of the previous definition\n(?:[ \t]*\d*[ \t]*\|[^\n]*\n)*'
)


def without_header_noise(log: str) -> str:
    """A compiler's `log` without the warning that HIP 5.2's own header causes on every compile."""
    return _REDEFINITION_WARNING_RE.sub("", log)


def report_notes(modules) -> list[str]:
    """The notes a report on `modules` carries: `WARP_SIZE_NOTE` when one of them was compiled from a HIP source."""
    return [WARP_SIZE_NOTE] if any_hip(modules) else []


def any_hip(modules) -> bool:
    """Whether one of `modules` was compiled from a HIP source."""
    return any(m.compile_options is not None and m.compile_options.hip for m in modules)


_HIP_NAMES = {"cudaMallocHost": "hipHostMalloc", "cudaHostAlloc": "hipHostMalloc", "cudaFreeHost": "hipHostFree"}
"""CUDA runtime names whose HIP counterpart is not the same name with `hip` for `cuda`."""
_CUDA_NAME_RE = re.compile(r"\bcuda([A-Z]\w*)")


def hip_spelling(text: str) -> str:
    """`text` with the CUDA runtime's names as a HIP program writes them (`cudaMemcpy` -> `hipMemcpy`,
    `cudaErrorLaunchFailure` -> `hipErrorLaunchFailure`, `cudaMallocHost#1` -> `hipHostMalloc#1`).

    On HIP's NVIDIA path every `hip*` call is the `cuda*` call of the same meaning, which is what gpurace's
    runtime sees and names; a HIP programmer reads and searches for the names in their own source.
    """
    return _CUDA_NAME_RE.sub(lambda m: _HIP_NAMES.get(m.group(), "hip" + m.group(1)), text)


def compiler_include_dirs(include_dir: Path) -> list[str]:
    """The -I folders a HIP compile adds: gpurace's compatibility header's, and HIP's unless it is a system folder."""
    dirs = [str(COMPAT_DIR)]
    if include_dir.resolve() != Path("/usr/include"):
        dirs.append(str(include_dir))
    return dirs
