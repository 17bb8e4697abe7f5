"""Source positions: `.file`, `.loc` and the `.debug_str` section.

nvcc writes the `.file` table and the DWARF sections *after* the functions
whose `.loc` lines refer to them, so the parser reads them in a first pass
(`read_debug_tables`) and resolves every `.loc` while it parses the bodies.
The other DWARF sections (`.debug_info`, `.debug_abbrev`, `.debug_loc`, ...)
are skipped: source lines come from `.loc`, which `-lineinfo` and `-G` both emit.

A `.loc` inside a function inlined from a library header (libcu++'s
`cuda::atomic_ref`, `atomicAdd` in the toolkit's headers) points into that
header; `user_frame_index` finds the frame of its inlining chain in the user's
own files, which is where reports lead and findings are told apart. Reports
and messages write a source file's path relative to the current directory
when the file lies below it and absolute otherwise (`display_path`).
"""

from __future__ import annotations

import os
import re
import stat
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

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
    path = unquote(path_tok[1])
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


def unquote(text: str) -> str:
    """The string a quoted PTX string token (`"a\\"b"`, with its quotes) stands for."""
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


# nvcc puts internal-linkage functions of a translation unit in a namespace named after a hash of its path.
_INTERNAL_NAMESPACE = re.compile(r"\b_INTERNAL_[0-9a-f]+_\w*::")


@lru_cache(maxsize=4096)
def _demangle(name: str) -> str:
    """The demangled C++ name, or `name` itself when it is not a valid mangled name.

    nvcc's `_INTERNAL_<hash>_..._cu_...::` namespace is dropped: it says nothing
    a reader needs, and its hash changes with the directory a file is compiled
    in, which would make the same kernel's reports differ between checkouts.
    """
    try:
        return _INTERNAL_NAMESPACE.sub("", cxxfilt.demangle(name))
    except (cxxfilt.Error, UnicodeError):
        return name


# --------------------------------------------------------------------------
# Library headers and the user's own files
# --------------------------------------------------------------------------

SYSTEM_INCLUDE_DIRS = ("/usr/include", "/usr/local/include", "/usr/lib", "/opt/nvidia")
"""Directories of the C/C++ system headers (and the NVIDIA HPC SDK), on top of the toolkit's and Python's."""

TOOLKIT_MARKER = "cuda_runtime_api.h"
"""A file every CUDA toolkit's `include` directory holds, wherever the toolkit is installed."""

NVRTC_BUILTIN_HEADER = "__nv_nvrtc_builtin_header"
"""The name NVRTC gives, in line information, to the toolkit headers built into it."""

_GPURACE_DIR = Path(__file__).resolve().parents[2]  # gpurace's own headers (its GPUVerify cuda.h) live in it


def user_frame_index(chain: Sequence[SourceLoc]) -> int:
    """The index, in an inlining chain (`SourceLoc.chain()`, innermost first), of the user's frame.

    A race inside `cuda::atomic_ref::fetch_add` is fixed at the line of the
    user's code that calls it, and two such lines are two bugs even though
    the racing instruction has the same header position for both. So the
    user's frame is the innermost frame in a file that is not a library
    header (`is_library_file`); 0 when every frame is in one.
    """
    return next((i for i, frame in enumerate(chain) if not is_library_file(frame.file)), 0)


def user_frame(loc: SourceLoc) -> SourceLoc:
    """The frame of `loc`'s inlining chain that a report leads with (see `user_frame_index`)."""
    chain = loc.chain()
    return chain[user_frame_index(chain)]


@lru_cache(maxsize=1024)
def is_library_file(path: str) -> bool:
    """True for a header the user did not write: the CUDA toolkit's (found by `TOOLKIT_MARKER` in an `include`
    directory above it, so any install location counts), HIP's (in a `hip` folder that has `hip_runtime.h`,
    wherever HIP's headers are), the system's, an installed Python package's or gpurace's.
    A relative name is taken relative to the current directory, as reports write paths below it.
    """
    if os.path.basename(path).startswith(NVRTC_BUILTIN_HEADER):  # NVRTC's own headers (textures, atomics, ...)
        return True
    try:
        real = os.path.realpath(path)
        if any(real.startswith(root) for root in _library_roots()):
            return True
        return any(
            (p.name == "include" and (p / TOOLKIT_MARKER).is_file()) or (p.name == "hip" and (p / "hip_runtime.h").is_file())
            for p in Path(real).parents
        )
    except (OSError, ValueError):  # a name no file can have (a NUL byte, too long): not a header on this machine
        return False


@lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """The directories whose files are library headers, resolved and ending in a separator."""
    python = sysconfig.get_paths()
    roots = [*SYSTEM_INCLUDE_DIRS, str(_GPURACE_DIR)]
    roots += [python[k] for k in ("stdlib", "platstdlib", "purelib", "platlib", "include", "platinclude") if k in python]
    roots += [os.environ[v] for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots)


# --------------------------------------------------------------------------
# How a source file is written
# --------------------------------------------------------------------------


MAX_SOURCE_BYTES = 64 << 20
"""The largest source file read to show lines or find parameter names."""


def read_named_source(name: str, checked: str | None = None) -> str | None:
    """The text of the source file line information names (`resolve_source`), or None when it is not a regular
    file of at most MAX_SOURCE_BYTES or cannot be read. Line information is untrusted input: a crafted `.file`
    may name a device (`/dev/zero`) or a huge file, which must not hang or exhaust the report."""
    path = resolve_source(name, checked)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(info.st_size)  # not MAX_SOURCE_BYTES: a read sets aside a buffer of the size asked
    except OSError:
        return None


def resolve_source(name: str, checked: str | None = None) -> str:
    """The file a `.loc` name means: absolute names as they are; a relative name found in the current directory
    or next to the checked file (`checked`), in that order, made absolute; any other name as written.

    A relative name (`.file 1 "k.cu"`, as `nvcc -ptx k.cu` writes it) is
    relative to where the compiler ran, usually the checked file's directory.
    """
    if os.path.isabs(name):
        return name
    candidates = [name] + ([os.path.join(os.path.dirname(checked), name)] if checked else [])
    return next((os.path.abspath(c) for c in candidates if os.path.isfile(c)), name)


def display_path(path: str, checked: str | None = None) -> str:
    """`path` as every report and message writes it: relative to the current directory when the file lies below
    it, else absolute; a relative name that `resolve_source` cannot find stays as written (its base is unknown).

    One convention for text, JSON and SARIF, and one that depends only on the
    input and the current directory, so one check run twice writes the same report.
    """
    return _display_path(path, checked, os.getcwd())


@lru_cache(maxsize=4096)
def _display_path(path: str, checked: str | None, cwd: str) -> str:
    """`display_path` in `cwd`, remembered: detectors name positions in messages for many threads."""
    resolved = resolve_source(path, checked)
    if not os.path.isabs(resolved):
        return resolved
    # The cwd may be reached through a symbolic link that the compiler's path does not take, or the reverse.
    for candidate, base in ((os.path.normpath(resolved), cwd), (os.path.realpath(resolved), os.path.realpath(cwd))):
        rel = os.path.relpath(candidate, base)
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            return rel
    return os.path.normpath(resolved)
