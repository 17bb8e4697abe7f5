"""What the detection benchmarks share: compiling their kernels once, and measuring each run in its own process.

Each measurement runs in a fresh interpreter so that its peak resident memory
(`ru_maxrss`) is its own; the child script prints one JSON line of figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path


def compile_all(sources: dict[str, str], workdir: Path) -> dict[str, Path]:
    """PTX files in `workdir` for CUDA sources by name."""
    from gpurace.frontend.compile import compile_to_ptx

    out = {}
    for name, source in sources.items():
        cu = workdir / f"{name}.cu"
        cu.write_text(textwrap.dedent(source))
        ptx = workdir / f"{name}.ptx"
        ptx.write_text(compile_to_ptx(cu).text)
        out[name] = ptx
    return out


def measure(child: str, ptx: Path, mode: str, launch: dict, env: dict | None = None) -> dict:
    """Run the `child` script on one PTX file, mode and launch (in `env`, else this process's environment); its
    last output line, as JSON."""
    proc = subprocess.run(
        [sys.executable, "-c", child, str(ptx), mode, json.dumps(launch)], capture_output=True, text=True, check=True,
        env=env,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])
