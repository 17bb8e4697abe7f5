"""Building a whole program for `gpurace exec`: nothing reaches nvcc's shell, and reports name the user's files."""

from __future__ import annotations

import pytest

from gpurace.errors import UserError
from gpurace.runtime import exec_program
from gpurace.runtime.build import check_nvcc_flag, device_flags, relocatable

PROGRAM = r"""#include <cstdio>
#include "message.h"

int main() {
    char *d;
    cudaMalloc(&d, 8);
    cudaMemset(d, 0, 9);
    printf("%s %d\n", MESSAGE, VALUE);
    return 0;
}
"""


@pytest.mark.parametrize(
    "flag", ["-std=c++17", "--use_fast_math", "-Xcompiler", "-fopenmp", "-gencode=arch=compute_75,code=sm_75", "-lm", "-rdc=true"]
)
def test_plain_nvcc_options_are_passed(flag):
    assert check_nvcc_flag(flag) == flag


@pytest.mark.parametrize(
    "flag, why",
    [
        ("-Xcompiler=$(touch x)", "letters, digits"),
        ("-I dir", "letters, digits"),
        ("-lm;ls", "letters, digits"),
        ("std=c++17", "letters, digits"),
        ("-DN=4", "gpurace's own -D"),
        ("-o", "chooses this itself"),
        ("--cudart=static", "chooses this itself"),
        ("-c", "chooses this itself"),
        ("-dc", "chooses this itself"),
    ],
)
def test_other_nvcc_options_are_refused(flag, why):
    with pytest.raises(UserError, match=why):
        check_nvcc_flag(flag)


@pytest.mark.parametrize("flags, linked", [(["-rdc=true"], True), (["--relocatable-device-code=true"], True), (["-rdc=false"], False), ([], False)])
def test_relocatable_device_code_is_asked_for_by_its_flag(flags, linked):
    assert relocatable(flags) is linked


def test_the_device_code_is_compiled_with_the_builds_options_but_the_linkers_and_targets():
    flags = ["-std=c++17", "-lcuda", "-L/opt/lib", "-Xlinker", "-Bsymbolic", "--expt-relaxed-constexpr",
             "-gencode=arch=compute_80,code=sm_80", "-arch=sm_80", "-rdc=true", "-Xcompiler", "-fopenmp",
             "-lineinfo", "--use_fast_math"]  # fmt: skip
    assert device_flags(flags) == (
        "-std=c++17", "--expt-relaxed-constexpr", "-Xcompiler", "-fopenmp", "-lineinfo", "--use_fast_math"
    )


def test_device_options_are_checked_as_the_builds_are():
    with pytest.raises(UserError, match="letters, digits"):
        device_flags(["-Xcompiler=$(touch x)"])


def test_a_program_in_a_folder_a_shell_would_misread(tmp_path, capfd):
    """Paths with `$(...)` and spaces reach nvcc through safe names, the macros through a header; the report and
    the program's own output are what they would be anywhere else, and its stdout passes through."""
    folder = tmp_path / "my $(touch pwned) app"
    folder.mkdir()
    (folder / "message.h").write_text("#define VALUE 7\n")
    source = folder / "main; ls.cu"
    source.write_text(PROGRAM)
    result = exec_program(source, include_dirs=[folder], defines=['MESSAGE="hello world"'])
    assert capfd.readouterr().out == "hello world 7\n"
    assert not (tmp_path / "pwned").exists() and not list(tmp_path.rglob("pwned"))
    (finding,) = result.findings
    assert finding.kind == "out-of-bounds" and "1 byte past the end" in finding.cause
    assert (finding.sites[0].loc.file, finding.sites[0].loc.line) == (str(source), 7)
    assert result.exit_code() == 1 and result.status == 0
