"""The converter of gpurace traces to RAPID's STD format (benchmarks/rapid_trace.py), on a small hand-written trace."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import numpy as np

from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.trace.model import Trace
from gpurace.trace.replay import read_trace

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("rapid_trace", ROOT / "benchmarks" / "rapid_trace.py")
rapid_trace = sys.modules["rapid_trace"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rapid_trace)


def _pc_of(trace: Trace, line: int) -> int:
    return next(pc for pc, ins in enumerate(trace.instructions) if ins.loc.line == line)


def test_hand_written_trace_converts_line_by_line():
    trace = read_trace(ROOT / "tests" / "traces" / "rapid_conversion.trace")
    base = {v.name: v.base for v in trace.variables}
    lock, total, count = base["lock"], base["total"], base["count"]
    shared = (1 << 62) | base["s"]  # block 0's canonical shared addresses
    pc = lambda line: _pc_of(trace, line)  # noqa: E731
    out = io.StringIO()
    conversion = rapid_trace.convert(trace, out)
    assert out.getvalue().splitlines() == [
        f"T3|acq(L{lock:x})|{pc(11)}",
        f"T3|r(V{total:x})|{pc(12)}",  # an 8-byte access is two words
        f"T3|r(V{total + 4:x})|{pc(12)}",
        f"T3|w(V{total:x})|{pc(13)}",
        f"T3|w(V{total + 4:x})|{pc(13)}",
        f"T3|rel(L{lock:x})|{pc(14)}",
        f"T39|acq(L{lock:x})|{pc(15)}",  # thread 7 of block 1
        f"T39|w(V{total + 4:x})|{pc(16)}",
        f"T39|rel(L{lock:x})|{pc(17)}",
        f"T0|r(V{count:x})|{pc(18)}",  # atomic add: a read and a write
        f"T0|w(V{count:x})|{pc(18)}",
        f"T32|w(V{count:x})|{pc(19)}",
        f"T1|w(V{shared + 4:x})|{pc(20)}",
        # the fence (line 21), the exit (22) and the barrier (23) have no line
        f"T2|r(V{shared + 4:x})|{pc(24)}",
    ]
    assert (conversion.events, conversion.lines) == (rapid_trace.lane_events(trace), 14)
    assert (conversion.acquires, conversion.releases, conversion.failed_cas) == (2, 2, 0)
    assert conversion.dropped == {"fence": 1, "exit": 1, "barrier": 31}
    assert conversion.approximated == {"atomic": 1}


def test_spin_lock_attempts_are_reads_and_the_free_value_releases():
    """A CAS batch in which one lane takes the lock and two fail, then the holder's exchange of the free value."""
    trace = Trace(grid=(1, 1, 1), block=(32, 1, 1), kernel="k", variables=[], shared_stride=0, instructions=[], owner=[])
    lanes = np.array([0, 1, 2], dtype=np.int64)
    word = np.full(3, 0x100, dtype=np.uint64)
    space = np.zeros(3, dtype=np.int8)
    trace.events = [
        AccessBatch(0, 5, AccessKind.ATOMIC, lanes, word, 4, space, True, "gpu", "relaxed", "cas",
                    values=np.array([0, 1, 1]), stored=np.array([1, 1, 1]), compare=np.array([0, 0, 0])),
        AccessBatch(1, 9, AccessKind.ATOMIC, lanes[:1], word[:1], 4, space[:1], True, "gpu", "relaxed", "exch",
                    values=np.array([1]), stored=np.array([0])),
        AccessBatch(2, 5, AccessKind.ATOMIC, lanes[1:2], word[:1], 4, space[:1], True, "gpu", "relaxed", "cas",
                    values=np.array([0]), stored=np.array([1]), compare=np.array([0])),
    ]
    out = io.StringIO()
    conversion = rapid_trace.convert(trace, out)
    assert out.getvalue().splitlines() == ["T0|acq(L100)|5", "T1|r(V100)|5", "T2|r(V100)|5", "T0|rel(L100)|9", "T1|acq(L100)|5"]
    assert (conversion.acquires, conversion.releases, conversion.failed_cas) == (2, 1, 2)
    assert not conversion.approximated and not conversion.dropped
