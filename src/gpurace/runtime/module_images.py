"""The device code a program loads itself through CUDA's driver API (`cuModuleLoad`, `cuModuleLoadData`, ...).

An image is PTX text, a fatbinary (what `nvcc -fatbin` writes; `fatbin.py`)
or a cubin, machine code in an ELF file (`nvcc -cubin`). PTX is what the
simulator runs: the image's own, or of a fatbinary's PTX texts the newest
not above the device's architecture, as a GPU's driver would compile it.
Machine code cannot be simulated, and a fatbinary built the usual way for
the driver API (`-gencode arch=compute_XX,code=sm_XX`) holds nothing else;
its kernels are then named by the cubin's sections (`elf.ElfFile.kernel_names`),
and their PTX comes from the sources `gpurace exec` was given: the one module
compiled from them that defines every kernel of the image stands in for it
(`LoadedImage.kernels`). Machine code the program compiled itself with NVRTC
runs the PTX NVRTC made it from, which the program's NVRTC handed to gpurace
beside it (`compiled`: `shim/nvrtc_capture.c`). The image itself is untrusted data, read within the
memory budget; what does not parse is a UserError naming it.

A link of several inputs (`cuLinkAddData`/`cuLinkAddFile` more than once) hands the program a linked image
that gpurace's driver writes (LINKED_MAGIC, below): the inputs as they were given, each an image of its own,
whose PTX modules are linked here as separate compilation links them (`frontend.link`). An input of machine
code only cannot be linked so (nor stood in for by sources, as a relocatable cubin's functions are not all
kernels): it stops the program.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from gpurace.errors import UserError
from gpurace.frontend.link import link_modules
from gpurace.frontend.ptx.ir import Module
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.runtime.elf import ELF_MAGIC, ElfFile
from gpurace.runtime.fatbin import FATBIN_MAGIC, choose_ptx, read_units
from gpurace.sim.budget import compute_capability

_FATBIN_MAGIC_BYTES = FATBIN_MAGIC.to_bytes(4, "little")
LINKED_MAGIC = b"GPURACE-LINKED\0\0"
"""The start of a linked image (shim/cuda_driver.c writes it): the magic, the image's size in bytes and the
number of inputs (u64 each), then per input the length of its name, its name, its size and its bytes (u32, name,
u64, bytes), all little-endian."""


@dataclass(frozen=True)
class LoadedImage:
    """What an image holds: a module parsed from its PTX, or (`module` None) the kernels of its machine code."""

    module: Module | None
    kernels: tuple[str, ...] = ()


def read_image(
    data: bytes, where: str, capability: int, limits: Limits, compiled: Mapping[bytes, str] | None = None
) -> LoadedImage:
    """The code of image `data` (`where` names it in messages) for a device of compute capability `capability`;
    `compiled` holds the PTX of machine code compiled at run time, by the cubin's `code_key`.

    A UserError when the image does not parse, or holds neither PTX nor machine code.
    """
    compiled = compiled or {}
    if data.startswith(LINKED_MAGIC):
        return _linked(data, where, capability, limits, compiled)
    if data.startswith(_FATBIN_MAGIC_BYTES):
        return _fatbinary(data, where, capability, limits, compiled)
    if data.startswith(ELF_MAGIC):
        return _machine_code([data], where, capability, limits, compiled)
    try:
        text = data.split(b"\0", 1)[0].decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{where}: neither PTX text, nor a fatbinary, nor a cubin") from None
    return LoadedImage(_parse(text, where, capability))


def code_key(cubin: bytes) -> bytes:
    """What names machine code among the PTX compiled at run time: its SHA-256."""
    return hashlib.sha256(cubin).digest()


def _linked(data: bytes, where: str, capability: int, limits: Limits, compiled: Mapping[bytes, str]) -> LoadedImage:
    """The inputs of a linked image, their PTX modules linked into one."""
    modules = []
    for name, image in _link_inputs(data, where):
        loaded = read_image(image, name, capability, limits, compiled)
        if loaded.module is None:
            raise UserError(
                f"{where}: its input {name} holds machine code only, and gpurace links the inputs' PTX: link PTX "
                "(`nvcc -ptx -rdc=true`) or fatbinaries holding it (`-gencode arch=compute_XX,code=compute_XX`)"
            )
        modules.append(loaded.module)
    return LoadedImage(link_modules(modules))


def _link_inputs(data: bytes, where: str) -> list[tuple[str, bytes]]:
    """The (name, bytes) of each input of a linked image; inputs given no name, or one an earlier input has, are
    named by their place in the link."""
    try:
        _size, count = struct.unpack_from("<QQ", data, len(LINKED_MAGIC))
        at, inputs = len(LINKED_MAGIC) + 16, []
        for i in range(count):
            (name_bytes,) = struct.unpack_from("<I", data, at)
            name = data[at + 4 : at + 4 + name_bytes].decode("utf-8", errors="replace")
            (size,) = struct.unpack_from("<Q", data, at + 4 + name_bytes)
            at += 12 + name_bytes
            if at + size > len(data):
                raise struct.error("truncated")
            taken = {n for n, _ in inputs}
            inputs.append((name if name and name not in taken else f"{where}, input {i + 1}", data[at : at + size]))
            at += size
    except struct.error:
        raise UserError(f"{where}: a linked image that runs past its end") from None
    return inputs


def _fatbinary(data: bytes, where: str, capability: int, limits: Limits, compiled: Mapping[bytes, str]) -> LoadedImage:
    entries = [e for u in read_units(data, where, limits) for e in u.ptx]
    if entries:
        return LoadedImage(_parse(choose_ptx(entries, capability).text, where, capability))
    # machine code only: read again, keeping (and decompressing) the cubins this time
    cubins = [cubin for u in read_units(data, where, limits, cubins=True) for cubin in u.cubins]
    if not cubins:
        raise UserError(f"{where}: a fatbinary with neither PTX nor machine code")
    return _machine_code(cubins, where, capability, limits, compiled)


def _machine_code(
    cubins: list[bytes], where: str, capability: int, limits: Limits, compiled: Mapping[bytes, str]
) -> LoadedImage:
    """The code of `cubins`: the PTX the first was compiled from at run time, else the kernels they define."""
    for cubin in cubins:
        ptx = compiled.get(code_key(cubin))
        if ptx is not None:
            return LoadedImage(_parse(ptx, where, capability))
    kernels = [name for cubin in cubins for name in ElfFile(where, limits, data=cubin).kernel_names()]
    return LoadedImage(None, tuple(dict.fromkeys(kernels)))


def _parse(text: str, where: str, capability: int) -> Module:
    """The module of PTX `text`; a UserError when it is for a newer GPU than the simulated one, as the driver's
    compiler refuses it (`.target sm_90` on a compute capability 7.5 device)."""
    module = parse_ptx(text, where)
    module.source_path = where
    target = compute_capability(module, f"compute_{capability}")
    if target > capability:
        raise UserError(
            f"{where}: its PTX targets sm_{target}, newer than the simulated device (compute capability "
            f"{capability // 10}.{capability % 10}); run gpurace exec with --arch compute_{target}"
        )
    return module
