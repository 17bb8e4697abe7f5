"""Template kernels a file defines but never instantiates, instantiated for `--kernel NAME<ARGS>`.

A `__global__` template exists in the PTX only where something instantiates
it (a launch in host code, an explicit instantiation). Kernel-only files
(Faial's and GPUVerify's suites, a header of kernels) often instantiate none.
When `--kernel` names an instantiation the file lacks, the file is compiled
again as a copy in gpurace's cache with one line added at its end, the
explicit instantiation `template __global__ decltype(NAME<ARGS>) NAME<ARGS>;`
(valid for nvcc and NVRTC alike, and needing no parameter list).
A `#line` directive keeps every position in the copy at the original
file's name and line, and the original's folder comes first on the include
path, so includes resolve as they did; the module is reported as the
original file's.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from gpurace.cache import cache_dir
from gpurace.frontend.cupy_kernels import write_once
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module


def load_instantiated(path: str | os.PathLike, kernel: str, *, include_dirs=(), **options) -> Module:
    """The module of `path` compiled with template kernel `kernel` (`saxpy<float>`) instantiated; `options` as
    for `load_module`. A `kernel` that names no template of the file is the compiler's error."""
    original = Path(path).resolve()
    quoted = str(original).replace("\\", "\\\\").replace('"', '\\"')
    text = f'#line 1 "{quoted}"\n{original.read_text(encoding="utf-8", errors="replace")}\n'
    text += f"template __global__ decltype({kernel}) {kernel};\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    copy = cache_dir() / "instantiate" / f"{re.sub(r'[^A-Za-z0-9_-]', '_', original.stem)[:64]}-{digest}{original.suffix}"
    write_once(copy, text)
    module = load_module(copy, include_dirs=(str(original.parent), *include_dirs), **options)
    module.source_path = str(path)
    return module
