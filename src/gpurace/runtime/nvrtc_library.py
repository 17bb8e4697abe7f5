"""NVIDIA's NVRTC for programs that compile their kernels at run time (`#include <nvrtc.h>`, `-lnvrtc`).

gpurace depends on NVRTC's PyPI package (`nvidia-cuda-nvrtc`), so a program
built by `gpurace exec` finds NVRTC there: its header and library through
folders of the build's own that hold nothing else (the package ships
`libnvrtc.so.13` only, so the link name `libnvrtc.so` is made there), after
the user's include and library folders, and at run time through the library
path, after the user's. The program's NVRTC is preceded by gpurace's capture library
(`shim/nvrtc_capture.c`), which hands gpurace the PTX of each cubin the
program takes, since the simulator runs PTX.
"""

from __future__ import annotations

from pathlib import Path

from gpurace.frontend.compile import pypi_cuda_roots
from gpurace.frontend.sandbox import CompilerDir

LIBRARY = "libnvrtc.so.13"


def nvrtc_root() -> Path | None:
    """The NVIDIA wheel folder (`nvidia/cu13`) holding NVRTC's header and library, or None."""
    for root in pypi_cuda_roots():
        if (root / "include" / "nvrtc.h").is_file() and (root / "lib" / LIBRARY).is_file():
            return root
    return None


def build_folders(workdir: CompilerDir) -> tuple[Path, Path] | None:
    """(include folder, library folder) in `workdir` that hold only NVRTC's header and its link name
    `libnvrtc.so`, or None without NVRTC."""
    root = nvrtc_root()
    if root is None:
        return None
    include, lib = workdir.root / "nvrtc" / "include", workdir.root / "nvrtc" / "lib"
    include.mkdir(parents=True)
    lib.mkdir()
    (include / "nvrtc.h").symlink_to(root / "include" / "nvrtc.h")
    (lib / "libnvrtc.so").symlink_to(root / "lib" / LIBRARY)
    return include, lib
