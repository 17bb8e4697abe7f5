"""A small reader of the parts of an ELF file that `gpurace exec` needs: named sections and dynamic entries.

The files are a prebuilt program (`prebuilt.py`) and the CUDA machine code (cubins) a program loads itself
(`module_images.py`), whose kernels are named by its sections. Both are untrusted data, so this reads only
what it is asked for, with every offset, size and count checked against the
file before anything is read or allocated, and the sections it reads within
the memory budget (`Limits.max_memory`); whatever does not add up is a
UserError naming the file. Only 64-bit little-endian files are read, of
x86-64 (`exec` runs programs natively, on Linux x86-64 only) or of CUDA. No section headers
(an executable stripped with `sstrip`) means no sections, not an error.
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from gpurace.errors import UserError
from gpurace.limits import Limits

ELF_MAGIC = b"\x7fELF"
ET_EXEC, ET_DYN = 2, 3
EM_X86_64, EM_CUDA = 62, 190
SHT_NOBITS, SHT_DYNAMIC = 8, 6
DT_NULL, DT_NEEDED, DT_RPATH, DT_RUNPATH = 0, 1, 15, 29

_HEADER = struct.Struct("<16sHH4x8x8xQ4x2x2x2xHHH")  # ident, type, machine, shoff, shentsize, shnum, shstrndx
_SECTION = struct.Struct("<IIQQQQIIQQ")
_DYNAMIC = struct.Struct("<qQ")
_SHN_XINDEX = 0xFFFF


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    offset: int
    size: int
    link: int


def is_elf(path: Path) -> bool:
    """Whether `path` is a readable regular file that starts as an ELF file does."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == ELF_MAGIC
    except OSError:
        return False


class ElfFile:
    """The header and section table of an ELF64 x86-64 file (`path`), or of a CUDA cubin held in `data` (`path` then
    names it in messages); `section_data` and `dynamic_strings` read more."""

    def __init__(self, path: Path | str, limits: Limits, data: bytes | None = None):
        self.path = path
        self.limits = limits
        if data is not None:
            self._file, self.size = io.BytesIO(data), len(data)
        else:
            try:
                self._file = open(path, "rb")
            except OSError as e:
                raise UserError(f"{path}: cannot read it: {e.strerror}") from None
        try:
            if data is None:
                self.size = os.fstat(self._file.fileno()).st_size
            ident, self.type, self.machine, shoff, shentsize, shnum, shstrndx = _HEADER.unpack(
                self._read(0, _HEADER.size, "its ELF header")
            )
            wanted = EM_X86_64 if data is None else EM_CUDA
            if ident[:4] != ELF_MAGIC or ident[4] != 2 or ident[5] != 1 or self.machine != wanted:
                raise UserError(
                    f"{path}: not an x86-64 Linux program (gpurace exec runs programs natively, on x86-64 only)"
                    if data is None
                    else f"{path}: not 64-bit CUDA machine code (a cubin)"
                )
            self.sections = self._section_table(shoff, shentsize, shnum, shstrndx)
        except BaseException:
            self._file.close()
            raise

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ElfFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def kernel_names(self) -> list[str]:
        """The kernels of a cubin, in section order: each has its code in `.text.NAME` and its launch information
        (parameters, ...) in `.nv.info.NAME`, which device functions lack."""
        names = {s.name for s in self.sections}
        info = [s.name[len(".nv.info.") :] for s in self.sections if s.name.startswith(".nv.info.")]
        return [name for name in info if f".text.{name}" in names]

    def section_data(self, section: Section, what: str) -> bytes:
        """The bytes of `section` (`what` it is, for messages)."""
        if section.type == SHT_NOBITS:
            return b""
        return self._read(section.offset, section.size, f"its {what} ({section.name})")

    def dynamic_strings(self) -> dict[int, list[str]]:
        """The string-valued dynamic entries (DT_NEEDED, DT_RPATH, DT_RUNPATH), by tag, in order; {} for a static file."""
        dynamic = next((s for s in self.sections if s.type == SHT_DYNAMIC), None)
        if dynamic is None:
            return {}
        if dynamic.link >= len(self.sections):
            raise self._malformed("its dynamic section names no string table")
        entries = self.section_data(dynamic, "dynamic section")
        strings = self.section_data(self.sections[dynamic.link], "dynamic string table")
        found: dict[int, list[str]] = {}
        for tag, value in _DYNAMIC.iter_unpack(entries[: len(entries) // _DYNAMIC.size * _DYNAMIC.size]):
            if tag == DT_NULL:
                break
            if tag in (DT_NEEDED, DT_RPATH, DT_RUNPATH):
                found.setdefault(tag, []).append(_string_at(strings, value) or "")
        return found

    # ------------------------------------------------------------------ reading, bounded by the file

    def _section_table(self, shoff: int, shentsize: int, shnum: int, shstrndx: int) -> list[Section]:
        if shoff == 0:
            return []
        if shentsize != _SECTION.size:
            raise self._malformed(f"section headers of {shentsize} bytes")
        first = _SECTION.unpack(self._read(shoff, _SECTION.size, "its section headers"))
        if shnum == 0:  # more than 0xff00 sections: the count is in the first header
            shnum = first[5]
        if shstrndx == _SHN_XINDEX:
            shstrndx = first[6]
        raw = list(_SECTION.iter_unpack(self._read(shoff, shnum * _SECTION.size, "its section headers")))
        if not raw or shstrndx >= len(raw):
            raise self._malformed("no section name table")
        names_header = raw[shstrndx]
        names = self._read(names_header[4], names_header[5], "its section name table")
        return [Section(name=_string_at(names, r[0]) or "", type=r[1], offset=r[4], size=r[5], link=r[6]) for r in raw]

    def _read(self, offset: int, size: int, what: str) -> bytes:
        """`size` bytes at `offset`, once they are known to lie in the file and to fit the memory budget."""
        if offset < 0 or size < 0 or offset + size > self.size:
            raise self._malformed(f"the file ends before the end of {what}")
        self.limits.check_memory(size, f"{self.path}: {what}")
        self._file.seek(offset)
        data = self._file.read(size)
        if len(data) != size:
            raise self._malformed(f"{what} could not be read whole")
        return data

    def _malformed(self, why: str) -> UserError:
        return UserError(f"{self.path}: not a valid ELF file ({why})")


def _string_at(table: bytes, offset: int) -> str | None:
    """The NUL-terminated string at `offset` of a string table, or None when it lies outside it."""
    if not 0 <= offset < len(table):
        return None
    end = table.find(b"\0", offset)
    return table[offset : end if end >= 0 else len(table)].decode("utf-8", errors="replace")
