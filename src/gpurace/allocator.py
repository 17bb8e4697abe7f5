"""Keep the C allocator from handing the simulator's arrays back to the kernel after every instruction.

The simulator makes and drops arrays of one element per thread at every step:
8 MB for a wave of a million threads, 1.6 MB for a 200,000-thread launch.
glibc serves blocks above its mmap threshold with a fresh `mmap` and returns
them with `munmap`, and trims the top of its heap when more than its trim
threshold lies free there, so each temporary costs a round of page faults and
zeroing by the kernel: measured on a tiled matrix multiply of 204,800
threads, 5.7 s of system time in 10.1 s of CPU time. Serving blocks up to
4 MiB from the heap and keeping up to 64 MiB of free heap cuts that run to
4.1 s of CPU time (0.2 s of it system time) with the same peak memory. Larger
thresholds gain little more and let the heap's free holes grow, which counts
against the address-space limit that enforces `--max-memory` (a 16M-thread
launch checked in waves then exceeded its budget).

The interval detector goes further (`for_detector_closes`): a close builds
columns of tens or hundreds of megabytes and drops them a moment later,
interval after interval, and every fresh `mmap` of such a column makes the
system map and zero its pages again (on a virtual machine, a host page fault
per page: half the CPU time of a checked launch of 1.7 million threads, a
scan of 6.8 million elements, 24 s of system time in 48 s). With `mmap`
disabled for allocations and the heap never trimmed, freed blocks go back to
`malloc`'s free lists and are reused at no system cost; the price is that the
process keeps its peak heap until it exits (a checked launch's peak is what it
needs anyway).

Only the command line does either (`gpurace.cli.main` calls
`for_command_line`): allocator settings are the whole process's, and a
program importing gpurace as a library (a test suite, say) keeps its own.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4
"""glibc's `mallopt` parameters (malloc.h)."""

MMAP_THRESHOLD = 4 << 20
TRIM_THRESHOLD = 64 << 20

_command_line = False
_closes_applied = False


def for_command_line() -> bool:
    """This process is gpurace's command line: raise glibc's mmap and trim thresholds, and let the interval
    detector keep freed memory (`for_detector_closes`). False (nothing changed) without `mallopt`."""
    global _command_line
    _command_line = True
    mallopt = _mallopt()
    return mallopt is not None and bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def for_detector_closes() -> None:
    """On the command line, once: no `mmap` for allocations and no trimming (module docstring)."""
    global _closes_applied
    if not _command_line or _closes_applied:
        return
    _closes_applied = True
    mallopt = _mallopt()
    if mallopt is not None:
        mallopt(M_MMAP_MAX, 0)
        mallopt(M_TRIM_THRESHOLD, 2**31 - 1)


def _mallopt():
    """glibc's `mallopt`, or None on a C library without it."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c")).mallopt
    except (OSError, AttributeError, TypeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt
