"""The Python API: the same jobs as the command line, returning objects instead of printing.

    import numpy as np, gpurace
    out = np.zeros(256, np.int32)
    result = gpurace.run("reduce.cu", grid=1, block=256, args=[np.arange(256, dtype=np.int32), out, 256])
    assert result.clean and out[0] == 256 * 255 // 2

    from gpurace.api import check
    report = check("reduce.cu", grid=1, block=256, prove=True)  # a Report, as `gpurace check --format json` writes it
    assert report.clean and report.proof["proved"]

`check` is not exported as `gpurace.check`, which names the module that implements it.
"""

from __future__ import annotations

from gpurace.check import check as _check
from gpurace.report.model import Report
from gpurace.sim.launch import RunResult, simulate


def run(source, *, grid, block, args=None, **options) -> RunResult:
    """Simulate one launch (see `gpurace.sim.launch.simulate` for the options); arrays in `args` are updated in place.

    Any argument may be "auto", and `args=None` means "auto" for every parameter (automatic buffers and default scalars).
    """
    return simulate(source, grid=grid, block=block, args=args, **options)


def check(source, *, grid, block, args=None, prove: bool = False, **options) -> Report:
    """Check one launch for races and synchronisation bugs (see `gpurace.check.check` for the options).

    With `prove`, the kernel is first verified for this grid and block, as `gpurace check --prove` does: the
    report's `proof` holds the verdict per memory object, and a kernel proved race-free runs one schedule.
    """
    return _check(source, grid=grid, block=block, args=args, prove=prove, **options)
