"""Device-side printf formatting (`sim.printf.format_text`), conversion by conversion, from argument buffers
packed as nvcc packs them: each argument at its natural alignment."""

from __future__ import annotations

import struct

from gpurace.sim.printf import _Arguments, format_text


class Buffer:
    """A packed argument buffer at address 0x1000 and strings at 0x2000 on, read as `_Reader` reads memory."""

    def __init__(self, layout: str, *values, strings: dict[int, bytes] | None = None):
        self.data = bytearray()
        for code, value in zip(layout, values):
            size = struct.calcsize("<" + code)
            self.data += bytes(-len(self.data) % size) + struct.pack("<" + code, value)
        self.strings = strings or {}

    def bytes(self, address: int, n: int) -> bytes:
        offset = address - 0x1000
        return bytes(self.data[offset : offset + n]).ljust(n, b"\0")

    def string(self, address: int) -> bytes:
        return self.strings[address]


def show(fmt: bytes, layout: str, *values, strings=None) -> str:
    buffer = Buffer(layout, *values, strings=strings)
    return format_text(fmt, _Arguments(buffer.bytes, 0x1000), buffer.string)


def test_integers_take_four_bytes_and_long_ones_eight_at_their_alignment():
    assert show(b"%d %u %ld %lld|", "iIqq", -3, 4000000000, -5, 1 << 40) == f"-3 4000000000 -5 {1 << 40}|"
    assert show(b"%hhd %hd %zu", "iiQ", 65, -2, 7) == "65 -2 7"  # char and short are promoted to int


def test_flags_width_and_precision_as_in_c():
    assert show(b"[%5d][%-5d][%05d][%+d][% d]", "iiiii", 42, 42, 42, 42, 42) == "[   42][42   ][00042][+42][ 42]"
    assert show(b"%#x %X %o %#o", "IIII", 255, 255, 8, 8) == "0xff FF 10 010"
    assert show(b"[%*d][%.*f]", "iiid", 4, 7, 2, 3.14159) == "[   7][3.14]"


def test_floating_point_arguments_are_doubles():
    assert show(b"%f %.3e %g %G", "dddd", 1.5, 12345.678, 0.0001, 1e20) == "1.500000 1.235e+04 0.0001 1E+20"
    assert show(b"%a", "d", 1.0) == (1.0).hex()


def test_characters_strings_pointers_and_percent():
    strings = {0x2000: b"gpurace"}
    assert show(b"%c%c|%s|%8s|%%", "iiQQ", 72, 105, 0x2000, 0x2000, strings=strings) == "Hi|gpurace| gpurace|%"
    assert show(b"%s %p", "QQ", 0, 0xABC) == "(null) 0xabc"


def test_text_without_conversions_and_unknown_percent_sequences_pass_through():
    assert show(b"plain text\n", "") == "plain text\n"
    assert show(b"100%!", "") == "100%!"
