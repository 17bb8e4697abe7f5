"""Where gpurace keeps what it builds once and reuses across runs: `$XDG_CACHE_HOME/gpurace`, else
`~/.cache/gpurace` (the runtime shim, LLVM object code, CuPy sources, HIP's headers)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpurace"
