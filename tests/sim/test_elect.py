"""`elect.sync`: one leader per set of lanes a mask names, the lowest lane, its id in every thread's d."""

from __future__ import annotations

import numpy as np

from gpurace.sim.launch import simulate
from test_expectations import ROOT

KERNELS = ROOT / "tests" / "kernels" / "sim"


def test_each_warp_elects_its_lowest_lane_in_the_mask():
    out, counts = np.zeros(4, np.int32), np.zeros(2, np.int32)
    result = simulate(KERNELS / "elect_one_per_warp.cu", grid=2, block=64, args=[out, counts], arch="sm_90")
    assert result.findings == []
    assert out.tolist() == [0, 100, 200, 300]  # lane 0 leads the full mask, and says so in d
    assert counts.tolist() == [2, 2]  # lane 1 leads the odd lanes in each of a block's two warps
