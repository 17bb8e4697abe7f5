"""Device-side `printf`: the text each thread prints, formatted as CUDA's runtime formats it.

nvcc turns `printf(format, ...)` into `vprintf(format, buffer)`: a pointer to
the format string and one to a buffer (in the thread's local memory) that
holds the arguments one after the other, each at its natural alignment:
integer conversions take 4 bytes (`char` and `short` promoted to `int`), or 8
with `l`, `ll`, `z`, `j` or `t`; floating-point ones take 8 (`float` promoted
to `double`); `%s` and `%p` a pointer. The text goes to the sinks that want it
(an `on_print(text)` method, such as `DeviceOutput`), one call per printing
thread, in thread order within an instruction, as a GPU's printf buffer
holds it. Like a GPU's buffer (`cudaLimitPrintfFifoSize`, 1 MiB by default),
a launch's output stops growing at `MAX_OUTPUT_BYTES`: later calls print nothing.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from functools import partial

import numpy as np

MAX_OUTPUT_BYTES = 1 << 20
MAX_STRING_BYTES = 4096
"""The longest format or `%s` string read (a GPU's limit on one call is of the same order)."""

_SPEC = re.compile(rb"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|L|z|j|t)?([diouxXeEfFgGaAcspn%])")
_WIDE = {b"l", b"ll", b"z", b"j", b"t"}


def printf_handler(dec, args: list[str]):
    """The handler of a call to `vprintf(format, buffer)`, at `dec`'s instruction."""
    eng = dec.eng
    caller = dec.program.functions[dec.fn]
    format_slot, buffer_slot = (caller.params[a] for a in args[:2])
    printers = [s.on_print for s in eng.sinks if hasattr(s, "on_print")]
    nxt = dec.pc + 1
    printed = 0

    def vprintf(idx):
        nonlocal printed
        if not printers or printed >= MAX_OUTPUT_BYTES:
            return nxt
        formats = dec.state.param_buffer(format_slot)[idx, :8].copy().view(np.uint64)[:, 0]
        buffers = dec.state.param_buffer(buffer_slot)[idx, :8].copy().view(np.uint64)[:, 0]
        for g, fmt, buf in zip(idx.tolist(), formats.tolist(), buffers.tolist()):
            string_at = partial(eng.thread_string, g, limit=MAX_STRING_BYTES)
            text = format_text(string_at(fmt), _Arguments(partial(eng.thread_bytes, g), buf), string_at)
            printed += len(text.encode())
            if printed > MAX_OUTPUT_BYTES:
                break
            for on_print in printers:
                on_print(text)
        return nxt

    return vprintf


def format_text(fmt: bytes, arguments: _Arguments, string_at: Callable[[int], bytes]) -> str:
    """`fmt` with its conversions filled from `arguments`; `%s` strings are read with `string_at`."""
    out = []
    pos = 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos : m.start()].decode("utf-8", errors="replace"))
        pos = m.end()
        flags, width, precision, length, conv = m.groups()
        if conv == b"%":
            out.append("%")
            continue
        if width == b"*":
            width = str(arguments.signed(4)).encode()
        if precision == b"*":
            precision = str(max(arguments.signed(4), 0)).encode()
        spec = b"%" + flags + (width or b"") + (b"." + precision if precision is not None else b"")
        size = 8 if length in _WIDE else 4
        if conv in b"di":
            out.append((spec + b"d").decode() % arguments.signed(size))
        elif conv == b"o" and b"#" in flags:  # C's alternate octal form is a leading 0, Python's 0o
            value = arguments.unsigned(size)
            out.append((spec.replace(b"#", b"") + b"s").decode() % (f"0{value:o}" if value else "0"))
        elif conv in b"ouxX":
            out.append((spec + (b"d" if conv == b"u" else conv)).decode() % arguments.unsigned(size))
        elif conv == b"c":
            out.append((spec + b"c").decode() % chr(arguments.unsigned(4) & 0xFF))
        elif conv in b"aA":
            text = arguments.double().hex()
            out.append(text.upper() if conv == b"A" else text)
        elif conv in b"eEfFgG":
            out.append((spec + conv).decode() % arguments.double())
        elif conv == b"s":
            address = arguments.unsigned(8)
            text = string_at(address).decode("utf-8", errors="replace") if address else "(null)"
            out.append((spec + b"s").decode() % text)
        elif conv == b"p":
            out.append((spec + b"s").decode() % f"0x{arguments.unsigned(8):x}")
        else:  # %n writes nothing on a GPU
            arguments.unsigned(8)
    out.append(fmt[pos:].decode("utf-8", errors="replace"))
    return "".join(out)


class _Arguments:
    """The arguments of one call, read in order from its buffer (with `reads(address, n)`), each at its natural
    alignment."""

    def __init__(self, reads: Callable[[int, int], bytes], address: int):
        self.reads = reads
        self.address = address
        self.offset = 0

    def _take(self, size: int) -> bytes:
        self.offset = -(-self.offset // size) * size
        raw = self.reads(self.address + self.offset, size)
        self.offset += size
        return raw

    def signed(self, size: int) -> int:
        return int.from_bytes(self._take(size), "little", signed=True)

    def unsigned(self, size: int) -> int:
        return int.from_bytes(self._take(size), "little")

    def double(self) -> float:
        return struct.unpack("<d", self._take(8))[0]


class DeviceOutput:
    """An event sink that keeps what a launch printed, from its first run only (several schedules of a check
    each print the same; the program sees the first's). A launch simulated without a check never binds it."""

    name = "device-output"
    first_run_only = True  # forked schedules need not report to it (`sim.shared_prefix`)

    def __init__(self) -> None:
        self.parts: list[str] = []
        self._runs = 0

    def bind(self, ctx) -> None:
        self._runs += 1

    def on_event(self, ev) -> None:
        pass

    def on_print(self, text: str) -> None:
        if self._runs <= 1:
            self.parts.append(text)

    def text(self) -> str:
        return "".join(self.parts)
