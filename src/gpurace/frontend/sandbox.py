"""Running a compiler on an untrusted kernel file: no shell, bounded memory and time.

nvcc runs its sub-tools (the preprocessor, cicc, ptxas) through a shell and
does not quote what it hands them, so a file name, an include directory or a
macro value that a shell can reinterpret (`$(...)`, backticks, `;`, spaces)
becomes a command. gpurace therefore gives nvcc only paths made of
characters no shell treats specially (`SHELL_SAFE`): other paths are reached
through symbolic links with safe names in a private directory
(`CompilerDir`), and macros never reach the command line at all: they are
written as `#define` lines of a header in that directory, which the compiler
pre-includes. A kernel file is data, and stays data.

A kernel file can also make a compiler use unbounded memory or time
(`#include "/dev/zero"`). nvcc runs as a child process with the memory
budget as its address-space limit, in its own process group, which is killed
whole when the time limit passes (`run_limited`). NVRTC is a library, so it
runs in a forked child of gpurace with the same limits (`call_limited`):
its failure is a message, never gpurace's own death.
"""

from __future__ import annotations

import os
import pickle
import re
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, TypeVar

from gpurace.errors import CompileError, UserError
from gpurace.frontend.ptx.debuginfo import unquote
from gpurace.limits import Limits, format_size

SHELL_SAFE = re.compile(r"^[A-Za-z0-9_./+-]+$")
"""Path characters that no POSIX shell interprets (no spaces, quotes, `$`, backticks, globs or separators)."""

COMPILE_TIMEOUT_S = 300.0
"""The longest one compile may take when the command's own time budget is longer or unlimited."""

COMPILER_BASE_BYTES = 1 << 30
"""Address space a compiler maps for its own code and libraries, allowed on top of the memory budget."""

T = TypeVar("T")


def shell_safe(path: str | os.PathLike) -> bool:
    return SHELL_SAFE.match(str(path)) is not None and not str(path).startswith("-")


def c_string(text: str) -> str:
    """`text` as a C string literal (for `#line`), whatever characters it holds."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\{ord(c):03o}" for c in escaped) + '"'


class CompilerDir:
    """A private temporary directory whose every path is shell-safe, removed on exit."""

    def __init__(self) -> None:
        self.root: Path | None = None
        self.links: dict[str, str] = {}  # safe link -> the path it leads to

    def __enter__(self) -> CompilerDir:
        self.root = Path(tempfile.mkdtemp(prefix="gpurace-"))  # mode 0700: nobody else can plant files
        if not shell_safe(self.root):
            shutil.rmtree(self.root, ignore_errors=True)
            raise UserError(
                f"the temporary directory {self.root.parent} has characters a shell would interpret in its path; "
                "set TMPDIR to a plain path such as /tmp"
            )
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def reach(self, path: str | os.PathLike) -> str:
        """`path` itself when it is shell-safe, else a safe symbolic link in this directory that leads to it."""
        if shell_safe(path):
            return str(path)
        link = self.root / f"link{len(self.links) + 1}"
        link.symlink_to(Path(path).resolve())
        self.links[str(link)] = str(Path(path).resolve())
        return str(link)

    def restore_paths(self, ptx: str) -> str:
        """PTX whose `.file` table names the paths the links stand for, so reports name the user's files."""
        if not self.links:
            return ptx

        def restore(m: re.Match) -> str:
            path = unquote(m.group(2))
            for link, original in self.links.items():
                if path.startswith(link + "/"):
                    return m.group(1) + c_string(original + path[len(link) :])
            return m.group(0)

        return _FILE_DIRECTIVE.sub(restore, ptx)

    def write(self, name: str, text: str) -> str:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return str(path)


_FILE_DIRECTIVE = re.compile(r'^(\s*\.file\s+\d+\s+)("(?:[^"\\\n]|\\.)*")', re.MULTILINE)


def defines_header(macros: list[str]) -> str:
    """`NAME` / `NAME=VALUE` options as the `#define` lines they mean to a compiler."""
    lines = []
    for m in macros:
        name, _, value = m.partition("=")
        lines.append(f"#define {name} {value if '=' in m else '1'}")
    return "".join(line + "\n" for line in lines)


def mapped_bytes() -> int:
    """Address space this process maps now (the first field of /proc/self/statm, in pages)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _limit_child(max_memory: int) -> None:
    """In a compiler's process: the memory budget as address-space and file-size limits, no core dumps.

    The address space may grow by the budget, plus what a compiler maps for itself, beyond what the
    process maps already (a forked child starts with all of gpurace's mappings)."""
    space = mapped_bytes() + max_memory + COMPILER_BASE_BYTES
    for which, value in ((resource.RLIMIT_AS, space), (resource.RLIMIT_FSIZE, max_memory), (resource.RLIMIT_CORE, 0)):
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, hard))


def compile_timeout(limits: Limits) -> float:
    """Seconds one compile may take: `COMPILE_TIMEOUT_S`, or less when the command's deadline is nearer."""
    if limits.deadline is None:
        return COMPILE_TIMEOUT_S
    return max(0.0, min(COMPILE_TIMEOUT_S, limits.deadline - time.monotonic()))


def _over_budget(what: str, limits: Limits, seconds: float | None = None) -> CompileError:
    if seconds is not None:
        return CompileError(f"{what} took longer than {seconds:.0f} s, the compile's time limit (--timeout)")
    return CompileError(
        f"{what} ran out of memory: a compile may use {format_size(limits.max_memory)} (--max-memory)"
    )


def run_limited(cmd: list[str], limits: Limits, what: str) -> subprocess.CompletedProcess:
    """Run `cmd` (no shell) within the memory budget and the compile timeout; its output captured as text."""
    timeout = compile_timeout(limits)
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
            preexec_fn=lambda: _limit_child(limits.max_memory),
        )
    except OSError as e:
        raise CompileError(f"{what}: could not run {cmd[0]}: {e.strerror}") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise _over_budget(what, limits, timeout) from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def call_limited(fn: Callable[[], T], limits: Limits, what: str) -> T:
    """`fn()` run in a forked child within the memory budget and the compile timeout.

    The child sends back (pickled) its result, the UserError it raised, or
    how it failed otherwise, so that the message says what happened: a
    MemoryError is the memory budget's overrun, a child that outlives the
    timeout (killed) the time limit's, both CompileErrors naming `what`. Any
    other exception in `fn` is a bug of gpurace's and raised again here as
    `ChildError` (internal, exit 3); `fn` that runs a user's code turns that
    code's failures into UserErrors itself. A child that ends without an
    answer (`os._exit`, a signal: a crash in native code, or a kill) is a
    UserError saying its exit status or signal, not a guess at the cause.
    """
    timeout = compile_timeout(limits)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 0
        try:
            os.close(read_end)
            _limit_child(limits.max_memory)
            try:
                payload = pickle.dumps(("ok", fn()))
            except UserError as e:
                payload = pickle.dumps(("error", e))
            except MemoryError:
                payload = pickle.dumps(("memory", None))
            except BaseException as e:
                payload = pickle.dumps(("crash", _describe_crash(e)))
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        data = _read_until(read_end, time.monotonic() + timeout)
    finally:
        os.close(read_end)
    if data is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise _over_budget(what, limits, timeout)
    _, status = os.waitpid(pid, 0)
    if not data or status != 0:
        hint = ""
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGABRT:  # what C++ does when an allocation fails
            hint = f"; native code that outgrows the memory budget ({format_size(limits.max_memory)}, --max-memory) ends so"
        raise UserError(f"{what}: the child process that ran it {_ended(status)} before it finished{hint}")
    kind, value = pickle.loads(data)
    if kind == "error":
        raise value
    if kind == "memory":
        raise _over_budget(what, limits)
    if kind == "crash":
        raise ChildError(f"{what}: {value}")
    return value


class ChildError(RuntimeError):
    """An exception that gpurace's own code raised in a `call_limited` child: a bug, reported as internal."""


def _describe_crash(error: BaseException) -> str:
    """`error` as the parent reports it: type, message and the line that raised it."""
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return f"{type(error).__name__} ({error}){where} in the child process"


def _ended(status: int) -> str:
    """How a child with wait status `status` ended: "exited with status 4", "was killed by signal 11 (SIGSEGV)"."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = f" ({signal.Signals(number).name})"
        except ValueError:
            name = ""
        return f"was killed by signal {number}{name}"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Everything written to pipe `fd` until it closes, or None when `deadline` passes first."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
