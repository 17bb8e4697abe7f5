"""The Python API: the same jobs as the command line, returning objects instead of printing.

    import numpy as np, gpurace
    out = np.zeros(256, np.int32)
    result = gpurace.run("reduce.cu", grid=1, block=256, args=[np.arange(256, dtype=np.int32), out, 256])
    assert result.clean and out[0] == 256 * 255 // 2
"""

from __future__ import annotations

from gpurace.sim.launch import RunResult, simulate


def run(source, *, grid, block, args=None, **options) -> RunResult:
    """Simulate one launch (see `gpurace.sim.launch.simulate` for the options); arrays in `args` are updated in place.

    Any argument may be "auto", and `args=None` means "auto" for every parameter (automatic buffers and default scalars).
    """
    return simulate(source, grid=grid, block=block, args=args, **options)
