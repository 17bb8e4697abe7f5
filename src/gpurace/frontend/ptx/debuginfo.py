"""Source positions: `.file`, `.loc` and the `.debug_str` section.

nvcc writes the `.file` table and the DWARF sections *after* the functions
whose `.loc` lines refer to them, so the parser reads them in a first pass
(`read_debug_tables`) and resolves every `.loc` while it parses the bodies.
The other DWARF sections (`.debug_info`, `.debug_abbrev`, `.debug_loc`, ...)
are skipped: source lines come from `.loc`, which `-lineinfo` and `-G` both emit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import cxxfilt

from gpurace.frontend.ptx.cursor import Cursor, describe, int_value
from gpurace.frontend.ptx.ir import SourceLoc

_DATA_WIDTHS = {".b8": 1, ".b16": 2, ".b32": 4, ".b64": 8}


@dataclass
class DebugTables:
    """The `.file` table and the bytes of `.debug_str`, with the offset of each label in it."""

    files: dict[int, str] = field(default_factory=dict)
    strings: bytearray = field(default_factory=bytearray)
    string_labels: dict[str, int] = field(default_factory=dict)

    def string_at(self, label: str, offset: int) -> str | None:
        """The NUL-terminated string at `label+offset` in `.debug_str`, or None if there is no such label."""
        start = self.string_labels.get(label)
        if start is None:
            return None
        start += offset
        if not 0 <= start < len(self.strings):
            return None
        end = self.strings.find(0, start)
        raw = self.strings[start : end if end >= 0 else len(self.strings)]
        return raw.decode("utf-8", errors="replace")


def read_debug_tables(cur: Cursor) -> DebugTables:
    """Read every `.file` directive and the `.debug_str` section, wherever they are; the cursor is restored."""
    tables = DebugTables()
    saved = cur.i
    tokens = cur.tokens
    starts = [i for i, tok in enumerate(tokens) if tok[1] in (".file", ".section") and tok[0] == "dir"]
    for index in starts:
        if index < cur.i:
            continue  # inside a section already read
        cur.i = index
        if tokens[index][1] == ".file":
            read_file_directive(cur, tables)
        else:
            read_section(cur, tables)
    cur.i = saved
    return tables


def read_file_directive(cur: Cursor, tables: DebugTables) -> None:
    """`.file 1 "path"` or `.file 1 "path", timestamp, size`."""
    start = cur.take()
    index = cur.integer("a file number")
    path_tok = cur.expect_kind("str", "a quoted file name")
    path = _unquote(path_tok[1])
    if cur.accept(","):
        cur.integer("a timestamp")
        cur.expect(",", "',' before the file size")
        cur.integer("a file size")
    known = tables.files.setdefault(index, path)
    if known != path:
        raise cur.error(f".file {index} names both {known!r} and {path!r}", start)


def read_section(cur: Cursor, tables: DebugTables) -> None:
    """`.section NAME { ... }`: keeps the bytes of `.debug_str`, skips every other section's contents."""
    cur.take()
    name = cur.expect_kind("dir", "a section name")[1]
    cur.expect("{", "'{' opening the section")
    if name == ".debug_str":
        _read_strings(cur, tables)
        return
    depth = 1
    while depth:
        tok = cur.take()
        if tok[0] == "eof":
            raise cur.error(f"section {name} is not closed before the end of the file", tok)
        if tok[0] == "punct":
            depth += tok[1] == "{"
            depth -= tok[1] == "}"


def _read_strings(cur: Cursor, tables: DebugTables) -> None:
    """Labels and `.bN` data lines of `.debug_str`, appended to `tables.strings` (little-endian)."""
    blob = tables.strings
    while True:
        tok = cur.take()
        if tok[1] == "}" and tok[0] == "punct":
            return
        if tok[0] == "word" and cur.accept(":"):
            tables.string_labels[tok[1]] = len(blob)
            continue
        width = _DATA_WIDTHS.get(tok[1]) if tok[0] == "dir" else None
        if width is None:
            raise cur.error(f"unexpected {describe(tok)} in section .debug_str", tok)
        while True:
            value_tok = cur.take()
            if value_tok[0] == "int":
                value = int_value(value_tok, cur) & ((1 << (8 * width)) - 1)
            elif value_tok[0] == "word":
                value = 0  # a symbol's address: only a placeholder of the right width matters here
            else:
                raise cur.error(f"expected a value in section .debug_str, found {describe(value_tok)}", value_tok)
            blob += value.to_bytes(width, "little")
            if not cur.accept(","):
                break


def _unquote(text: str) -> str:
    body = text[1:-1]
    if "\\" not in body:
        return body
    return body.encode("latin-1", errors="backslashreplace").decode("unicode_escape", errors="replace")


class LocReader:
    """Turns `.loc` directives of one function into SourceLocs with their inlining chains.

    `inlined_at F L C` gives only the call site's position; the call site's own
    context (the function it is in, where *that* was inlined) is the most
    recent `.loc` at that position, which LLVM always emits first. So each
    location is remembered by position for the lookups of later ones.
    """

    def __init__(self, tables: DebugTables):
        self.tables = tables
        self._by_position: dict[tuple[str, int, int], SourceLoc] = {}

    def read(self, cur: Cursor) -> SourceLoc:
        """Parse `.loc F L C [, function_name LABEL[+OFF], inlined_at F L C]` (cursor on `.loc`)."""
        cur.take()
        file, line, column = self._position(cur)
        function = None
        inlined_at = None
        while cur.accept(","):
            key = cur.expect_kind("word", "function_name or inlined_at after ',' in .loc")
            if key[1] == "function_name":
                label = cur.expect_kind("word", "a label after function_name")[1]
                offset = cur.integer("an offset") if cur.accept("+") else 0
                text = self.tables.string_at(label, offset)
                function = _demangle(text) if text is not None else label
            elif key[1] == "inlined_at":
                at = self._position(cur)
                inlined_at = self._by_position.get(at) or SourceLoc(*at)
            else:
                raise cur.error(f"unknown .loc attribute {key[1]!r}", key)
        loc = SourceLoc(file, line, column, inlined_at, function)
        self._by_position[(file, line, column)] = loc
        return loc

    def _position(self, cur: Cursor) -> tuple[str, int, int]:
        tok = cur.peek()
        index = cur.integer("a file number")
        path = self.tables.files.get(index)
        if path is None:
            raise cur.error(f".loc names file {index}, which no .file directive declares", tok)
        return path, cur.integer("a line number"), cur.integer("a column number")


@lru_cache(maxsize=4096)
def _demangle(name: str) -> str:
    """The demangled C++ name, or `name` itself when it is not a valid mangled name."""
    try:
        return cxxfilt.demangle(name)
    except (cxxfilt.Error, UnicodeError):
        return name
