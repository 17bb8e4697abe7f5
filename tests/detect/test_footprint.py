"""Launch footprints (`detect.footprint`): which bytes a launch read and wrote, and by which source line."""

from __future__ import annotations

import numpy as np

from gpurace.check import check
from gpurace.detect.footprint import Footprint, LaunchFootprint, Spans

KERNEL = """
__global__ void two(const int *in, int *out, int *copy) {
    int i = threadIdx.x;
    out[i] = in[i];
    copy[i] = 2 * in[i];
}
"""


def flagged(bits) -> np.ndarray:
    """Every address a PageBits holds, ascending."""
    rows, offsets = np.nonzero(bits.bits[bits.rows])
    return np.sort((bits.pages[rows].astype(np.int64) << 12) + offsets)


def test_a_launch_footprint_names_the_instruction_of_each_byte(tmp_path):
    source = tmp_path / "two.cu"
    source.write_text(KERNEL)
    recorder = LaunchFootprint(budget=1 << 30)
    args = [np.arange(32, dtype=np.int32), np.zeros(32, dtype=np.int32), np.zeros(32, dtype=np.int32)]
    check(source, grid=1, block=32, args=args, sinks=[recorder], schedules=2)
    footprint = recorder.footprint()
    assert recorder.complete
    read, written = flagged(recorder.reads), flagged(recorder.writes)
    assert len(read) == 128 and len(written) == 256  # `in`; `out` and `copy` (the buffers in argument order)
    assert recorder.site(int(read[0]), write=False).loc.line == 5  # the last read: `in` is read again, `out` may alias it
    assert recorder.site(int(written[0]), write=True).loc.line == 4
    assert recorder.site(int(written[-1]), write=True).loc.line == 5
    assert recorder.site(int(written[0]), write=False) is None  # nothing read `out`
    out = int(written[0])
    overlap = footprint.overlap(Footprint(Spans(((out + 60, out + 64),)), Spans()))
    assert (overlap.address, overlap.first_writes, overlap.second_writes) == (out + 60, True, False)
    assert footprint.overlap(Footprint(Spans(((out + 128, out + 129),)), Spans())) is None


def test_a_footprint_past_its_budget_is_partial(tmp_path):
    source = tmp_path / "two.cu"
    source.write_text(KERNEL)
    recorder = LaunchFootprint(budget=1)
    args = [np.arange(32, dtype=np.int32), np.zeros(32, dtype=np.int32), np.zeros(32, dtype=np.int32)]
    check(source, grid=1, block=32, args=args, sinks=[recorder])
    recorder.footprint()
    assert not recorder.complete
