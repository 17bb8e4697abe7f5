"""Keep the memory that large NumPy temporaries free in the process, for the next ones to reuse.

A close of the interval detector builds columns of tens or hundreds of
megabytes and drops them a moment later, interval after interval. glibc's
`malloc` serves blocks above 32 MB (its largest `mmap` threshold) with a fresh
`mmap` and gives them back with `munmap` when freed, so every close writes to
pages the system must map and zero again: on a virtual machine that costs a
host page fault per page, and it was half the CPU time of a checked launch of
1.7 million threads (a scan of 6.8 million elements: 24 s of system time in
48 s). With `mmap` disabled for allocations and the heap never trimmed, freed
blocks go back to `malloc`'s free lists and are reused at no system cost.

The price is that the process keeps its peak heap until it exits (a checked
launch's peak is what it needs anyway). Where `mallopt` is not available (not
glibc) nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
"""`mallopt` parameters (glibc's malloc.h)."""
_applied = False


def keep_freed_memory() -> None:
    """Make `malloc` reuse freed memory instead of returning it to the system (module docstring); once per
    process."""
    global _applied
    if _applied:
        return
    _applied = True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    mallopt(M_MMAP_MAX, 0)
    mallopt(M_TRIM_THRESHOLD, 2**31 - 1)
