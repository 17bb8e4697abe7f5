"""Traces: event streams stored in a file, so detectors can run without simulating.

A trace is what a detector sees of one launch (`model.Trace`): the geometry,
the named memory, the instructions that findings point at, and the event
stream itself. It is written by hand in the text format (`text`), recorded
from a simulation in the binary format (`binary`, `record`), and fed back to
the detectors by `replay` (`gpurace analyze`).
"""

from gpurace.trace.model import Trace, TraceVariable

__all__ = ["Trace", "TraceVariable"]
