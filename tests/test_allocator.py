"""glibc's allocator settings are the whole process's: only gpurace's command line changes them, and the
interval detector keeps freed memory only there (`gpurace.allocator`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurace import allocator
from gpurace.check import check

KERNEL = Path(__file__).parent / "kernels" / "reduce_shared.cu"


@pytest.fixture
def calls(monkeypatch):
    made = []
    monkeypatch.setattr(allocator, "_mallopt", lambda: lambda param, value: made.append((param, value)) or 1)
    monkeypatch.setattr(allocator, "_command_line", False)
    monkeypatch.setattr(allocator, "_closes_applied", False)
    return made


def test_a_library_check_with_the_interval_detector_leaves_the_allocator_alone(calls):
    check(KERNEL, grid=2, block=64, detector="interval")
    assert calls == []


def test_the_command_line_keeps_freed_memory_and_the_detector_then_keeps_all_of_it(calls):
    assert allocator.for_command_line()
    assert calls == [(allocator.M_MMAP_THRESHOLD, allocator.MMAP_THRESHOLD), (allocator.M_TRIM_THRESHOLD, allocator.TRIM_THRESHOLD)]
    check(KERNEL, grid=2, block=64, detector="interval")
    check(KERNEL, grid=2, block=64, detector="interval")  # once per process
    assert calls[2:] == [(allocator.M_MMAP_MAX, 0), (allocator.M_TRIM_THRESHOLD, 2**31 - 1)]
