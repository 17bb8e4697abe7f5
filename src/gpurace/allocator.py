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

Only the command line does this (`gpurace.cli.main`): allocator settings are
the whole process's, and a program importing gpurace as a library keeps its own.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
"""glibc's `mallopt` parameters (malloc.h)."""

MMAP_THRESHOLD = 4 << 20
TRIM_THRESHOLD = 64 << 20


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds; False (nothing changed) on a C library without `mallopt`."""
    libc_name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(libc_name).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
