"""One call from a user's file to the module IR: compile (or read) PTX, then parse it.

This is the front end's entry point for the CLI and for every later stage, so
that they all see the same compiler choice, options and error messages.
"""

from __future__ import annotations

import os
from typing import Iterable

from gpurace.frontend.compile import DEFAULT_ARCH, CompileOptions, compile_to_ptx
from gpurace.frontend.ptx.ir import Module
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits


def load_module(
    path: str | os.PathLike,
    *,
    include_dirs: Iterable[str | os.PathLike] = (),
    defines: Iterable[str] = (),
    arch: str = DEFAULT_ARCH,
    device_debug: bool = False,
    limits: Limits | None = None,
    relocatable: bool = False,
    nvcc_flags: Iterable[str] = (),
) -> Module:
    """Compile `path` (.cu, .hip or .ptx) within `limits` and parse the PTX; `Module.source_path` names `path`, and
    `Module.compile_options` records the options (for the type probes of `frontend.type_probe`).

    Parse errors in PTX generated from a .cu file name the generated PTX, since
    their line numbers are PTX lines, not source lines. `relocatable` compiles one file of several
    (`frontend.link.load_linked`); `nvcc_flags` shape the device code as in `compile_to_ptx`.
    """
    include_dirs, defines, nvcc_flags = tuple(map(str, include_dirs)), tuple(defines), tuple(nvcc_flags)
    compiled = compile_to_ptx(
        path, include_dirs=include_dirs, defines=defines, arch=arch, device_debug=device_debug, limits=limits,
        relocatable=relocatable, nvcc_flags=nvcc_flags,
    )
    where = compiled.source_path if compiled.compiler == "ptx" else f"{compiled.source_path} (generated PTX)"
    module = parse_ptx(compiled.text, where)
    module.source_path = compiled.source_path
    module.compile_options = CompileOptions(
        include_dirs, defines, arch, device_debug, relocatable, hip=compiled.hip, nvcc_flags=nvcc_flags
    )
    return module
