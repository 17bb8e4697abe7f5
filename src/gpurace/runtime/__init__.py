"""The simulated CUDA runtime behind `gpurace exec`: a program's host code runs natively, its device work here.

`exec_program` builds and runs a program; `protocol` documents how the
program's runtime library (`shim/cudart.c`) and the device server talk.
"""

from gpurace.runtime.exec import ExecResult, exec_program

__all__ = ["ExecResult", "exec_program"]
