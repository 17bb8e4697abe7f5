"""`setmaxnreg`: a register budget, which changes nothing simulated; its count is checked as PTX restricts it."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.sim.launch import simulate
from test_expectations import ROOT

KERNEL = ROOT / "tests" / "kernels" / "sim" / "setmaxnreg.cu"


def test_a_kernel_runs_as_without_its_register_budgets():
    out = np.zeros(256, np.int32)
    result = simulate(KERNEL, grid=1, block=256, args=[out], arch="sm_90a")
    assert result.findings == []
    assert out.tolist() == list(range(256))


def test_a_count_ptx_does_not_allow_is_refused_naming_the_range(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text(KERNEL.read_text().replace("u32 40;", "u32 44;"))
    with pytest.raises(UserError, match=r"register count 44 .* PTX allows 24\.\.256 in multiples of 8"):
        simulate(bad, grid=1, block=256, args=[np.zeros(256, np.int32)], arch="sm_90a")
