"""`sim.collector`: the garbage collector's thresholds are raised while a launch runs and the caller's come back."""

from __future__ import annotations

import gc
import threading

import pytest

from gpurace.sim import collector
from gpurace.sim.launch import simulate

STORE = "__global__ void k(int* out) { out[threadIdx.x] = threadIdx.x; }\n"


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


class Thresholds:
    """An event sink noting the collector's thresholds at each event."""

    def __init__(self):
        self.seen = set()

    def on_event(self, event) -> None:
        self.seen.add(gc.get_threshold())


def test_thresholds_are_raised_while_a_launch_runs_and_restored_after(thresholds, tmp_path):
    source = tmp_path / "k.cu"
    source.write_text(STORE)
    gc.set_threshold(700, 10, 10)
    sink = Thresholds()
    result = simulate(source, grid=1, block=32, args=["buf:32"], sinks=[sink])
    assert result.findings == []
    assert sink.seen == {collector.THRESHOLDS}
    assert gc.get_threshold() == (700, 10, 10)


def test_higher_caller_thresholds_are_kept_and_a_disabled_collector_stays_disabled(thresholds):
    gc.set_threshold(500_000, 5, 5_000)
    with collector.held_back():
        assert gc.get_threshold() == (500_000, 1_000, 5_000)
    assert gc.get_threshold() == (500_000, 5, 5_000)
    gc.set_threshold(0)
    with collector.held_back():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold()[0] == 0


def test_the_last_of_overlapping_launches_restores_the_thresholds(thresholds):
    gc.set_threshold(700, 10, 10)
    inside, leave = threading.Event(), threading.Event()

    def other_launch():
        with collector.held_back():
            inside.set()
            leave.wait()

    thread = threading.Thread(target=other_launch)
    with collector.held_back():
        thread.start()
        inside.wait()
    assert gc.get_threshold() == collector.THRESHOLDS  # the other launch still runs
    leave.set()
    thread.join()
    assert gc.get_threshold() == (700, 10, 10)
