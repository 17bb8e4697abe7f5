"""The `tsan` detector: ThreadSanitizer's shadow cells with `hb`'s happens-before.

The traces with expectations are in tests/traces/ (`tsan_*.trace` and the
paper figures, run by tests/trace/test_trace_corpus.py) and the kernels in
tests/kernels/tsan/ (run by test_expectations.py); here: what the number of
cells and the eviction seed change, the option's checks, the memory the cells
take, and no false alarm on any race-free corpus kernel.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_expectations import corpus_cases, observed, run_check

from gpurace.check import check
from gpurace.cli import cli
from gpurace.detect.base import DetectorContext
from gpurace.detect.tsan import TsanDetector
from gpurace.errors import UserError
from gpurace.sim.launch import simulate
from gpurace.sim.memory import Space
from gpurace.trace.replay import analyze, context_of, read_trace

TRACES = Path(__file__).resolve().parent.parent / "traces"
KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "tsan"


def _races(report) -> list[tuple]:
    return [(f.kind, f.space, tuple(sorted(s.loc.line for s in f.sites))) for f in report.findings]


def _replay(name: str, cells: int, seed: int) -> list[tuple]:
    """The races of `--detector tsan` on a trace, with `cells` cells per word and eviction seed `seed`."""
    trace = read_trace(TRACES / name)
    det = TsanDetector(context_of(trace, "cuda", shadow_cells=cells, seed=seed))
    for event in trace.events:
        det.on_event(event)
    return [(f.kind, f.space, tuple(sorted(s.loc.line for s in f.sites))) for f in det.finish()]


def test_two_cells_lose_a_race_that_eight_cells_keep():
    """tsan_evicted_write.trace: block 0 writes x (line 12) and publishes a flag; threads of blocks 1 and 2
    acquire it and read x (lines 18, 20); a thread of block 3 reads x with no acquire (line 21): a race with
    the write. With 2 cells the word holds the write and the first ordered read when the second ordered read
    comes: neither is its own thread's, there is no empty cell, and the write happens before it (it acquired
    the flag) while the first read does not, so the write is the cell replaced, whatever the seed (eviction
    at random is the last resort, never reached here). Block 3's read then meets two reads: no conflict.
    With 8 cells the write is still there."""
    for seed in range(8):
        assert _replay("tsan_evicted_write.trace", 2, seed) == []
    report = analyze(TRACES / "tsan_evicted_write.trace", detector="tsan", shadow_cells=2)
    assert report.findings == [] and report.exit_code() == 0
    report = analyze(TRACES / "tsan_evicted_write.trace", detector="tsan", shadow_cells=8)
    assert _races(report) == [("data-race", "global", (12, 21))]
    (finding,) = report.findings
    assert [s.op for s in finding.sites] == ["write", "read"]
    assert [s.block for s in finding.sites] == [(0, 0, 0), (3, 0, 0)]
    assert finding.address.allocation == "x" and finding.address.offset == 0


def test_random_eviction_is_reproducible_and_follows_the_seed():
    """tsan_older_read.trace: three unordered reads of x (lines 12, 13, 16), then a write ordered after the
    last two only (line 22). With 2 cells the third read finds the word full of reads it is not ordered
    after, and evicts one of the two at random: the race with the first read is found exactly when the
    second read was evicted. So some seeds find it and others do not, and a seed always decides the same
    way. With 4 cells nothing is evicted, and every seed finds it."""
    race = [("data-race", "global", (12, 22))]
    outcomes = [_replay("tsan_older_read.trace", 2, seed) for seed in range(32)]
    assert race in outcomes and [] in outcomes
    assert all(o in (race, []) for o in outcomes)
    assert [_replay("tsan_older_read.trace", 2, seed) for seed in range(32)] == outcomes
    assert all(_replay("tsan_older_read.trace", 4, seed) == race for seed in range(8))


def test_cells_take_33_bytes_per_cell_per_word_touched():
    made: list[TsanDetector] = []

    def sinks(program, geometry, memory):
        made.append(TsanDetector(DetectorContext(program, geometry, memory, shadow_cells=8)))
        return made

    simulate(KERNELS / "byte_flags.cu", grid=(2,), block=(256,), args=["buf:512"], sink_factory=sinks)
    det = made[0]
    assert det.finish() == []
    for cells in det.cells.values():
        assert cells.cells == 8 and cells.t.shape == (cells.words, 8)
        assert cells.nbytes == cells.words * 8 * 33
    # shared memory: 2 blocks x 256 bytes = 64 words, each written byte by byte by 8 threads: 8 cells in use
    shared = det.cells[int(Space.SHARED)]
    assert ((shared.t[:64] >= 0).sum(axis=1) == 8).all()


def test_shadow_cells_must_be_two_four_or_eight():
    with pytest.raises(UserError, match="--shadow-cells must be 2, 4 or 8, got 3"):
        analyze(TRACES / "tsan_subword.trace", detector="tsan", shadow_cells=3)
    with pytest.raises(UserError, match="--shadow-cells must be 2, 4 or 8, got 16"):
        check(KERNELS / "byte_flags.cu", grid=(1,), block=(32,), args=["buf:32"], detector="tsan", shadow_cells=16)
    result = CliRunner().invoke(cli, ["analyze", str(TRACES / "tsan_subword.trace"), "--detector", "tsan", "--shadow-cells", "3"])
    assert result.exit_code == 2 and "--shadow-cells" in result.output and "Traceback" not in result.output


def test_the_command_line_passes_the_cell_count_on():
    trace = str(TRACES / "tsan_evicted_write.trace")
    for cells, expected in (("2", []), ("8", [[12, 21]])):
        result = CliRunner().invoke(cli, ["analyze", trace, "--detector", "tsan", "--shadow-cells", cells, "--format", "json"])
        assert result.exit_code == (1 if expected else 0), result.output
        assert [sorted(a["line"] for a in f["accesses"]) for f in json.loads(result.output)["findings"]] == expected


def test_check_seed_seeds_the_evictions():
    """The `seed` of `check` reaches the detector (the same seed, the same evictions)."""
    seen: list[int] = []

    class Probe:
        def bind(self, ctx: DetectorContext) -> None:
            seen.append((ctx.seed, ctx.shadow_cells))

        def on_event(self, event) -> None:
            pass

    check(KERNELS / "byte_flags.cu", grid=(1,), block=(64,), args=["buf:64"], detector="tsan", seed=7, shadow_cells=2, sinks=[Probe()])
    assert seen == [(7, 2)]


@pytest.mark.parametrize("path, launch, expect", corpus_cases())
def test_tsan_against_hb_on_the_corpus(path: Path, launch: str, expect: list[str]):
    """Race-free kernels: forgetting accesses can only lose races, so even with 2 cells (the most forgetful)
    tsan reports none. Racy ones: with the default 4 cells, every race hb reports (no corpus kernel has more
    than 4 recent accesses to a word that matter)."""
    if expect == ["clean"]:
        races = {f[:3] for f in observed(run_check(path, launch, "--detector", "tsan", "--shadow-cells", "2")) if f[0] == "data-race"}
        assert races == set(), f"{path.name}: tsan reports races on a race-free kernel: {races}"
        return
    tsan = {f[:3] for f in observed(run_check(path, launch, "--detector", "tsan")) if f[0] == "data-race"}
    hb = {f[:3] for f in observed(run_check(path, launch, "--detector", "hb")) if f[0] == "data-race"}
    assert hb <= tsan, f"{path.name}: hb finds {hb - tsan}, tsan does not"
