"""The fitness sink on tiny kernels whose fitness follows from the source, attached through `check(sinks=...)`."""

from __future__ import annotations

import math

import pytest

from gpurace.check import check
from gpurace.search.fitness import Fitness, FitnessSink

STRIDE = "__global__ void k(int* a, int stride) { a[(blockIdx.x * blockDim.x + threadIdx.x) * stride] = 1; }\n"


def fitness_of(tmp_path, text: str, **launch) -> Fitness:
    path = tmp_path / "k.cu"
    path.write_text(text)
    sink = FitnessSink()
    check(path, sinks=[sink], **launch)
    return sink.fitness()


def test_all_threads_on_one_address(tmp_path):
    f = fitness_of(tmp_path, STRIDE, grid=2, block=32, args=["auto", "0"])
    # 64 threads write one address: 1 distinct address over 64 thread-address pairs, no range.
    assert (f.primary, f.secondary, f.pairs) == (1 / 64, 0, 64)


@pytest.mark.parametrize("stride", [1, 3])
def test_threads_on_their_own_addresses(tmp_path, stride):
    f = fitness_of(tmp_path, STRIDE, grid=2, block=32, args=["auto", str(stride)])
    assert (f.primary, f.secondary, f.pairs) == (1.0, 63 * stride * 4, 64)


def test_repeated_accesses_of_one_thread_count_once(tmp_path):
    text = "__global__ void k(int* a) { for (int i = 0; i < 3; i++) a[threadIdx.x] += i; }\n"
    f = fitness_of(tmp_path, text, grid=1, block=16, args=["auto"])
    assert (f.primary, f.secondary, f.pairs) == (1.0, 15 * 4, 16)


def test_ranges_are_per_buffer_and_per_block_of_shared_memory(tmp_path):
    text = r"""
__global__ void k(int* a, int* b) {
  __shared__ int s[32];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i;
  a[i] = s[threadIdx.x];
  b[i] = 0;
}
"""
    f = fitness_of(tmp_path, text, grid=2, block=32, args=["auto", "auto"])
    # Two buffers of 64 ints (63 * 4 bytes each) and two blocks' shared arrays of 32 ints (31 * 4 each);
    # the gaps between the buffers and between the blocks' shared memory do not count.
    assert f.secondary == 2 * 63 * 4 + 2 * 31 * 4
    # s: 64 distinct addresses, each written and read by one thread; a and b: 64 each.
    assert (f.primary, f.pairs) == (1.0, 192)


def test_a_launch_that_touches_no_memory_ranks_last():
    touched = Fitness(1.0, 4096, 10)
    idle = Fitness(1.0, 0, 0)
    colliding = Fitness(0.5, 10**9, 10)
    assert sorted([idle, touched, colliding], key=Fitness.rank) == [colliding, touched, idle]


def test_intermediate_deduplication_gives_the_same_fitness(tmp_path, monkeypatch):
    text = "__global__ void k(int* a, int m) { for (int i = 0; i < 4; i++) a[threadIdx.x % m] += i; }\n"
    whole = fitness_of(tmp_path, text, grid=1, block=64, args=["auto", "8"])
    monkeypatch.setattr("gpurace.search.fitness.COMPACT_AT", 16)
    assert fitness_of(tmp_path, text, grid=1, block=64, args=["auto", "8"]) == whole == Fitness(8 / 64, 7 * 4, 64)


def test_check_feeds_extra_sinks_with_or_without_bind(tmp_path):
    class Recorder:
        def __init__(self):
            self.events = []

        def on_event(self, event):
            self.events.append(event)

    path = tmp_path / "k.cu"
    path.write_text(STRIDE)
    recorder, sink = Recorder(), FitnessSink()
    check(path, grid=1, block=32, args=["auto", "1"], sinks=[recorder, sink])
    assert [type(e).__name__ for e in recorder.events] == ["AccessBatch", "ExitEvent"]
    assert sink.fitness().pairs == 32


ASSERTED = """#include <cuda.h>
__global__ void k({type} x, {type} y) {{ __assert(x {op} y); }}
"""


@pytest.mark.parametrize(
    "type_, op, x, y, distance",
    [
        ("int", "!=", 5, 12, 7),  # |x - y| to make them equal
        ("int", "==", 4, 4, 1),  # any change of one
        ("int", "<", -3, 2, 5),  # y - x to reach x >= y
        ("int", "<=", 2, 2, 1),  # y - x + 1 to reach x > y
        ("int", ">", 9, 2, 7),
        ("int", ">=", 9, 2, 8),
        ("unsigned", "<", 1, 4000000000, 3999999999),  # the unsigned comparison, not the signed one
        ("float", "!=", 1.5, 4.0, 2.5),
    ],
)
def test_an_assertion_that_holds_scores_its_distance_from_failing(tmp_path, type_, op, x, y, distance):
    f = fitness_of(tmp_path, ASSERTED.format(type=type_, op=op), grid=1, block=4, args=[str(x), str(y)])
    assert (f.pairs, f.assertion) == (0, distance)
    assert f.as_dict()["assertion_distance"] == distance


def test_an_assertion_scores_the_nearest_thread(tmp_path):
    text = "#include <cuda.h>\n__global__ void k(int c) { __assert(threadIdx.x * 10 != c); }\n"
    assert fitness_of(tmp_path, text, grid=1, block=8, args=["33"]).assertion == 3  # thread 3: |30 - 33|


def test_no_distance_without_an_assertion_that_held(tmp_path):
    failing = "#include <cuda.h>\n__global__ void k(int c) { __assert(threadIdx.x == c); }\n"
    f = fitness_of(tmp_path, failing, grid=1, block=8, args=["100"])  # every thread fails: none is scored
    assert f.assertion == math.inf and "assertion_distance" not in f.as_dict()
    assert fitness_of(tmp_path, STRIDE, grid=1, block=8, args=["auto", "1"]).assertion == math.inf


def test_among_launches_that_touch_no_memory_the_nearer_assertion_ranks_first():
    near, far, none = Fitness(1.0, 0, 0, 2.0), Fitness(1.0, 0, 0, 40.0), Fitness(1.0, 0, 0)
    assert sorted([none, far, near], key=Fitness.rank) == [near, far, none]
