"""The README's examples stay true: its Python example runs, and its main-job command runs the example program
and finds its race."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_python_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    (example,) = code_blocks("python")
    exec(compile(example, "README.md", "exec"), {})


def test_main_job_command_runs_the_example_program_and_reports_its_race():
    first = code_blocks("sh")[0].strip()
    command = first.split("&&")[-1].strip()  # the part after setting up the environment
    argv = shlex.split(command)
    assert argv[0] == ".venv/bin/gpurace" and argv[1] == "exec"
    gpurace = Path(sys.executable).with_name("gpurace")
    result = subprocess.run([str(gpurace), *argv[1:]], cwd=ROOT, capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == "sum of 0..1023 = 523776 (expected 523776): PASSED\n"
    assert "examples/sum_app.cu:28:13: error: data race on shared memory" in result.stderr
