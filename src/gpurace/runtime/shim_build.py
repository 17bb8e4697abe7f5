"""Building gpurace's libcudart.so.13 (the shim, `shim/cudart.c`) once per version, with the system's gcc.

The library is C with no dependency beyond libc, so it is built where it
runs rather than shipped as a binary: at the first `gpurace exec`, into the
user's cache directory (`$XDG_CACHE_HOME/gpurace`, else `~/.cache/gpurace`),
in a folder named after a hash of the shim's sources, so an upgrade of
gpurace builds a fresh one and never runs a stale one. The library is
written under a temporary name and renamed into place, so two runs that
build at once both end with a whole library.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from gpurace.errors import CompileError, UserError
from gpurace.frontend.sandbox import run_limited
from gpurace.limits import Limits

SHIM_SOURCES = Path(__file__).parent / "shim"
SHIM_FILES = (
    "cudart.c",
    "error_names.h",
    "textures.h",
    "tensor_maps.h",
    "graphs.h",
    "stream_ordered.h",
    "memory_hints.h",
    "unsupported_calls.h",
    "libcudart.map",
)
LIBRARY_NAME = "libcudart.so.13"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpurace"


def shim_directory(limits: Limits) -> Path:
    """The directory holding the built `libcudart.so.13` (for LD_LIBRARY_PATH), built first if needed.

    A UserError when there is no gcc, or when the directory's path cannot be
    put in LD_LIBRARY_PATH (it has a `:`).
    """
    digest = hashlib.sha256()
    for name in SHIM_FILES:
        digest.update(name.encode() + b"\0" + (SHIM_SOURCES / name).read_bytes() + b"\0")
    folder = cache_dir() / f"shim-{digest.hexdigest()[:16]}"
    if ":" in str(folder):
        raise UserError(f"{folder}: gpurace's CUDA runtime cannot live in a folder whose path has a ':'; set XDG_CACHE_HOME")
    library = folder / LIBRARY_NAME
    if not library.is_file():
        _build(folder, library, limits)
    return folder


def _build(folder: Path, library: Path, limits: Limits) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        raise UserError("gpurace exec builds its CUDA runtime with gcc, and there is no gcc on PATH; install gcc")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = folder / f"{LIBRARY_NAME}.{os.getpid()}.partial"
    cmd = [
        gcc,
        "-shared",
        "-fPIC",
        "-O2",
        f"-Wl,--version-script={SHIM_SOURCES / 'libcudart.map'}",
        f"-Wl,-soname,{LIBRARY_NAME}",
        "-o",
        str(partial),
        str(SHIM_SOURCES / "cudart.c"),
        "-lpthread",
        "-ldl",
    ]
    proc = run_limited(cmd, limits, "gcc (building gpurace's CUDA runtime)")
    if proc.returncode != 0:
        partial.unlink(missing_ok=True)
        raise CompileError(f"gcc could not build gpurace's CUDA runtime ({SHIM_SOURCES / 'cudart.c'}):\n{proc.stderr.strip()}")
    os.replace(partial, library)
