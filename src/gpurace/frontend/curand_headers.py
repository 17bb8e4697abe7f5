"""cuRAND's device headers (`curand_kernel.h`) for nvcc builds whose toolkit was installed without them.

Device code that draws random numbers includes `<curand_kernel.h>` (CUTLASS's
utilities do, and so do many samples); it is plain device code plus tables
of constants, which the simulator runs like any other. A toolkit installed
without the cuRAND component (as the CUDA 13 compiler packages of some base
images are) cannot compile such a file, while gpurace depends on cuRAND's
PyPI package (`nvidia-curand`), which ships the headers. A build then gets
a folder of its own that holds cuRAND's headers and nothing else, after the
user's include folders, so the toolkit's own headers (the CUDA runtime's,
libcu++) are never replaced by the wheel's. A toolkit that has cuRAND keeps
its own. cuRAND's host library is not provided: `curandCreateGenerator` and
friends run on a GPU through NVIDIA's runtime, which `exec` replaces.
"""

from __future__ import annotations

import functools
import shlex
import subprocess
from pathlib import Path

from gpurace.frontend.compile import pypi_cuda_roots
from gpurace.frontend.sandbox import CompilerDir

MARKER = "curand_kernel.h"
"""The header whose presence says a folder holds cuRAND's device API."""


def curand_include(workdir: CompilerDir, nvcc: Path) -> str | None:
    """A folder in `workdir` holding only the cuRAND wheel's headers (as `reach` names it), when `nvcc`'s toolkit
    lacks them and the wheel is installed; None otherwise."""
    wheel = _wheel_include()
    if wheel is None or _toolkit_has_curand(str(nvcc)):
        return None
    folder = workdir.root / "curand" / "include"
    folder.mkdir(parents=True, exist_ok=True)
    for header in sorted(wheel.glob("curand*.h")):
        link = folder / header.name
        if not link.exists():
            link.symlink_to(header)
    return workdir.reach(folder)


def _wheel_include() -> Path | None:
    for root in pypi_cuda_roots():
        if (root / "include" / MARKER).is_file():
            return root / "include"
    return None


@functools.cache
def _toolkit_has_curand(nvcc: str) -> bool:
    """Whether the folders `nvcc` searches by itself (its `INCLUDES`, as `--dryrun` prints them) hold cuRAND.

    Asked of nvcc because the executable on PATH is often a wrapper or a link
    whose own folder says nothing of the toolkit it runs. If nvcc cannot say,
    the toolkit is taken to have cuRAND, and nothing is added.
    """
    try:
        proc = subprocess.run(
            [nvcc, "--dryrun", "-x", "cu", "-E", "/dev/null"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return True
    folders = [
        Path(word[2:])
        for line in (proc.stdout + proc.stderr).splitlines()
        if line.startswith("#$ INCLUDES=")
        for word in shlex.split(line.split("=", 1)[1])
        if word.startswith("-I")
    ]
    if not folders:
        return True
    return any((folder / MARKER).is_file() for folder in folders)
