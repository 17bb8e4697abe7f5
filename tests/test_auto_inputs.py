"""Kernels checked without arguments: the buffer usage and automatic values in reports, from the command line and the API."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from gpurace.check import check
from gpurace.cli import cli
from gpurace.report.json_format import from_json, to_json

AUTO = Path(__file__).parent / "kernels" / "auto"


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_json_reports_the_usage_of_a_buffer_written_far_away():
    result = invoke("check", AUTO / "far_write.cu", "--grid", "1", "--block", "32", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["launch"]["args"] == ["auto"]
    assert "auto_scalars" not in report["launch"]
    # elements 0..31 and element 1,000,000: two pages, the extent ends after the far element
    assert report["stats"]["buffers"] == [{"name": "a (int*)", "bytes_used": 4_000_004, "pages": 2}]


def test_json_reports_automatic_scalars_and_every_buffer():
    result = invoke("check", AUTO / "global_race.cu", "--grid", "2", "--block", "64", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["launch"]["args"] == ["auto", "auto", "auto"]
    assert report["launch"]["auto_scalars"] == [{"name": "n (int)", "value": 128}]
    assert report["stats"]["buffers"] == [
        {"name": "data (int*)", "bytes_used": 129 * 4, "pages": 1},  # thread 127 reads data[128]
        {"name": "out (int*)", "bytes_used": 128 * 4, "pages": 1},
    ]
    assert from_json(report).stats["buffers"] == report["stats"]["buffers"]


def test_text_report_has_a_line_per_automatic_argument():
    result = invoke("check", AUTO / "scalar_n.cu", "--grid", "2", "--block", "64")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    at = lines.index("automatic buffer out (int*): 128 bytes used, 1 page touched")
    assert lines[at + 1] == "automatic value n (int) = 128"
    assert lines[at + 2].startswith("1 error in fold")


def test_auto_per_parameter_on_the_command_line():
    result = invoke(
        "check", AUTO / "global_race.cu", "--grid", "1", "--block", "32", "--arg", "buf:33", "--arg", "auto", "--arg", "auto",
        "--format", "json",
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["launch"]["args"] == ["buf:33", "auto", "auto"]
    assert [b["name"] for b in report["stats"]["buffers"]] == ["out (int*)"]
    assert report["launch"]["auto_scalars"] == [{"name": "n (int)", "value": 32}]


def test_some_but_not_all_arguments_is_an_input_error():
    result = invoke("check", AUTO / "global_race.cu", "--grid", "1", "--block", "32", "--arg", "auto")
    assert result.exit_code == 2
    assert "takes 3 argument(s)" in result.output and "1 given" in result.output


def test_run_prints_usage_and_saves_the_used_part(tmp_path):
    saved = tmp_path / "args.npz"
    result = invoke("run", AUTO / "far_write.cu", "--grid", "1", "--block", "32", "--save-args", saved)
    assert result.exit_code == 0, result.output
    assert "automatic buffer a (int*): 4000004 bytes used, 2 pages touched" in result.stdout.splitlines()
    a = np.load(saved)["arg0"]
    assert a.dtype == np.int32 and len(a) == 1_000_001
    assert a[1_000_000] == -1 and (a[:32] == np.arange(32)).all() and not a[32:1_000_000].any()


def test_run_reports_out_of_bounds_before_an_automatic_buffer():
    result = invoke("run", AUTO / "before_base.cu", "--grid", "1", "--block", "32")
    assert result.exit_code == 1
    assert "4 bytes before the start of `a (int*)`" in result.stdout
    assert "automatic buffer a (int*): 124 bytes used, 1 page touched" in result.stdout


def test_python_api_without_arguments():
    report = check(AUTO / "block_sum.cu", grid=4, block=128)
    assert report.clean
    assert report.launch["args"] == ["auto", "auto", "auto"]
    assert report.launch["auto_scalars"] == [{"name": "n (int)", "value": 512}]
    assert report.stats["buffers"] == [
        {"name": "in (const float*)", "bytes_used": 512 * 4, "pages": 1},
        {"name": "sums (float*)", "bytes_used": 4 * 4, "pages": 1},
    ]
    assert to_json(report)["stats"]["buffers"] == report.stats["buffers"]
