"""The program's process: started with gpurace's runtime, its output passed through (or kept), its end awaited.

The program runs with no shell, its own arguments, the descriptors of the
device server's socket and the arenas, and gpurace's `libcudart.so.13`
first on `LD_LIBRARY_PATH`. Its stdout and stderr are the user's, unchanged,
unless the caller captures them. stderr always goes through a pipe that this
module copies on, because the dynamic linker writes there when the program
calls a CUDA function that no runtime defines ("symbol lookup error: ...
undefined symbol: cudaXxx"): `missing_symbols` lists those calls.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

from gpurace.limits import restore_user_address_space

_UNDEFINED_SYMBOL_RE = re.compile(rb"undefined symbol: (\w+)")
_TAIL_BYTES = 4096


class Program:
    """A started program; `wait()` for its exit status, then read `stdout`/`stderr` (when captured)."""

    def __init__(self, executable: Path, args: list[str], env: dict[str, str], pass_fds: tuple[int, ...], capture: bool):
        sys.stdout.flush()
        sys.stderr.flush()
        self.capture = capture
        self._stdout: list[bytes] = []
        self._stderr: list[bytes] = []
        self._tail = b""
        self.missing_symbols: list[str] = []
        self._proc = subprocess.Popen(
            [str(executable), *args],
            env=env,
            pass_fds=pass_fds,
            stdout=subprocess.PIPE if capture else None,
            stderr=subprocess.PIPE,
            preexec_fn=restore_user_address_space,  # the program's memory is its own, not gpurace's budget
        )
        self._threads = [threading.Thread(target=self._pump_stderr, daemon=True)]
        if capture:
            self._threads.append(threading.Thread(target=self._pump_stdout, daemon=True))
        for t in self._threads:
            t.start()

    def wait(self, timeout: float | None = None) -> int:
        """The exit status (128 + N when signal N ended it), once the program and its output have ended."""
        code = self._proc.wait(timeout)
        for t in self._threads:
            t.join()
        self._scan(b"\n")  # the last line, if it had no line break
        return 128 - code if code < 0 else code

    def kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGKILL)

    @property
    def stdout(self) -> str | None:
        return b"".join(self._stdout).decode(errors="replace") if self.capture else None

    @property
    def stderr(self) -> str | None:
        return b"".join(self._stderr).decode(errors="replace") if self.capture else None

    def _pump_stdout(self) -> None:
        for chunk in iter(lambda: os.read(self._proc.stdout.fileno(), 65536), b""):
            self._stdout.append(chunk)

    def _pump_stderr(self) -> None:
        for chunk in iter(lambda: os.read(self._proc.stderr.fileno(), 65536), b""):
            if self.capture:
                self._stderr.append(chunk)
            else:
                _write_all(sys.stderr.fileno(), chunk)
            self._scan(chunk)

    def _scan(self, chunk: bytes) -> None:
        """Note the calls the dynamic linker found no definition of (the text may straddle two chunks)."""
        text = self._tail + chunk
        *lines, self._tail = text.split(b"\n")
        self._tail = self._tail[-_TAIL_BYTES:]
        for line in lines:
            m = _UNDEFINED_SYMBOL_RE.search(line)
            if m:
                self.missing_symbols.append(m.group(1).decode())


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
