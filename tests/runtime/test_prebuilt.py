"""`gpurace exec` on programs built already, as a user's Makefile builds them with the README's flags.

The programs of `tests/programs/` are built here with nvcc (all at once, once
for the module) and must behave under `exec` as their headers say, exactly as
when gpurace builds them. Between them they carry Zstandard-compressed PTX
(nvcc's default), LZ4-compressed PTX (`-compress-mode=speed`), machine code
beside the PTX, and no line information. Programs gpurace cannot run (static
runtime, machine code only, a damaged fatbinary, not a program) are refused
with exit status 2 and a message saying why, never a traceback.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from corpus import read_header
from gpurace.errors import UserError
from gpurace.frontend.compile import find_nvcc
from gpurace.limits import Limits
from gpurace.runtime import exec_program
from gpurace.runtime.elf import DT_NEEDED, DT_RPATH, DT_RUNPATH, ElfFile
from gpurace.runtime.fatbin import FatbinError
from gpurace.runtime.prebuilt import check_runtime

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
GPURACE = str(Path(sys.executable).with_name("gpurace"))
DOCUMENTED = ["-cudart", "shared", "-lineinfo", "-g", "-gencode", "arch=compute_75,code=compute_75"]
BUILDS = {
    "repeated_race": (["repeated_race.cu"], DOCUMENTED),
    "two_units": (
        ["two_units.cu", "parts/two_units_kernels.cu"],
        [*DOCUMENTED, "-gencode", "arch=compute_80,code=sm_80", "-compress-mode=speed"],
    ),
    "memcpy_past_end": (["memcpy_past_end.cu"], DOCUMENTED),
    "rdc_counter": (["rdc_counter.cu", "parts/rdc_device.cu"], [*DOCUMENTED, "-rdc=true"]),
    "driver_linked": (["driver_linked.cu"], [*DOCUMENTED, "-L{library_dir}", "-lcuda"]),
    "no_line_info": (["repeated_race.cu"], ["-cudart", "shared", "-gencode", "arch=compute_75,code=compute_75"]),
    "static": (["exit_code.cu"], ["-gencode", "arch=compute_75,code=compute_75"]),
    "sass_only": (["exit_code.cu"], ["-cudart", "shared", "-gencode", "arch=compute_75,code=sm_75"]),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """Every program of BUILDS, built by nvcc runs side by side (each takes a second or two)."""
    nvcc = find_nvcc()
    assert nvcc is not None, "nvcc comes with the nvidia-cuda-nvcc package"
    out = tmp_path_factory.mktemp("prebuilt")
    # where the README sends a Makefile for -lcuda: gpurace's libcuda.so
    library_dir = subprocess.run([GPURACE, "exec", "--library-dir"], capture_output=True, text=True, check=True).stdout.strip()
    runs = {
        name: subprocess.Popen(
            [str(nvcc), *(f.format(library_dir=library_dir) for f in flags), *(str(PROGRAMS / s) for s in sources), "-o", str(out / name)],
            cwd=out,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name, (sources, flags) in BUILDS.items()
    }
    for name, run in runs.items():
        log = run.communicate()[0]
        assert run.returncode == 0, f"{name}: {log}"
    return {name: out / name for name in BUILDS}


def expected_findings(path: Path) -> set[tuple[str, int]]:
    """(kind, first line) of each finding the header of `path` expects."""
    return {(kind, min(int(n) for n in lines)) for kind, *lines in (e.split() for e in read_header(path).expect if e != "clean")}


def found(result, path: Path) -> set[tuple[str, int]]:
    """(kind, first line in `path` of its sites) of each finding of `result`."""
    out = set()
    for f in result.findings:
        lines = [s.loc.line for s in f.sites if s.loc is not None and Path(s.loc.file) == path]
        out.add((f.kind, min(lines, default=-1)))
    return out


def gpurace(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([GPURACE, *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("name", ["repeated_race", "two_units", "memcpy_past_end", "rdc_counter", "driver_linked"])
def test_a_prebuilt_program_behaves_as_its_header_says(built, name):
    path = PROGRAMS / f"{name}.cu"
    header = read_header(path)
    result = exec_program(built[name], header.extra.get("args", [""])[0].split(), capture_output=True)
    assert result.stdout.splitlines() == header.extra.get("stdout", []), result.stderr
    assert found(result, path) == expected_findings(path), [f.cause for f in result.findings]
    assert result.exit_code() == int(header.extra["exit"][0]), (result.errors, result.stderr)
    assert result.launches == int(header.extra.get("launches", ["0"])[0]) and result.errors == []


def test_the_command_runs_a_prebuilt_program_with_its_arguments(built):
    run = gpurace("exec", str(built["repeated_race"]), "--", "2", "9", cwd=PROGRAMS)
    assert run.stdout == "round 0: 2016\nround 1: 4032\nscale 9\n"
    assert run.returncode == 1
    assert "repeated_race.cu:24:5: warning: data race on global memory" in run.stderr
    assert "exposed by: launch 2 of publish (grid 1x1x1, block 64x1x1) at repeated_race.cu:35" in run.stderr


def test_without_line_information_findings_name_the_kernel(built):
    result = exec_program(built["no_line_info"], ["2"], capture_output=True)
    assert result.stdout == "round 0: 2016\nround 1: 4032\nscale 1\n" and result.launches == 4
    (finding,) = result.findings
    assert finding.kind == "data-race" and result.exit_code() == 1
    assert all(s.loc is None and s.function == "_Z7publishPKiPi" for s in finding.sites)


def test_build_options_do_not_apply_to_a_prebuilt_program(built):
    with pytest.raises(UserError, match="is built already: -D applies only to building"):
        exec_program(built["repeated_race"], defines=["N=1"])
    with pytest.raises(UserError, match="one program built already, not both"):
        exec_program([built["repeated_race"], PROGRAMS / "leak.cu"])


def test_a_statically_linked_program_is_refused_with_the_flags_to_rebuild_with(built):
    run = gpurace("exec", str(built["static"]), cwd=built["static"].parent)
    assert run.returncode == 2 and run.stdout == ""
    assert f"gpurace: error: {built['static']}: gpurace exec cannot run this program: it is not linked against the shared CUDA runtime" in run.stderr
    assert "`nvcc -cudart shared -lineinfo -g -gencode arch=compute_75,code=compute_75 ...`" in run.stderr


def test_a_program_with_machine_code_only_is_refused(built):
    with pytest.raises(UserError, match=r"it carries only machine code \(SASS\) for its kernels, no PTX\. Rebuild it with `nvcc -cudart shared"):
        exec_program(built["sass_only"])


def test_a_file_that_is_not_a_program_is_refused(tmp_path):
    script = tmp_path / "app"
    script.write_text("#!/bin/sh\necho hello\n")
    script.chmod(0o755)
    run = gpurace("exec", "app", cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("gpurace: error: app: gpurace exec builds programs from .cu and .hip sources")


def damaged(built, tmp_path, name: str, change) -> Path:
    """A copy of program `name` whose `.nv_fatbin` section `change(bytearray)` has edited in place."""
    data = bytearray(built[name].read_bytes())
    with ElfFile(built[name], Limits()) as elf:
        section = elf.section(".nv_fatbin")
    fatbin = data[section.offset : section.offset + section.size]
    change(fatbin)
    data[section.offset : section.offset + section.size] = fatbin
    path = tmp_path / name
    path.write_bytes(bytes(data))
    path.chmod(0o755)
    return path


def test_a_damaged_fatbinary_is_refused_cleanly(built, tmp_path):
    def oversized_container(fatbin):
        struct.pack_into("<Q", fatbin, 8, 1 << 40)

    path = damaged(built, tmp_path, "repeated_race", oversized_container)
    run = gpurace("exec", str(path), cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.startswith(f"gpurace: error: {path} (.nv_fatbin): the fatbinary container at byte 0 runs past the end")


def first_ptx_payload(fatbin) -> tuple[int, int]:
    """(offset, size) of the payload of the first PTX entry of a `.nv_fatbin` section (containers laid end to end)."""
    pos = 0
    while True:
        _magic, _version, header, size = struct.unpack_from("<IHHQ", fatbin, pos)
        entry, end = pos + header, pos + header + size
        while entry < end:
            kind, _version, header, size = struct.unpack_from("<HHIQ", fatbin, entry)
            if kind == 1:
                return entry + header, size
            entry += header + size
        pos = end


def test_corrupt_compressed_ptx_is_refused(built, tmp_path):
    def scramble_ptx(fatbin):
        start, size = first_ptx_payload(fatbin)
        fatbin[start + 8 : start + size - 8] = bytes((i * 37 + 11) % 256 for i in range(size - 16))

    for name, codec in (("repeated_race", "Zstandard"), ("two_units", "LZ4")):
        path = damaged(built, tmp_path, name, scramble_ptx)
        with pytest.raises(FatbinError, match=f"{codec} data is corrupt|decompresses to"):
            exec_program(path)


def test_a_truncated_program_is_refused(built, tmp_path):
    path = tmp_path / "truncated"
    path.write_bytes(built["repeated_race"].read_bytes()[:5000])
    path.chmod(0o755)
    with pytest.raises(UserError, match="not a valid ELF file"):
        exec_program(path)


def test_an_rpath_that_would_load_nvidias_runtime_is_refused(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libcudart.so.13").write_bytes(b"")
    program = tmp_path / "app"
    dynamic = {DT_NEEDED: ["libcudart.so.13"], DT_RPATH: ["/nonexistent:$ORIGIN/lib"]}
    with pytest.raises(UserError, match=rf"{tmp_path}/lib\) holds NVIDIA's libcudart.so.13"):
        check_runtime(program, dynamic, "compute_75")
    check_runtime(program, {**dynamic, DT_RUNPATH: ["$ORIGIN/lib"]}, "compute_75")  # searched after gpurace's
    with pytest.raises(UserError, match="it loads libcudart.so.12, and gpurace provides CUDA 13's runtime"):
        check_runtime(program, {DT_NEEDED: ["libcudart.so.12"]}, "compute_75")


def test_a_kernel_without_ptx_in_a_program_that_has_some_stops_it_at_the_launch(tmp_path):
    nvcc = str(find_nvcc())
    main, other = tmp_path / "main.o", tmp_path / "other.o"
    compile_unit = [nvcc, "-cudart", "shared", "-g", "-lineinfo", "-c"]
    subprocess.run([*compile_unit, *DOCUMENTED[4:], str(PROGRAMS / "two_units.cu"), "-o", str(main)], check=True)
    sass_only = ["-gencode", "arch=compute_75,code=sm_75"]
    subprocess.run([*compile_unit, *sass_only, str(PROGRAMS / "parts/two_units_kernels.cu"), "-o", str(other)], check=True)
    program = tmp_path / "mixed"
    subprocess.run([nvcc, "-cudart", "shared", str(main), str(other), "-o", str(program)], check=True)
    result = exec_program(program, capture_output=True)
    assert result.exit_code() == 2 and result.launches == 1
    (error,) = result.errors
    assert "launch of kernel read_theirs(int*), whose device code gpurace does not have" in error
