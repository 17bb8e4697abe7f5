"""The PTX (and machine code) of a CUDA fatbinary: the `.nv_fatbin` section nvcc puts in every program it builds,
or a `.fatbin` file (`nvcc -fatbin`) that a program loads itself (`module_images`).

The section is a sequence of containers, one per translation unit (and
one, often empty, from nvcc's device-link step). A container is a 16-byte
header (`u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of
what follows`) and then entries, each a header (`u16 kind` (1 PTX, 2 ELF
machine code), `u16 version, u32 header size, u64 payload size`, then
`u32 compressed size` at 16, `u64 flags` at 40, `u64 uncompressed size` at 56,
and for PTX `u32 compute capability` at 28 and the translation unit's name as
`u32 offset, u32 length` into the header at 32) followed by its payload.
NVIDIA does not document the layout, but it is small and has kept its shape
across CUDA releases; only the fields above are read.

nvcc 13 compresses entries by default: flag 0x8000 marks a Zstandard frame
(`-compress-mode=default|size|balance`), flag 0x2000 an LZ4 block
(`-compress-mode=speed`); `--no-compress` or `-compress-mode=none` leave
them plain. Zstandard is decoded by the `zstandard` package, LZ4 by `lz4`.

Every header field is untrusted: offsets and sizes are checked against the
bytes they point into, and each PTX text is decompressed only up to the size
its header states, once that size fits the memory budget. Anything that does
not add up is a `FatbinError` saying what, and where.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from gpurace.errors import UserError
from gpurace.limits import Limits

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
FLAG_LZ4, FLAG_ZSTD = 0x2000, 0x8000

_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQ")
_ENTRY_HEADER_BYTES = 64
_ZSTD_CHUNK = 1 << 16
_NONZERO = re.compile(rb"[^\0]")


class FatbinError(UserError):
    """A fatbinary that does not parse; the message names the file and what is wrong."""


@dataclass(frozen=True)
class PtxEntry:
    """One PTX text of a translation unit: its compute capability (75), unit name (as nvcc was given it, or ""), text."""

    capability: int
    name: str
    text: str


@dataclass(frozen=True)
class Unit:
    """One container: the PTX entries it holds, how many machine-code (ELF) entries, and those entries' ELF
    files (cubins) when `read_units` was asked for them."""

    ptx: list[PtxEntry]
    machine_code: int
    cubins: list[bytes]


def read_units(data: bytes, where: str, limits: Limits, cubins: bool = False) -> list[Unit]:
    """The containers of a `.nv_fatbin` section (or of a `.fatbin` file), in order; `where` names it in errors.
    With `cubins`, each unit keeps its machine-code entries' ELF files, decompressed."""
    units = []
    total = 0
    pos = 0
    while pos < len(data):
        if data[pos] == 0:  # the linker pads between the containers of two object files
            found = _NONZERO.search(data, pos)
            pos = found.start() if found else len(data)
            continue
        if pos + _CONTAINER.size > len(data):
            raise FatbinError(f"{where}: a fatbinary container is cut short at byte {pos}")
        magic, _version, header_size, size = _CONTAINER.unpack_from(data, pos)
        if magic != FATBIN_MAGIC:
            raise FatbinError(f"{where}: no fatbinary container at byte {pos} (magic 0x{magic:08x})")
        start, end = pos + header_size, pos + header_size + size
        if header_size < _CONTAINER.size or end > len(data):
            raise FatbinError(f"{where}: the fatbinary container at byte {pos} runs past the end of its section")
        unit = _read_unit(data, start, end, where, limits, total, cubins)
        total += sum(len(e.text) for e in unit.ptx) + sum(len(c) for c in unit.cubins)
        units.append(unit)
        pos = end
    return units


def choose_ptx(entries: list[PtxEntry], capability: int) -> PtxEntry:
    """Of a unit's PTX texts, the one a GPU of compute capability `capability` (75) runs: the newest not above it,
    else the oldest (which such a GPU refuses)."""
    fitting = [e for e in entries if e.capability <= capability]
    return max(fitting, key=lambda e: e.capability) if fitting else min(entries, key=lambda e: e.capability)


def _read_unit(data: bytes, start: int, end: int, where: str, limits: Limits, total: int, keep_cubins: bool) -> Unit:
    ptx, machine_code, cubins = [], 0, []
    pos = start
    while pos < end:
        if pos + _ENTRY.size > end:
            raise FatbinError(f"{where}: a fatbinary entry header is cut short at byte {pos}")
        kind, _version, header_size, size = _ENTRY.unpack_from(data, pos)
        payload = pos + header_size
        if header_size < _ENTRY.size or payload + size > end:
            raise FatbinError(f"{where}: the fatbinary entry at byte {pos} runs past the end of its container")
        header = data[pos:payload]
        if kind == KIND_PTX:
            entry = _ptx_entry(header, data[payload : payload + size], f"{where}: the PTX entry at byte {pos}", limits, total)
            total += len(entry.text)
            ptx.append(entry)
        elif kind == KIND_ELF:
            machine_code += 1
            if keep_cubins:  # copied only when asked for: a program's machine code may be large
                body = data[payload : payload + size]
                cubins.append(_payload(header, body, f"{where}: the machine-code entry at byte {pos}", limits, total))
                total += len(cubins[-1])
        pos = payload + size
    return Unit(ptx, machine_code, cubins)


def _payload(header: bytes, payload: bytes, where: str, limits: Limits, total: int) -> bytes:
    """An entry's payload, decompressed when its header says it is compressed (PTX and machine-code entries
    share the header's fields read here)."""
    if len(header) < _ENTRY_HEADER_BYTES:
        raise FatbinError(f"{where} has a header of {len(header)} bytes, fewer than {_ENTRY_HEADER_BYTES}")
    (compressed,) = struct.unpack_from("<I", header, 16)
    (flags,) = struct.unpack_from("<Q", header, 40)
    (size,) = struct.unpack_from("<Q", header, 56)
    codec = flags & (FLAG_LZ4 | FLAG_ZSTD)
    if not codec:
        return payload
    if compressed > len(payload):
        raise FatbinError(f"{where} says it has {compressed} compressed bytes, more than its {len(payload)}")
    limits.check_memory(total + size, f"{where} ({size:,} bytes once decompressed)")
    return _decompress(codec, payload[:compressed], size, where)


def _ptx_entry(header: bytes, payload: bytes, where: str, limits: Limits, total: int) -> PtxEntry:
    payload = _payload(header, payload, where, limits, total)
    capability, name_offset, name_length = struct.unpack_from("<III", header, 28)
    name = header[name_offset : name_offset + name_length].decode("utf-8", errors="replace") if name_offset else ""
    text = payload.split(b"\0", 1)[0]
    try:
        return PtxEntry(capability, name, text.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise FatbinError(f"{where}: its PTX is not UTF-8 text ({e.reason} at byte {e.start})") from None


def _decompress(codec: int, data: bytes, size: int, where: str) -> bytes:
    if codec == FLAG_LZ4:
        out = _lz4(data, size, where)
    elif codec == FLAG_ZSTD:
        out = _zstd(data, size, where)
    else:
        raise FatbinError(f"{where} is marked as compressed two ways at once (flags 0x{codec:x})")
    if len(out) != size:
        raise FatbinError(f"{where} decompresses to {len(out):,} bytes, not the {size:,} its header says")
    return out


def _lz4(data: bytes, size: int, where: str) -> bytes:
    """An LZ4 block (no frame) that decompresses to at most `size` bytes."""
    import lz4.block

    try:
        return lz4.block.decompress(data, uncompressed_size=size)
    except lz4.block.LZ4BlockError as e:
        raise FatbinError(f"{where}: its LZ4 data is corrupt ({e})") from None


def _zstd(data: bytes, size: int, where: str) -> bytes:
    """A Zstandard frame, read no further than `size` + 1 bytes (one more, so that a longer one is noticed)."""
    import zstandard

    out = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            while len(out) <= size:
                chunk = reader.read(min(_ZSTD_CHUNK, size + 1 - len(out)))
                if not chunk:
                    break
                out += chunk
    except zstandard.ZstdError as e:
        raise FatbinError(f"{where}: its Zstandard data is corrupt ({e})") from None
    return bytes(out)
