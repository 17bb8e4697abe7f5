"""Host call sites: where in the program's source a CUDA call was made.

The shim sends each call's stack, as link-time return addresses of the
object files that hold them (`protocol.WireSite`). Findings need a source
line, so `SourceLines` asks `addr2line` about the call instruction (the byte
before each return address) in the program's debug information (`build.py`
compiles host code with `-g`), with the chain of functions inlined there,
and takes the innermost position that is in the user's code rather than in
a library header (`is_library_file`, as for device code): a `cudaMalloc`
through the toolkit's `cudaMalloc<T>` wrapper is reported at the line that
calls the wrapper. Addresses are looked up only when a finding or a launch
needs them, and each once.

A host site becomes a `Site` of the finding model with no thread: `thread`
and `block` are None, `warp`, `lane` and `pc` -1, `op` the call's name and
`function` the host function that made it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from gpurace.detect.findings import Site
from gpurace.frontend.ptx.debuginfo import display_path, is_library_file
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.runtime.protocol import WireSite

ADDR2LINE_TIMEOUT_S = 60.0

_LOCATION_RE = re.compile(r"^(?P<file>.*):(?P<line>\d+)(?: \(discriminator \d+\))?$")

Position = tuple[str, SourceLoc | None]
"""One level of an inlining chain: the function (demangled, "" when unknown) and its source line, if known."""


def at_where(where: str) -> str:
    """A `HostFrame.where()` as causes say it: `at app.cu:12` for a source line, `in main` for a function only,
    "" when nothing is known."""
    return f"at {where}" if where and not where.startswith("in ") else where


@dataclass(frozen=True)
class HostFrame:
    """A call site resolved: the calling function (demangled) and the source line, when debug information has them."""

    call: str
    function: str
    loc: SourceLoc | None

    def where(self) -> str:
        """`prog.cu:12` (the path as reports write it, `debuginfo.display_path`), or `in main` when only the
        function is known, or "" when nothing is."""
        if self.loc is not None:
            return f"{display_path(self.loc.file)}:{self.loc.line}"
        return f"in {self.function}" if self.function else ""

    def site(self) -> Site:
        """This call as a finding's `Site` (no thread: it ran on the host)."""
        return Site(
            pc=-1,
            thread=None,
            block=None,
            warp=-1,
            lane=-1,
            op=self.call,
            scope=None,
            loc=self.loc,
            instruction=self.call,
            function=self.function,
        )


_SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")


def _system_object(path: str) -> bool:
    """Whether object file `path` is one of the system's libraries (libc, libstdc++, ...)."""
    return path.startswith(_SYSTEM_DIRS)


def _compiler_file(path: str) -> bool:
    """Whether `path` is one of nvcc's intermediate files (`/tmp/tmpxft_..._app.cudafe1.cpp`): the debug
    information of some inline and template host functions points there rather than at the user's source,
    whose line it does not give; the frame that called them is the user's."""
    name = os.path.basename(path)
    return name.startswith("tmpxft_") and ".cudafe1." in name


class SourceLines:
    """Turns wire sites into `HostFrame`s with `addr2line`, remembering each address's answer.

    `paths` maps paths the compiler saw (shell-safe links, see `sandbox.CompilerDir`) back to the user's.
    """

    def __init__(self, paths: dict[str, str] | None = None):
        self._paths = dict(paths or {})
        self._cache: dict[tuple[str, int], list[Position]] = {}
        self._addr2line = shutil.which("addr2line")

    def frame(self, site: WireSite) -> HostFrame:
        """The innermost position of `site`'s stack in the user's code (else the innermost known one). Frames
        in the system's libraries (libc calling `main`, a `memcpy` the program called) are left out: they are
        never the user's code, even when their line information is installed."""
        fallback: Position | None = None
        for address, path in site.frames:
            if _system_object(path):
                continue
            for function, loc in self._positions(path, address):
                if loc is not None and not is_library_file(loc.file) and not _compiler_file(loc.file):
                    return HostFrame(site.call, function, loc)
                fallback = fallback or (function, loc)
        function, loc = fallback or ("", None)
        return HostFrame(site.call, function, loc)

    def _positions(self, path: str, address: int) -> list[Position]:
        key = (path, address)
        if key not in self._cache:
            self._cache[key] = self._lookup(path, address)
        return self._cache[key]

    def _lookup(self, path: str, address: int) -> list[Position]:
        """The inlining chain at the call before `address` in object `path`, innermost first."""
        if not (path and address and self._addr2line):
            return []
        cmd = [self._addr2line, "-f", "-C", "-i", "-e", path, f"0x{address - 1:x}"]
        try:
            out = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", timeout=ADDR2LINE_TIMEOUT_S
            ).stdout.splitlines()
        except (OSError, subprocess.TimeoutExpired):
            return []
        positions = []
        for function, location in zip(out[0::2], out[1::2]):
            m = _LOCATION_RE.match(location.strip())
            known = m is not None and m["file"] != "??" and m["line"] != "0"
            loc = SourceLoc(self._restore(m["file"]), int(m["line"])) if known else None
            positions.append(("" if function.strip() == "??" else function.strip(), loc))
        return positions

    def _restore(self, path: str) -> str:
        for link, original in self._paths.items():
            if path == link or path.startswith(link + "/"):
                return original + path[len(link) :]
        return path
