"""CPython's cyclic garbage collector held back while a launch runs (`Engine.run`).

A launch checked with detectors allocates objects by the hundred thousand that live until it ends (the
knowledge objects of `detect.knowledge`, critical sections, releases, findings in the making). At its default
thresholds the collector traverses each of them again and again, as the young generations fill and whenever
the heap grows by a quarter: a fifth of the CPU time of the default check of a lock kernel
(`benchmarks/bench_lock_check.py`). A launch makes no cycles worth collecting early (its peak memory is the
same with the collector off), so while one runs the young generation is collected only every
`THRESHOLDS[0]` allocations and the older ones almost never. The caller's thresholds come back when the last
running launch ends (launches may run in several threads), and its next collection finds whatever cycles the
launches left. A collector turned off (threshold 0) stays off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (100_000, 1_000, 1_000)
"""Allocations before a young collection, and young (then middle) collections before an older one."""

_lock = threading.Lock()
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
