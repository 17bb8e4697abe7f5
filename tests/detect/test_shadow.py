"""The hb detector's page table: global shadow memory in proportion to the pages a kernel touches."""

from __future__ import annotations

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.hb import HappensBeforeDetector
from gpurace.detect.shadow import PageTable
from gpurace.sim.launch import simulate
from gpurace.sim.memory import PAGE_SIZE, Space


def test_pages_get_slots_in_order_of_first_touch():
    table = PageTable()
    offsets = np.array([1000 * PAGE_SIZE + 7, 5, 1000 * PAGE_SIZE, 8], dtype=np.int64)
    idx = table.index(offsets)
    # both new pages come in one batch: slots follow page order
    assert idx.tolist() == [PAGE_SIZE + 7, 5, PAGE_SIZE, 8]
    assert table.pages == 2
    idx = table.index(np.array([3 * PAGE_SIZE + 1, 1000 * PAGE_SIZE + 9], dtype=np.int64))
    assert idx.tolist() == [2 * PAGE_SIZE + 1, PAGE_SIZE + 9]
    assert table.pages == 3
    assert [table.offset(int(i)) for i in (5, PAGE_SIZE + 7, 2 * PAGE_SIZE + 1)] == [5, 1000 * PAGE_SIZE + 7, 3 * PAGE_SIZE + 1]


def test_translation_is_one_to_one_on_random_offsets():
    rng = np.random.default_rng(1)
    table = PageTable()
    offsets = rng.integers(0, 1 << 36, 5000, dtype=np.int64)
    idx = table.index(offsets)
    assert len(np.unique(idx)) == len(np.unique(offsets))
    assert idx.max() < table.pages * PAGE_SIZE
    assert [table.offset(int(i)) for i in idx[:50]] == offsets[:50].tolist()
    np.testing.assert_array_equal(table.index(offsets), idx)  # stable on the second touch


FAR_RACE = r"""
__global__ void far(int* a, int* b) {
  int i = threadIdx.x;
  a[i] = i;
  if (i < 2) b[3000000] = i;
}
"""


def test_hb_finds_a_race_far_into_an_automatic_buffer_with_a_small_shadow(tmp_path):
    path = tmp_path / "far.cu"
    path.write_text(FAR_RACE)
    detectors = []

    def attach(program, geometry, memory):
        detectors.append(HappensBeforeDetector(DetectorContext(program, geometry, memory)))
        return detectors

    simulate(path, grid=1, block=64, args=None, sink_factory=attach)
    (det,) = detectors
    (f,) = det.finish()
    assert (f.kind, f.space, [s.loc.line for s in f.sites]) == ("data-race", "global", [5, 5])
    assert (f.address.allocation, f.address.offset) == ("b (int*)", 12_000_000)
    assert det.global_pages.pages == 2
    # a dense shadow would span both buffers' reservations and the guard between them (~100 MiB)
    assert det.shadows[Space.GLOBAL].size <= 2 * PAGE_SIZE
