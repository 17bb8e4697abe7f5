"""The hb detector's page table: global shadow memory in proportion to the pages a kernel touches."""

from __future__ import annotations

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.hb import HappensBeforeDetector
from gpurace.detect.shadow import PageTable
from gpurace.sim.launch import simulate
from gpurace.sim.memory import PAGE_SIZE, Space


def test_pages_get_slots_in_order_of_first_touch():
    table = PageTable(words=False)
    offsets = np.array([1000 * PAGE_SIZE + 7, 5, 1000 * PAGE_SIZE, 8], dtype=np.int64)
    idx, shift, _ = table.index(offsets, 1)
    # both new pages come in one batch: slots follow page order
    assert idx.tolist() == [PAGE_SIZE + 7, 5, PAGE_SIZE, 8] and not shift.any()
    assert table.pages == 2
    idx, _, _ = table.index(np.array([3 * PAGE_SIZE + 1, 1000 * PAGE_SIZE + 9], dtype=np.int64), 1)
    assert idx.tolist() == [2 * PAGE_SIZE + 1, PAGE_SIZE + 9]
    assert table.pages == 3
    assert table.offsets(np.array([5, PAGE_SIZE + 7, 2 * PAGE_SIZE + 1])).tolist() == [5, 1000 * PAGE_SIZE + 7, 3 * PAGE_SIZE + 1]


def test_translation_is_one_to_one_on_random_offsets():
    rng = np.random.default_rng(1)
    table = PageTable(words=False)
    offsets = rng.integers(0, 1 << 36, 5000, dtype=np.int64)
    idx, _, _ = table.index(offsets, 1)
    assert len(np.unique(idx)) == len(np.unique(offsets))
    assert idx.max() < table.pages * PAGE_SIZE
    assert table.offsets(idx[:50]).tolist() == offsets[:50].tolist()
    np.testing.assert_array_equal(table.index(offsets, 1)[0], idx)  # stable on the second touch


def test_pages_accessed_in_whole_words_are_shadowed_by_word_until_a_word_is_split():
    table = PageTable()
    words = np.array([0, 4, PAGE_SIZE + 8], dtype=np.int64)
    idx, shift, (old, new) = table.index(words, 4)
    quarter = PAGE_SIZE // 4
    assert idx.tolist() == [0, 1, quarter + 2] and shift.tolist() == [2, 2, 2] and len(new) == 0
    assert table.offsets(idx).tolist() == words.tolist()
    idx, shift, _ = table.index(np.array([16, 32], dtype=np.int64), 16)  # vectors are whole words too
    assert idx.tolist() == [4, 8] and shift.tolist() == [2, 2]
    idx, shift, (old, new) = table.index(np.array([PAGE_SIZE + 9], dtype=np.int64), 1)  # a byte of page 1
    assert old.tolist() == [quarter] and new.tolist() == [2 * quarter]  # its words are copied to a byte run
    assert idx.tolist() == [2 * quarter + 9] and shift.tolist() == [0]
    assert table.index(np.array([PAGE_SIZE + 8], dtype=np.int64), 4)[0].tolist() == [2 * quarter + 8]  # bytes for good
    assert table.index(np.array([8], dtype=np.int64), 4)[0].tolist() == [2]  # page 0 keeps its words
    assert table.offsets(np.array([2 * quarter + 9, 2])).tolist() == [PAGE_SIZE + 9, 8]


def test_widening_copies_each_word_history_to_its_four_bytes():
    from gpurace.detect.shadow import Shadow

    table = PageTable()
    table.index(np.array([0], dtype=np.int64), 4)
    sh = Shadow(PAGE_SIZE // 4)
    sh.w["t"][:] = np.arange(PAGE_SIZE // 4)
    _, _, (old, new) = table.index(np.array([2], dtype=np.int64), 2)
    sh.grow(table.units)
    sh.widen(old, new)
    assert sh.w["t"][new[0] : new[0] + PAGE_SIZE].tolist() == np.repeat(np.arange(PAGE_SIZE // 4), 4).tolist()


def _hb_run(path, source: str, block: int) -> HappensBeforeDetector:
    """The `hb` detector after a one-block run of `source` (written to `path`) with automatic arguments."""
    path.write_text(source)
    detectors = []

    def attach(program, geometry, memory):
        detectors.append(HappensBeforeDetector(DetectorContext(program, geometry, memory)))
        return detectors

    simulate(path, grid=1, block=block, args=None, sink_factory=attach)
    return detectors[0]


FAR_RACE = r"""
__global__ void far(int* a, int* b) {
  int i = threadIdx.x;
  a[i] = i;
  if (i < 2) b[3000000] = i;
}
"""


def test_hb_finds_a_race_far_into_an_automatic_buffer_with_a_small_shadow(tmp_path):
    det = _hb_run(tmp_path / "far.cu", FAR_RACE, block=64)
    (f,) = det.finish()
    assert (f.kind, f.space, [s.loc.line for s in f.sites]) == ("data-race", "global", [5, 5])
    assert (f.address.allocation, f.address.offset) == ("b (int*)", 12_000_000)
    assert det.global_pages.pages == 2
    # a dense shadow would span both buffers' reservations and the guard between them (~100 MiB)
    assert det.shadows[Space.GLOBAL].size <= 2 * PAGE_SIZE


WORD_THEN_BYTE = r"""
__global__ void split(int* a) {
  int i = threadIdx.x;
  if (i == 0) a[1] = 7;
  if (i == 32) a[1] = 9;
  __syncthreads();
  if (i == 0) a[2] = 1;
  if (i == 64) ((char*)a)[9] = 3;
}
"""


def test_a_word_shadow_reports_as_a_byte_shadow_and_widens_for_a_byte(tmp_path):
    det = _hb_run(tmp_path / "split.cu", WORD_THEN_BYTE, block=96)
    words, byte = sorted(det.finish(), key=lambda f: f.sites[0].loc.line)
    assert ([s.loc.line for s in words.sites], words.address.offset, words.count) == ([4, 5], 4, 4)  # one pair per byte
    assert ([s.loc.line for s in byte.sites], byte.address.offset, byte.count) == ([7, 8], 9, 1)
    assert det.global_pages.shift.tolist() == [0]  # the byte store widened the page
