"""A kernel file, its name, its include directories and its macros are data: nothing in them runs.

nvcc hands its arguments to a shell without quoting them. Each case below
puts one shell payload, or one character a shell treats specially, into the
file name, the `-I` directory, a `-D` value and the `-D` of a GPUVerify
header of a file with host code (so nvcc compiles it), checks it, and asserts
that the payload did not run and that the file was still checked: the race in
it is found, at the user's own file and line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.frontend.compile import compile_to_ptx
from gpurace.frontend.sandbox import defines_header, shell_safe

# Each payload creates a file named PWNED in the current directory if a shell runs it.
PAYLOADS = [
    "$(touch PWNED)",
    "`touch PWNED`",
    "$(touch${IFS}PWNED)",
    ";touch PWNED;",
    "|touch PWNED|",
    "&&touch PWNED&&",
    "&touch PWNED&",
    ">PWNED",
    "<PWNED",
]
# Characters that change what a shell reads, without a command of their own.
CHARACTERS = [" ", "\t", "'", '"', "\\", "*", "?", "[x]", "{a,b}", "~", "#", "!", "(", ")", "$HOME", "%", "^", "\u00e9"]

KERNEL = """\
//--blockDim=32 --gridDim=1 -DFROM_HEADER={payload}
#include <cstdio>
#include "helper.h"

__global__ void store(int *out)
{{
    put(out);
}}

int main() {{ return 0; }}
"""
HELPER = "__device__ void put(int *out) { out[0] = threadIdx.x; }\n"


@pytest.mark.parametrize("payload", PAYLOADS + CHARACTERS, ids=repr)
def test_nothing_in_names_macros_or_headers_runs(tmp_path: Path, monkeypatch, payload: str) -> None:
    monkeypatch.chdir(tmp_path)
    include = tmp_path / f"inc{payload}"
    include.mkdir()
    (include / "helper.h").write_text(HELPER)
    source = tmp_path / f"k{payload}.cu"
    source.write_text(KERNEL.format(payload=payload))

    result = CliRunner().invoke(
        cli, ["check", source.name, "-I", include.name, "-D", f"FROM_CLI={payload}", "--arg", "buf:1", "--format", "json"]
    )

    assert not (tmp_path / "PWNED").exists()
    assert result.exit_code == 1, result.output
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["kind"] == "data-race" and finding["space"] == "global"
    assert {Path(a["file"]).name for a in finding["accesses"]} == {"helper.h"}
    assert {Path(a["file"]).parent.name for a in finding["accesses"]} == {include.name}


def test_a_define_value_cannot_add_lines(tmp_path: Path) -> None:
    source = tmp_path / "k.cu"
    source.write_text(KERNEL.format(payload="1").replace('#include "helper.h"', HELPER))
    result = CliRunner().invoke(cli, ["check", str(source), "-D", "X=1\n#include </etc/passwd>", "--arg", "buf:1"])
    assert result.exit_code == 2
    assert "-D 'X=1\\n#include </etc/passwd>'" in result.stderr and "control characters" in result.stderr


def test_a_missing_include_directory_is_named(tmp_path: Path) -> None:
    source = tmp_path / "k.cu"
    source.write_text(HELPER + "__global__ void k(int *out) { put(out); }\n")
    result = CliRunner().invoke(cli, ["check", str(source), "--grid", "1", "--block", "1", "-I", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert f"-I '{tmp_path / 'nowhere'}': no such directory" in result.stderr


def test_macros_become_defines_not_options() -> None:
    assert defines_header(["A", "B=2", "C=$(x)"]) == "#define A 1\n#define B 2\n#define C $(x)\n"


@pytest.mark.parametrize("path, safe", [("/tmp/a-b_c.d/k+1.cu", True), ("a b.cu", False), ("$(x).cu", False), ("-rf", False)])
def test_shell_safe_paths(path: str, safe: bool) -> None:
    assert shell_safe(path) is safe


def test_line_information_naming_a_device_is_not_read(tmp_path: Path) -> None:
    """A crafted `.file "/dev/zero"` must not hang the report (which shows source lines) or the search for
    parameter names: only regular files of bounded size are read. Run apart, with a time limit."""
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(int *x) { x[0] = threadIdx.x; }\n")
    ptx = compile_to_ptx(source).text
    crafted = tmp_path / "k.ptx"
    crafted.write_text(re.sub(r'\.file\s+1\s+"[^"]*"', '.file 1 "/dev/zero"', ptx))
    gpurace = [sys.executable, "-c", "from gpurace.cli import main; main()"]
    command = [*gpurace, "check", str(crafted), "--grid", "1", "--block", "2", "--arg", "buf:1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("/dev/zero:1:17: error: data race on global memory (arg0 (int*)[+0])")
