"""`check --record` then `analyze`: the recorded trace gives exactly the findings of the check that recorded it.

Runs corpus kernels (tests/kernels/check/) through the command line with the
launch of their `@launch` header, racy and race-free, barrier-only (interval
detector) and fence/lock/atomic ones (happens-before), and compares every
finding: kind, space, cause, address and both sites with their source lines.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpus import read_header
from gpurace.cli import cli

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "check"
CASES = [
    ("reduce_all_barriers.cu", "auto"),
    ("reduce_no_last_barrier.cu", "auto"),
    ("reduce_no_last_barrier.cu", "hb"),
    ("lock_device.cu", "auto"),
    ("lock_block_fence_across_blocks.cu", "auto"),
    ("mp_device_fences.cu", "auto"),
    ("mp_no_producer_fence.cu", "auto"),
    ("warp_sync_present.cu", "auto"),
    ("warp_sync_missing.cu", "auto"),
    ("atomic_block_scope_across_blocks.cu", "auto"),
]


def run(args: list[str]) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("name, detector", CASES, ids=[f"{n[:-3]}-{d}" for n, d in CASES])
def test_analyze_of_recording_equals_check(tmp_path, name, detector):
    path = KERNELS / name
    launch = shlex.split(read_header(path).launches[0])
    trace = tmp_path / "run.trace"
    code, checked = run(["check", str(path), *launch, "--detector", detector, "--format", "json", "--record", str(trace)])
    assert trace.read_bytes()[:2] == b"PK"
    again, analyzed = run(["analyze", str(trace), "--detector", detector, "--format", "json"])
    assert again == code
    assert analyzed["findings"] == checked["findings"]
    assert analyzed["launch"]["detector"] == checked["launch"]["detector"]
    assert (analyzed["kernel"], analyzed["launch"]["grid"], analyzed["launch"]["block"]) == (
        checked["kernel"], checked["launch"]["grid"], checked["launch"]["block"]
    )


def test_recorded_corpus_covers_racy_and_clean():
    verdicts = {read_header(KERNELS / n).expect[0] == "clean" for n, _ in CASES}
    assert verdicts == {True, False}


def test_record_refuses_several_launches(tmp_path):
    path = KERNELS / "reduce_all_barriers.cu"
    launch = shlex.split(read_header(path).launches[0])
    result = CliRunner().invoke(cli, ["check", str(path), *launch, "--schedules", "2", "--record", str(tmp_path / "t")])
    assert result.exit_code == 2 and "--record records one launch" in result.output
