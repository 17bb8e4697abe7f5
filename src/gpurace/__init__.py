"""gpurace: finds concurrency bugs in GPU kernels by simulating their PTX."""

from gpurace.api import run

__version__ = "0.1.0"
__all__ = ["run"]
