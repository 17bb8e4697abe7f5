"""`gpurace exec --benign-same-value`: the same-value races of every launch left out, and counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
GPURACE = str(Path(sys.executable).with_name("gpurace"))


def gpurace(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([GPURACE, *args], cwd=PROGRAMS, capture_output=True, text=True)


def test_exec_labels_then_drops_same_value_races(tmp_path: Path) -> None:
    run = gpurace("exec", "same_value_flag.cu")
    assert (run.returncode, run.stdout) == (1, "found 1\n")
    assert "same_value_flag.cu:13:9: warning: data race on global memory" in run.stderr
    assert "  cause: both threads wrote the same value" in run.stderr

    run = gpurace("exec", "same_value_flag.cu", "--benign-same-value")
    assert (run.returncode, run.stdout) == (0, "found 1\n")
    assert run.stderr.rstrip().endswith("no issues found in same_value_flag.cu (1 launch) (1 same-value race dropped)")

    out = tmp_path / "report.json"
    run = gpurace("exec", "same_value_flag.cu", "--benign-same-value", "--format", "json", "--output", str(out))
    assert run.returncode == 0
    report = json.loads(out.read_text())
    assert report["findings"] == [] and report["stats"]["same_value_dropped"] == 1
