"""Programs built already (by the user's Makefile): whether one can run under `gpurace exec`, and its PTX.

gpurace runs such a program as it runs one it built itself, which asks
two things of the build (`rebuild_flags` says how to get them):

* the CUDA runtime is a shared library the program loads by name, so that
  gpurace's `libcudart.so.13` takes the place of NVIDIA's: `-cudart shared`
  (nvcc links the runtime statically unless told otherwise, and a static
  runtime cannot be replaced);
* the program carries PTX for every kernel, which is what the simulator
  runs: a `-gencode arch=compute_XX,code=compute_XX` (code for a real GPU,
  `code=sm_XX`, may be there too; it is left alone). `-lineinfo` lets
  findings name device source lines and `-g` host ones; without them a
  program still runs, and its findings name functions instead of lines.

Programs that cannot work are refused with the flags to rebuild with: a
static runtime, another CUDA release's runtime, machine code only, or an
RPATH that would load NVIDIA's runtime first. A program built with
relocatable device code (`-rdc=true`, `-dc`) keeps each unit's PTX in its
`__nv_relfatbin` section; those modules are linked into one, as nvlink
linked their machine code.

The PTX comes from the program's fatbinary (`fatbin.py`), read here rather
than by NVIDIA's `cuobjdump`: the container format is small, reading it
needs no other binary to install and keep in step with nvcc's releases, and
an untrusted program is parsed in Python with every size checked, rather than
handed to a native parser; cuobjdump's output is also meant for people, not
for splitting back into translation units. One module per translation unit,
parsed as `load_module` parses PTX (`parse_ptx`), so the device sees the
same `Module`s as for a program built from sources; `.file` paths stay
where the user compiled.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpurace.errors import UserError
from gpurace.frontend.compile import normalize_arch
from gpurace.frontend.link import link_modules
from gpurace.frontend.ptx.ir import Module
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.runtime.elf import DT_NEEDED, DT_RPATH, DT_RUNPATH, ET_DYN, ET_EXEC, ElfFile, is_elf
from gpurace.runtime.fatbin import Unit, choose_ptx, read_units

RUNTIME = "libcudart.so.13"
_RUNTIME_RE = re.compile(r"^libcudart\.so(?:\.|$)")


def is_prebuilt(path: Path) -> bool:
    """Whether `path` is an ELF file: a program built already (`load_prebuilt` says whether gpurace can run it)."""
    return is_elf(path)


def rebuild_flags(arch: str) -> str:
    """The nvcc options a program needs to run under `gpurace exec`."""
    virtual = normalize_arch(arch)
    return f"-cudart shared -lineinfo -g -gencode arch={virtual},code={virtual}"


def load_prebuilt(path: Path, *, arch: str, limits: Limits) -> tuple[Path, list[Module]]:
    """The absolute path of the program at `path` and a module per translation unit of its PTX (none for a
    program without kernels, which may still make CUDA calls).

    Of several PTX texts of one unit, the one for the newest architecture
    not above `arch` is taken, as a GPU of that architecture would, else the
    oldest. A program gpurace cannot run is a UserError saying how to rebuild it.
    """
    path = path.resolve()
    with ElfFile(path, limits) as elf:
        if elf.type not in (ET_EXEC, ET_DYN):
            raise UserError(f"{path}: an ELF file that is not a linked program (an object file?); link it into an executable")
        if not os.access(path, os.X_OK):
            raise UserError(f"{path}: not executable (its execute permission is not set)")
        check_runtime(path, elf.dynamic_strings(), arch)
        fatbin, relocatable = elf.section(".nv_fatbin"), elf.section("__nv_relfatbin")
        units = read_units(elf.section_data(fatbin, "fatbinary"), f"{path} (.nv_fatbin)", limits) if fatbin else []
        linked = read_units(elf.section_data(relocatable, "fatbinary"), f"{path} (__nv_relfatbin)", limits) if relocatable else []
    capability = int(re.match(r"compute_(\d+)", normalize_arch(arch))[1])
    # Relocatable units (-rdc) were linked by nvlink into one device program: so are their PTX modules. A unit
    # with no PTX for this architecture or older is a library built for other GPUs (CUDA's device runtime).
    linked = [u for u in linked if any(e.capability <= capability for e in u.ptx)]
    if not any(u.ptx for u in units + linked) and any(u.machine_code for u in units + linked):
        raise _refuse(path, arch, "it carries only machine code (SASS) for its kernels, no PTX")
    modules = _modules(path, [u for u in units if u.ptx], capability, 0)
    if linked:
        modules.append(link_modules(_modules(path, linked, capability, len(modules))))
    return path, modules


def _modules(path: Path, units: list[Unit], capability: int, numbered: int) -> list[Module]:
    """A module per unit, from its PTX text for `capability` (units named from `numbered` + 1 on)."""
    modules = []
    for index, unit in enumerate(units, start=numbered + 1):
        entry = choose_ptx(unit.ptx, capability)
        name = entry.name or f"translation unit {index}"
        module = parse_ptx(entry.text, f"{path} (the PTX of {name})")
        module.source_path = entry.name or f"{path} ({name})"
        modules.append(module)
    return modules


def check_runtime(path: Path, dynamic: dict[int, list[str]], arch: str) -> None:
    """A UserError unless the program loads CUDA 13's runtime by name, from where gpurace's can take its place."""
    runtimes = [name for name in dynamic.get(DT_NEEDED, []) if _RUNTIME_RE.match(name)]
    if not runtimes:
        raise _refuse(
            path, arch, "it is not linked against the shared CUDA runtime (nvcc links libcudart statically by default)"
        )
    if RUNTIME not in runtimes:
        raise _refuse(path, arch, f"it loads {runtimes[0]}, and gpurace provides CUDA 13's runtime ({RUNTIME}): build it with CUDA 13")
    if DT_RUNPATH in dynamic:  # searched after LD_LIBRARY_PATH, where gpurace's runtime is
        return
    for directory in (d for rpath in dynamic.get(DT_RPATH, []) for d in rpath.split(":")):
        directory = re.sub(r"\$(?:ORIGIN\b|\{ORIGIN\})", lambda _: str(path.parent), directory)
        if (Path(directory or ".") / RUNTIME).exists():
            raise UserError(
                f"{path}: its RPATH ({directory}) holds NVIDIA's {RUNTIME}, which would be loaded instead of gpurace's; "
                "link it with -Xlinker --enable-new-dtags (a RUNPATH is searched after gpurace's runtime) or without -rpath"
            )


def _refuse(path: Path, arch: str, why: str) -> UserError:
    return UserError(
        f"{path}: gpurace exec cannot run this program: {why}. Rebuild it with "
        f"`nvcc {rebuild_flags(arch)} ...` (see \"Prebuilt executables\" in the README), or give gpurace exec its sources"
    )
