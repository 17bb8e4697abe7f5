"""Launches larger than `--resident-threads` run in waves of blocks (`gpurace.sim.waves`).

A launch run in waves must compute what the same launch computes with every
block resident, give detectors the launch's own thread, block and warp ids,
name the right block in its findings, need memory for one wave only, and say
when a block waited for a wave that never started. The race expectations of
`tests/kernels/waves/` (run by `tests/test_expectations.py`) cover races
between waves and within a late one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.check import check
from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.frontend.load import load_module
from gpurace.limits import Limits
from gpurace.sim.events import AccessBatch, ExitEvent, SyncEvent
from gpurace.sim.budget import launch_footprint
from gpurace.sim.launch import simulate
from gpurace.sim.memory.layout import CANON_OWNER_MASK, CANON_OWNER_SHIFT, SharedLayout, Space
from gpurace.sim.program import build_program

WAVES = Path(__file__).resolve().parents[1] / "kernels" / "waves"


def kernel(name: str):
    return load_module(WAVES / name)


def run_local_and_shared(resident: int, policy: str = "min-pc"):
    data = (np.arange(1024, dtype=np.int32) * 37) % 101
    out = np.zeros(1024, dtype=np.int32)
    res = simulate(
        kernel("local_and_shared.cu"), grid=16, block=64, args=[data, out], policy=policy,
        limits=Limits(resident_threads=resident),
    )  # fmt: skip
    assert res.findings == []
    return out, res.stats


@pytest.mark.parametrize("resident", [64, 192, 1000])
def test_waves_compute_what_a_whole_launch_computes(resident):
    whole, whole_stats = run_local_and_shared(1 << 20)
    waves, wave_stats = run_local_and_shared(resident)
    assert whole.any() and np.array_equal(waves, whole)
    # the same instructions ran, one wave after another
    assert wave_stats.thread_instructions == whole_stats.thread_instructions
    waves_run = -(-16 // max(1, resident // 64))
    assert wave_stats.steps == waves_run * whole_stats.steps  # every wave runs the whole (uniform) kernel


def test_random_schedules_in_waves_are_reproducible():
    first, _ = run_local_and_shared(128, policy="random")
    again, _ = run_local_and_shared(128, policy="random")
    whole, _ = run_local_and_shared(1 << 20)
    assert np.array_equal(first, again) and np.array_equal(first, whole)


class Recorder:
    def __init__(self):
        self.events = []

    def on_event(self, event):
        self.events.append(event)


def test_detectors_see_the_launchs_thread_block_and_warp_ids():
    rec = Recorder()
    simulate(
        kernel("cross_wave_clean.cu"), grid=8, block=32, args=["buf:256", "buf:256"], sinks=[rec],
        limits=Limits(resident_threads=64),
    )  # fmt: skip
    exits = np.sort(np.concatenate([e.threads for e in rec.events if isinstance(e, ExitEvent)]))
    assert exits.tolist() == list(range(256))
    barriers = [e for e in rec.events if isinstance(e, SyncEvent) and e.kind == "barrier"]
    for e in barriers:
        assert (e.groups == e.threads // 32).all()  # a barrier's group is the launch's block id
    assert {int(b) for e in barriers for b in e.groups} == set(range(8))
    shared = [e for e in rec.events if isinstance(e, AccessBatch) and e.space[0] == Space.SHARED]
    owners = {int(a) >> CANON_OWNER_SHIFT & CANON_OWNER_MASK for e in shared for a in e.addrs}
    assert owners == set(range(8))  # each block's shared memory has its own canonical addresses
    seqs = [e.seq for e in rec.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # one event order across the waves


def test_findings_of_a_late_wave_name_its_block():
    report = check(kernel("late_wave_out_of_bounds.cu"), grid=8, block=32, args=["buf:250"], limits=Limits(resident_threads=64))
    (finding,) = report.findings
    assert finding.kind == "out-of-bounds" and finding.count == 6
    site = finding.sites[0]
    assert site.block == (7, 0, 0) and site.thread == (26, 0, 0) and site.loc.line == 8


def test_a_shared_race_in_a_late_wave_is_in_that_block():
    report = check(kernel("late_wave_shared_race.cu"), grid=8, block=32, args=["buf:256"], limits=Limits(resident_threads=64))
    (finding,) = report.findings
    assert (finding.kind, finding.space) == ("data-race", "shared")
    assert {s.block for s in finding.sites} == {(6, 0, 0)}
    assert sorted(s.loc.line for s in finding.sites) == [11, 13]


def test_a_wait_for_a_later_wave_is_a_livelock_that_says_so():
    args = ["buf:1", "buf:1"]
    stuck = check(kernel("wait_for_later_block.cu"), grid=8, block=32, args=args, limits=Limits(resident_threads=64))
    (finding,) = stuck.findings
    assert finding.kind == "livelock" and finding.sites[0].loc.line == 12 and finding.sites[0].block == (0, 0, 0)
    assert "ran in waves of 2 blocks (--resident-threads 64)" in finding.cause
    assert "blocks 2 to 7 had not started" in finding.cause
    whole = check(kernel("wait_for_later_block.cu"), grid=8, block=32, args=args, limits=Limits(resident_threads=256))
    assert whole.findings == []


def test_memory_budget_counts_one_wave():
    module = kernel("local_and_shared.cu")
    program = build_program(module, next(iter(module.functions)))
    shared = SharedLayout([(v.name, v.size, v.align or v.elem_size) for v in program.shared_vars], 0)
    sizes = {}
    for resident in (1 << 14, 1 << 10):
        parts = launch_footprint(program, module, shared, nblocks=1 << 14, resident=resident, block_size=64,
                                 buffer_bytes=0, automatic_buffers=0)  # fmt: skip
        sizes[resident] = {p.name: p.nbytes for p in parts}
    whole, waves = sizes[1 << 14], sizes[1 << 10]
    for part in ("registers and simulator state", "local memory", "shared memory"):
        assert waves[part] * 16 == whole[part] > 0
    assert whole["thread coordinates"] == 0 < waves["thread coordinates"]  # kept for every thread in waves
    # checked before anything runs, and the message names the option that sizes the part
    launch = dict(grid=1 << 14, block=64, args=["buf:1", "buf:1"])
    with pytest.raises(UserError, match=r"registers and simulator state \(\d+ bytes per thread x 1,048,576 threads of --grid and --block\)"):
        simulate(module, **launch, limits=Limits(max_memory=60 << 20, resident_threads=1 << 20))
    with pytest.raises(UserError, match=r"x 262,144 threads at once \(--resident-threads\)"):
        simulate(module, **launch, limits=Limits(max_memory=60 << 20, resident_threads=1 << 18))


def test_cooperative_launches_run_whole():
    # a grid barrier needs every block resident: a small --resident-threads must not split the launch
    path = Path(__file__).resolve().parents[1] / "kernels" / "cooperative"
    files = sorted(path.glob("*.cu"))
    assert files
    res = check(load_module(files[0]), grid=4, block=32, args=None, cooperative=True, limits=Limits(resident_threads=32))
    assert not any(f.kind in ("livelock", "deadlock") for f in res.findings)


def test_resident_threads_option_is_checked():
    result = CliRunner().invoke(cli, ["check", str(WAVES / "cross_wave_clean.cu"), "--grid", "8", "--block", "32",
                                      "--resident-threads", "0"])  # fmt: skip
    assert result.exit_code == 2 and "--resident-threads" in result.output


def test_special_registers_of_a_later_wave_are_the_launchs():
    bufs = [np.zeros(576, dtype=np.uint32) for _ in range(4)]
    res = simulate(
        load_module(WAVES / "special_registers.cu", arch="compute_90"), grid=(6, 2), block=48, args=bufs,
        arch="compute_90", limits=Limits(resident_threads=96),
    )  # fmt: skip
    assert res.findings == []
    coords, dims, masks, clusters = bufs
    g = np.arange(576)
    block, thread = g // 48, g % 48
    assert coords.tolist() == ((block // 6) * 10000 + (block % 6) * 100 + thread).tolist()
    assert set(dims.tolist()) == {6 * 10000 + 2 * 100 + 48}
    assert masks.all()
    assert clusters.tolist() == ((block // 6) * 100).tolist()  # one block per cluster: the block's own y, rank 0


@pytest.mark.parametrize("detector", ["hb", "gwcp", "tsan", "lockset", "interval"])
def test_shared_memory_history_starts_afresh_for_each_block_of_a_later_wave(detector):
    # blocks of later waves reuse the detectors' per-byte state of earlier blocks' shared memory: a block
    # writing what an earlier block wrote is no race, and one reading before writing reads garbage
    limits = Limits(resident_threads=64)
    clean = check(kernel("cross_wave_clean.cu"), grid=8, block=32, args=["buf:256", "buf:256"], detector=detector, limits=limits)
    assert clean.findings == []
    racy = check(kernel("late_wave_shared_race.cu"), grid=8, block=32, args=["buf:256"], detector=detector, limits=limits)
    (race,) = racy.findings
    assert (race.kind, race.space) == ("data-race", "shared") and {s.block for s in race.sites} == {(6, 0, 0)}
    assert sorted(s.loc.line for s in race.sites) == [11, 13]
    garbage = check(kernel("late_wave_uninitialised.cu"), grid=8, block=32, args=["buf:256"], detector=detector, limits=limits)
    (read,) = garbage.findings
    assert (read.kind, read.space, read.sites[0].loc.line, read.sites[0].block) == ("uninitialized-read", "shared", 12, (5, 0, 0))
    assert read.count == 32
