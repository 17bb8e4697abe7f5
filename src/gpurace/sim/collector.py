"""CPython's cyclic garbage collector held back while a launch is set up and runs (`simulate`, `Engine.run`).

A launch checked with detectors allocates objects by the hundred thousand that live until it ends (the
knowledge objects of `detect.knowledge`, critical sections, releases, findings in the making). At its default
thresholds the collector traverses each of them again and again, as the young generations fill and whenever
the heap grows by a quarter: a fifth of the CPU time of the default check of a lock kernel
(`benchmarks/bench_lock_check.py`). A launch makes no cycles worth collecting early (its peak memory is the
same with the collector off), so while one runs the young generation is collected only every
`THRESHOLDS[0]` allocations and the older ones almost never. The caller's thresholds come back when the last
running launch ends (launches may run in several threads), and its next collection finds whatever cycles the
launches left. A collector turned off (threshold 0) stays off.

What a launch leaves is large, though: its engine is a reference cycle (the decoder's closures refer to it) that
holds the registers of every thread and the event sinks, and with them a detector's buffered accesses, 24 bytes
each. Python's collector counts objects, not bytes, and may leave such cycles for many launches, so a launch
collects first (`before_launch`) when it is large or when the launches since the last collection did much work.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (100_000, 1_000, 1_000)
"""Allocations before a young collection, and young (then middle) collections before an older one."""

COLLECT_BEFORE_THREADS = 65_536
"""A launch of this many threads collects first: the cycles before it hold arrays of one element per thread (a
program launching a 2M-thread kernel eight times grew from 1.1 to 3.2 GB; collecting before each launch, it stays
at 1.1 GB)."""
COLLECT_AFTER_WORK = 4_000_000
"""Thread-instructions simulated since the last collection after which any launch collects first: a small grid
that loops over a large buffer leaves detector buffers of hundreds of megabytes (NVIDIA's alignedTypes sample,
64 blocks copying 50 MB twelve ways, kept earlier launches' buffers and reached 12.3 GB). A collection costs a few
milliseconds; that much simulation costs a second or more."""

_lock = threading.Lock()
_work = 0
_running = 0
_saved: tuple[int, ...] = ()


@contextmanager
def held_back() -> Iterator[None]:
    """Raise the collector's thresholds to at least `THRESHOLDS` for the duration, then restore the caller's."""
    global _running, _saved
    with _lock:
        if _running == 0:
            _saved = gc.get_threshold()
            if _saved[0]:
                gc.set_threshold(*(max(a, b) for a, b in zip(_saved, THRESHOLDS)))
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                gc.set_threshold(*_saved)


def before_launch(nthreads: int) -> None:
    """Collect the cycles earlier launches left when this launch is large or they did much work (module docstring)."""
    global _work
    with _lock:
        due = nthreads >= COLLECT_BEFORE_THREADS or _work >= COLLECT_AFTER_WORK
        if due:
            _work = 0
    if due:
        gc.collect()


def after_launch(thread_instructions: int) -> None:
    """Count a finished launch's work towards the next collection (`before_launch`)."""
    global _work
    with _lock:
        _work += thread_instructions
