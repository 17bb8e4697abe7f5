"""Keep the C allocator from handing the simulator's arrays back to the kernel after every instruction.

The simulator makes and drops arrays of one element per thread at every step:
8 MB for a wave of a million threads, 1.6 MB for a 200,000-thread launch.
glibc serves blocks above its mmap threshold with a fresh `mmap` and returns
them with `munmap`, and trims the top of its heap when more than its trim
threshold lies free there, so each temporary costs a round of page faults and
zeroing by the kernel: measured on a tiled matrix multiply of 204,800
threads, 5.3 s of system time in a 9.6 s run. Serving blocks up to 32 MiB
(glibc's largest mmap threshold) from the heap and keeping up to 256 MiB of
free heap cuts that run to 3.4 s with the same peak memory (within 2%).

Only the command line does this (`gpurace.cli.main`): allocator settings are
the whole process's, and a program importing gpurace as a library keeps its own.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
"""glibc's `mallopt` parameters (malloc.h)."""

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


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
