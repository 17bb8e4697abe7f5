"""The bounds every run of gpurace stays within, checked before the work they bound starts.

Kernel files, traces and arguments are untrusted input: a launch of a billion
threads, a register declaration of a hundred million registers, a spin loop
that never ends or a recursion without a base case must end in a clear
message or finding, never in an out-of-memory kill or a run that does not
stop. One `Limits` value carries the bounds through the pipeline:

* `max_threads`: threads of one launch (grid x block), on top of what the
  architecture allows (`gpurace.sim.geometry` checks those);
* `max_memory`: bytes gpurace itself may allocate; estimates of the large
  allocations (registers, shared and local memory, buffers) are checked
  against it before a launch starts, and the command line also makes it the
  process's address-space limit, so any allocation past it fails and is
  reported (`gpurace.cli`);
* `timeout`: seconds of wall-clock time for a whole command (every schedule
  and candidate input together); a simulation still running when it is
  spent ends with a `timeout` finding;
* `max_call_depth`: nested calls per thread; deeper recursion ends the run
  with a `stack-overflow` finding;
* `resident_threads`: threads simulated at once; a larger launch runs in
  waves of whole blocks (`gpurace.sim.waves`), so that its memory is that of
  one wave, not of the whole grid.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field, replace

from gpurace.errors import UserError

DEFAULT_MAX_THREADS = 1 << 24
"""16,777,216 threads: the largest launch gpurace is measured on."""

DEFAULT_RESIDENT_THREADS = 1 << 20
"""1,048,576 threads at once: about four times what the largest GPUs hold resident, and as many as one NumPy
operation runs at full speed."""

DEFAULT_TIMEOUT_S = 300.0
EXEC_TIMEOUT_S = 3600.0
"""`gpurace exec`'s default: a whole program makes many launches at the sizes it really runs (a molecular-dynamics
benchmark's usual command line takes about nine minutes here), so it gets an hour where one launch gets five
minutes."""
DEFAULT_MAX_CALL_DEPTH = 1024
MAX_MEMORY_FRACTION = 0.5
"""The default memory budget is this fraction of the machine's physical memory."""

MAX_REGISTERS_PER_DECLARATION = 1 << 16
"""`.reg .b32 %r<N>`: compilers declare a few thousand at most; more is not a real kernel."""

MAX_REGISTERS_PER_KERNEL = 1 << 18
"""Registers of a kernel and the functions it calls together; each costs bookkeeping whatever the launch size."""


def physical_memory() -> int:
    """Bytes of physical memory of this machine."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def default_max_memory() -> int:
    return int(physical_memory() * MAX_MEMORY_FRACTION)


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str, what: str) -> int:
    """`4096`, `512M`, `12G`, `1.5GiB` -> bytes (powers of 1024); anything else is a UserError naming `what`."""
    m = _SIZE_RE.match(text)
    if not m:
        raise UserError(f"{what} {text!r}: expected a size in bytes such as 8G, 512M or 1048576")
    value = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if value <= 0:
        raise UserError(f"{what} {text!r}: must be positive")
    return value


def format_size(nbytes: int) -> str:
    """Bytes in the largest binary unit that keeps one decimal: `12.0 GiB`, `512 bytes`, `1 byte`.

    Inputs can ask for any size (`buf:1e400`-like counts, `.npy` headers), so
    sizes too large for a float are shown as whole PiB, exactly.
    """
    if nbytes < 1024:
        return f"{nbytes} byte" + ("" if nbytes == 1 else "s")
    for power, unit in enumerate(("KiB", "MiB", "GiB", "TiB", "PiB"), 1):
        scale = 1024**power
        if nbytes < 1024 * scale or unit == "PiB":
            break
    if nbytes // scale >= 1 << 53:
        return f"{nbytes // scale:,} {unit}"
    return f"{nbytes / scale:.1f} {unit}"


class LimitExceeded(UserError):
    """An input asks for more than a limit allows; the message names the input, the limit and its option."""


@dataclass(frozen=True)
class Limits:
    """The bounds of one command; `deadline` is set by `started()` when its clock starts."""

    max_threads: int = DEFAULT_MAX_THREADS
    max_memory: int = field(default_factory=default_max_memory)
    timeout: float | None = DEFAULT_TIMEOUT_S
    max_call_depth: int = DEFAULT_MAX_CALL_DEPTH
    resident_threads: int = DEFAULT_RESIDENT_THREADS
    deadline: float | None = None

    def started(self) -> Limits:
        """These limits with the wall-clock deadline fixed (once: a started value is returned as it is)."""
        if self.deadline is not None or not self.timeout:
            return self
        return replace(self, deadline=time.monotonic() + self.timeout)

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def check_threads(self, nthreads: int, what: str) -> None:
        if nthreads > self.max_threads:
            raise LimitExceeded(
                f"{what}: {nthreads:,} threads are more than gpurace simulates ({self.max_threads:,}, "
                "its own limit: --max-threads raises it)"
            )

    def check_memory(self, nbytes: int, what: str) -> None:
        """A UserError when an allocation of `nbytes` for `what` would not fit the memory budget."""
        if nbytes > self.max_memory:
            raise LimitExceeded(
                f"{what} needs {format_size(nbytes)}, more than the memory budget of "
                f"{format_size(self.max_memory)} (--max-memory)"
            )


_user_address_limit: int | None = None
"""The address-space limit the user's shell gave gpurace, before `limit_address_space` lowered it."""


def limit_address_space(max_memory: int, mapped: int) -> None:
    """Let this process's address space grow by at most `max_memory` beyond the `mapped` bytes it maps now.

    Any allocation past it fails with MemoryError, which the command line reports as a clear error. Only
    a process of gpurace's own may do this (`gpurace.cli.main`): rlimits are the whole process's.
    """
    import resource

    global _user_address_limit
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if _user_address_limit is None:
        _user_address_limit = soft
    want = mapped + max_memory
    resource.setrlimit(resource.RLIMIT_AS, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))


def shift_address_limit(nbytes: int) -> None:
    """Move the address-space limit `limit_address_space` set (if it set one) by `nbytes`: up past a mapping
    the budget does not count (`gpurace exec`'s device memory, mapped whole, costs only the pages written),
    down for memory the budget counts though this process does not map it anew (the program's allocations in
    that device memory)."""
    import resource

    if _user_address_limit is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return
    want = max(soft + nbytes, 0)
    resource.setrlimit(resource.RLIMIT_AS, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))


def restore_user_address_space() -> None:
    """In a child about to run the user's own program (`gpurace exec`): the address-space limit the user had."""
    import resource

    if _user_address_limit is not None:
        resource.setrlimit(resource.RLIMIT_AS, (_user_address_limit, resource.getrlimit(resource.RLIMIT_AS)[1]))

