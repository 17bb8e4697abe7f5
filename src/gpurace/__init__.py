"""gpurace: finds concurrency bugs in GPU kernels by simulating their PTX."""

from gpurace.api import run
from gpurace.runtime import exec_program

__version__ = "0.1.0"
__all__ = ["exec_program", "run"]
