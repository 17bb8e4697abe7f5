"""`sim.collector`: the garbage collector's thresholds are raised while a launch runs and the caller's come back."""

from __future__ import annotations

import gc
import threading
import weakref

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


class Watched:
    """An event sink that a weak reference can watch: it lives as long as the launch's engine that holds it."""

    def on_event(self, event) -> None:
        pass


def _sink_of_a_finished_launch(source, n: int) -> weakref.ref:
    sink = Watched()
    simulate(source, grid=1, block=32, args=[f"buf:{n}", n], sinks=[sink])
    return weakref.ref(sink)


@pytest.fixture
def collector_off():
    """The automatic collector off, so that only `collector.before_launch` collects; the work count from zero."""
    was = gc.isenabled()
    gc.disable()
    collector.before_launch(collector.COLLECT_BEFORE_THREADS)  # collects now, and counts work from here
    yield
    if was:
        gc.enable()


LOOP = "__global__ void k(int* out, int n) { for (int i = threadIdx.x; i < n; i += 32) out[i] = i; }\n"


@pytest.mark.parametrize("work_limit, collected", [(10_000, True), (10_000_000, False)])
def test_a_launch_collects_first_after_much_work_by_a_small_grid(collector_off, monkeypatch, tmp_path, work_limit, collected):
    # one block looping over a buffer: few threads, many thread-instructions; its engine is a reference cycle
    # that holds the sinks until something collects it
    monkeypatch.setattr(collector, "COLLECT_AFTER_WORK", work_limit)
    source = tmp_path / "k.cu"
    source.write_text(LOOP)
    earlier = _sink_of_a_finished_launch(source, 32 * 1024)
    assert earlier() is not None  # left in its engine's cycle
    simulate(source, grid=1, block=32, args=["buf:32", 32])
    assert (earlier() is None) == collected
