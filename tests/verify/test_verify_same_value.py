"""`gpurace verify --benign-same-value`: stores of the same value excused, and nothing else.

The labelled kernels are in tests/kernels/verify/ (`same_value_*.cu`, checked
by test_verify_corpus.py); here: the default still calls such stores a race,
the text report names what was excused, and the same-value corpus of `check`
(tests/kernels/same_value/) gets proofs exactly where every race it has is
between stores that must agree.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from corpus import read_header  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
FLAG = ROOT / "tests" / "kernels" / "verify" / "same_value_flag.cu"
SAME_VALUE_DIR = ROOT / "tests" / "kernels" / "same_value"

PROVED = {"flag_shared", "flag_global_fenced", "one_writer"}
"""Kernels whose every race is between stores of one constant: proved with the option."""


def verdicts(path: Path, *options: str) -> dict[str, dict]:
    result = CliRunner().invoke(cli, ["verify", str(path), "--format", "json", "--no-confirm", *options])
    assert result.exit_code in (0, 1, 4), result.output
    (kernel,) = json.loads(result.stdout)["kernels"]
    assert kernel["unknown"] is None, kernel["unknown"]
    return {o["object"]: o for o in kernel["objects"]}


def test_without_the_option_same_value_stores_race():
    done = verdicts(FLAG)["done"]
    assert done["verdict"] == "race" and done["benign_same_value"] == []
    assert {a["status"] for a in done["alarms"]} == {"certain"}


def test_text_report_names_the_excused_stores():
    result = CliRunner().invoke(cli, ["verify", str(FLAG), "--benign-same-value"])
    assert result.exit_code == 0, result.output
    assert "  done (global): race-free\n" in result.stdout
    assert "    benign: both threads write the same value: write at tests/kernels/verify/same_value_flag.cu:13 / write at tests/kernels/verify/same_value_flag.cu:13" in result.stdout


KERNELS = sorted(SAME_VALUE_DIR.glob("*.cu"))


@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_same_value_corpus(path: Path):
    """Proved where check's races are all between stores of one constant; never where stores may differ
    (`two_lines.cu` loads its two values, which differ for other inputs)."""
    launch = shlex.split(read_header(path).launches[0])
    options = [w for flag in ("--grid", "--block") for w in (flag, launch[launch.index(flag) + 1])]
    objects = verdicts(path, "--benign-same-value", *options)
    proved = all(o["verdict"] == "race-free" for o in objects.values())
    assert proved == (path.stem in PROVED), objects
