"""What a trace may ask of this machine, checked before anything of that size is allocated.

A few bytes of trace can name a launch of billions of threads, or accesses
at addresses that make a detector's shadow memory span terabytes. Both
readers check the launch (`check_launch`) before they allocate anything per
thread, and `replay.analyze` checks the detectors' shadow memory
(`check_shadow`) before it runs one, against the command's `Limits`
(`gpurace.limits`): a trace that asks for more than the budget is refused
with a message naming the file, instead of running until memory runs out.
The per-byte and per-thread costs are measurements of the detectors, not
exact sums: the command line's address-space limit still catches the rest.
Source file names are looked up on this machine too (`file_name_problem`).
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import UserError
from gpurace.limits import Limits, format_size
from gpurace.sim.events import AccessBatch, Event
from gpurace.sim.geometry import MAX_BLOCK_DIMS, MAX_GRID_DIMS, MAX_THREADS_PER_BLOCK
from gpurace.sim.memory.layout import CANON_OFFSET_MASK, CANON_OWNER_MASK, CANON_OWNER_SHIFT, GLOBAL_BASE, PAGE_SIZE, Space

BYTES_PER_THREAD = 512
"""Per-thread state of the geometry and a detector: about 380 bytes measured with tracemalloc (2**20 threads
and a warp sync, under hb, gwcp, tsan and lockset), rounded up."""

SHADOW_BYTES_PER_BYTE = 128
"""Detector state per byte of the shadowed range: hb and gwcp keep 78 bytes, lockset 90 and more with its
lock history, tsan 12 (measured as above)."""

PAGE_TABLE_BYTES_PER_PAGE = 8
"""The global page table's int32 slot per page of address range, doubled while it grows."""

NAME_MAX = 255
"""Bytes of one component of a file name: what Linux, macOS and Windows file systems allow."""
PATH_MAX = 1024
"""Bytes of a whole file name: macOS's limit, the smallest of the systems gpurace runs on (Linux allows 4096)."""


def file_name_problem(name: str) -> str | None:
    """Why `name` cannot name a source file on this machine, or None when it can.

    Reports look the files of source locations up (to tell library headers
    from the user's code), and the operating system refuses a name with a NUL
    character or longer than these limits with an exception, not an answer.
    """
    if "\0" in name:
        return "holds a NUL character"
    encoded = name.encode("utf-8", "surrogateescape")
    if len(encoded) > PATH_MAX:
        return f"is longer than {PATH_MAX} bytes"
    if any(len(part) > NAME_MAX for part in encoded.split(b"/")):
        return f"has a component longer than {NAME_MAX} bytes"
    return None


def check_launch(grid: tuple[int, int, int], block: tuple[int, int, int], limits: Limits, where: str) -> int:
    """The launch's thread count, once its dimensions are ones CUDA allows and the budget can hold its threads.

    Messages start with `where` (the file, and the field or line that declares the launch).
    """
    for what, dims, top in (("grid", grid, MAX_GRID_DIMS), ("block", block, MAX_BLOCK_DIMS)):
        for d, limit, axis in zip(dims, top, "xyz"):
            if not 1 <= d <= limit:
                raise UserError(f"{where}: {what} {axis} dimension {d} is outside 1..{limit:,} (CUDA's limit)")
    per_block = block[0] * block[1] * block[2]
    if per_block > MAX_THREADS_PER_BLOCK:
        raise UserError(f"{where}: {per_block:,} threads per block exceed CUDA's limit of {MAX_THREADS_PER_BLOCK}")
    nthreads = grid[0] * grid[1] * grid[2] * per_block
    limits.check_threads(nthreads, f"{where}: the launch")
    limits.check_memory(nthreads * BYTES_PER_THREAD, f"{where}: the state of {nthreads:,} threads")
    return nthreads


def check_shadow(events: list[Event], shared_stride: int, limits: Limits, where: str) -> None:
    """Refuse a trace whose accesses need more shadow memory than the budget (see the module docstring).

    Shared memory is shadowed densely, block after block, up to the highest
    byte accessed; global memory by the page: a table slot for every page
    up to the highest, shadow for the pages accessed.
    """
    accesses = [ev for ev in events if isinstance(ev, AccessBatch)]
    if not accesses:
        return
    addrs = np.concatenate([ev.addrs for ev in accesses])
    shared = np.concatenate([ev.space for ev in accesses]) == Space.SHARED
    sizes = np.concatenate([np.full(len(ev.addrs), ev.size, dtype=np.int64) for ev in accesses])
    owner = ((addrs[shared] >> np.uint64(CANON_OWNER_SHIFT)) & np.uint64(CANON_OWNER_MASK)).astype(np.int64)
    offset = (addrs[shared] & np.uint64(CANON_OFFSET_MASK)).astype(np.int64)
    shared_span = int((owner * shared_stride + offset + sizes[shared]).max(initial=0))
    pages = (addrs[~shared] - np.uint64(GLOBAL_BASE)) // np.uint64(PAGE_SIZE)
    page_table = (int(pages.max(initial=0)) + 1) * PAGE_TABLE_BYTES_PER_PAGE
    shadowed = shared_span + len(np.unique(pages)) * PAGE_SIZE
    need = shadowed * SHADOW_BYTES_PER_BYTE + page_table
    limits.check_memory(need, f"{where}: the detectors' shadow of {format_size(shadowed)} of accessed memory")
