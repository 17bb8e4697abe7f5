"""The README's examples stay true: its Python example runs, and its main-job command runs the example program
and finds its race."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_python_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    (example,) = code_blocks("python")
    exec(compile(example, "README.md", "exec"), {})


def section(title: str) -> str:
    """The README's text under the heading `## title`, up to the next heading of that level."""
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="CuPy is not installed (pip install -e '.[test,cupy]')")
def test_cupy_examples_run(monkeypatch):
    """The CuPy section's examples, each in a fresh namespace, with CuPy's reduction accelerators restored after."""
    from cupy._core import _accelerator

    monkeypatch.chdir(ROOT)
    examples = re.findall(r"```py\n(.*?)```", section("Python kernels (CuPy)"), flags=re.S)
    assert len(examples) == 3
    saved = _accelerator.get_reduction_accelerators()
    try:
        for example in examples:
            exec(compile(example, "README.md", "exec"), {})
    finally:
        _accelerator.set_reduction_accelerators(saved)


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
