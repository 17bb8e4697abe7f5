"""Building gpurace's libcudart.so.13 (the shim, `shim/cudart.c`), libcuda.so.1 (`shim/cuda_driver.c`) and
libgpurace_nvrtc.so (`shim/nvrtc_capture.c`, preloaded) once per version, with the system's gcc.

The libraries are C with no dependency beyond libc, so they are built where
they run rather than shipped as binaries: at the first `gpurace exec`, into the
user's cache directory (`$XDG_CACHE_HOME/gpurace`, else `~/.cache/gpurace`),
in a folder named after a hash of the shim's sources, so an upgrade of
gpurace builds a fresh one and never runs a stale one. Each library is
written under a temporary name and renamed into place, so two runs that
build at once both end with whole libraries. The folder also holds
`libcuda.so`, the name a program's `-lcuda` looks for when it is linked.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from gpurace.cache import cache_dir
from gpurace.errors import CompileError, UserError
from gpurace.frontend.sandbox import run_limited
from gpurace.limits import Limits

SHIM_SOURCES = Path(__file__).parent / "shim"
SHIM_FILES = (
    "cudart.c",
    "error_names.h",
    "textures.h",
    "tensor_maps.h",
    "driver_support.h",
    "driver_textures.h",
    "graphs.h",
    "graph_memory.h",
    "graph_conditionals.h",
    "graph_params.h",
    "stream_ordered.h",
    "memory_hints.h",
    "unsupported_calls.h",
    "libcudart.map",
    "cuda_driver.c",
    "driver_calls.h",
    "driver_virtual_memory.h",
    "driver_graphs.h",
    "driver_graph_memory.h",
    "driver_errors.h",
    "libcuda.map",
    "nvrtc_capture.c",
    "libgpurace_nvrtc.map",
)
LIBRARY_NAME = "libcudart.so.13"
DRIVER_NAME = "libcuda.so.1"
DRIVER_LINK_NAME = "libcuda.so"
NVRTC_CAPTURE_NAME = "libgpurace_nvrtc.so"


def shim_directory(limits: Limits) -> Path:
    """The directory holding the built `libcudart.so.13` and `libcuda.so.1` (for LD_LIBRARY_PATH, and `-L` when a
    program links `-lcuda`), built first if needed.

    A UserError when there is no gcc, or when the directory's path cannot be
    put in LD_LIBRARY_PATH (it has a `:`).
    """
    digest = hashlib.sha256()
    for name in SHIM_FILES:
        digest.update(name.encode() + b"\0" + (SHIM_SOURCES / name).read_bytes() + b"\0")
    folder = cache_dir() / f"shim-{digest.hexdigest()[:16]}"
    if ":" in str(folder):
        raise UserError(f"{folder}: gpurace's CUDA runtime cannot live in a folder whose path has a ':'; set XDG_CACHE_HOME")
    if not (folder / DRIVER_LINK_NAME).is_file():
        _build(folder, limits)
    return folder


def _build(folder: Path, limits: Limits) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        raise UserError("gpurace exec builds its CUDA runtime with gcc, and there is no gcc on PATH; install gcc")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    _link(gcc, folder, LIBRARY_NAME, "cudart.c", "libcudart.map", ["-lpthread", "-ldl"], limits)
    _link(gcc, folder, DRIVER_NAME, "cuda_driver.c", "libcuda.map", ["-ldl"], limits)
    _link(gcc, folder, NVRTC_CAPTURE_NAME, "nvrtc_capture.c", "libgpurace_nvrtc.map", ["-ldl"], limits)
    partial = folder / f"{DRIVER_LINK_NAME}.{os.getpid()}.partial"
    partial.unlink(missing_ok=True)
    partial.symlink_to(DRIVER_NAME)
    os.replace(partial, folder / DRIVER_LINK_NAME)


def _link(gcc: str, folder: Path, name: str, source: str, version_script: str, libraries: list[str], limits: Limits) -> None:
    """Build the shared library `name` in `folder` from `source`, exporting what `version_script` lets out."""
    partial = folder / f"{name}.{os.getpid()}.partial"
    cmd = [
        gcc,
        "-shared",
        "-fPIC",
        "-O2",
        f"-Wl,--version-script={SHIM_SOURCES / version_script}",
        f"-Wl,-soname,{name}",
        "-o",
        str(partial),
        str(SHIM_SOURCES / source),
        *libraries,
    ]
    proc = run_limited(cmd, limits, "gcc (building gpurace's CUDA runtime)")
    if proc.returncode != 0:
        partial.unlink(missing_ok=True)
        raise CompileError(f"gcc could not build gpurace's CUDA runtime ({SHIM_SOURCES / source}):\n{proc.stderr.strip()}")
    os.replace(partial, folder / name)
