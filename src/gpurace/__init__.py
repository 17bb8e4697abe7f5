"""gpurace: finds concurrency bugs in GPU kernels by simulating their PTX."""

__version__ = "0.1.0"
