"""The programs of `tests/programs/` under `gpurace exec`: output, exit status and findings as their headers say.

Each program is built and run once (nvcc takes a second or two); every test
of a program reads that one run.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from corpus import hip_marks, read_header
from gpurace.check import check
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.ptx.debuginfo import display_path, user_frame
from gpurace.limits import Limits
from gpurace.runtime import ExecResult, exec_program

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
FILES = sorted([*PROGRAMS.glob("*.cu"), *PROGRAMS.glob("*.hip")])
CASES = [pytest.param(p, marks=hip_marks(p), id=p.stem) for p in FILES]


@cache
def run(path: Path) -> ExecResult:
    header = read_header(path)
    sources = [path, *(PROGRAMS / part for part in header.extra.get("with", []))]
    args = header.extra.get("args", [""])[0].split()
    flags = header.extra.get("nvcc_flags", [""])[0].split()
    arch = header.extra.get("arch", [DEFAULT_ARCH])[0]
    return exec_program(sources, args, arch=arch, nvcc_flags=flags, leak_check="leak_check" in header.extra, capture_output=True)


def expected_findings(path: Path) -> set[tuple]:
    """(kind, line) or (kind, line, line) per expected finding (see tests/programs/README.md)."""
    lines = read_header(path).expect
    if lines == ["clean"]:
        return set()
    return {(kind, *sorted(int(n) for n in numbers)) for kind, *numbers in (item.split() for item in lines)}


def found(result: ExecResult, path: Path, expected: set[tuple]) -> set[tuple]:
    """Each finding as `expected` states it: (kind, both of its sites' lines in `path`) where a finding of its kind
    is expected at both, else (kind, the first of those lines)."""
    out = set()
    for f in result.findings:
        frames = [user_frame(s.loc) for s in f.sites if s.loc is not None]  # the user's line of an inlined header call
        lines = [loc.line for loc in frames if Path(loc.file) == path]
        both = (f.kind, *sorted(lines))
        out.add(both if len(lines) == 2 and both in expected else (f.kind, lines[0] if lines else -1))
    return out


@pytest.mark.parametrize("path", CASES)
def test_program_prints_what_a_gpu_prints(path):
    result = run(path)
    assert result.stdout.splitlines() == read_header(path).extra.get("stdout", []), result.stderr


@pytest.mark.parametrize("path", CASES)
def test_program_findings_and_exit_status(path):
    header = read_header(path)
    result = run(path)
    expected = expected_findings(path)
    assert found(result, path, expected) == expected, [f.cause for f in result.findings]
    assert result.exit_code() == int(header.extra["exit"][0]), (result.errors, result.stderr)
    assert result.launches == int(header.extra.get("launches", ["0"])[0])
    assert result.replayed == int(header.extra.get("replayed", ["0"])[0])
    for text in header.extra.get("expect_error", []):
        assert any(text in e for e in result.errors), result.errors
    if "expect_error" not in header.extra:
        assert result.errors == []


def test_device_code_calling_into_another_file_needs_relocatable_device_code():
    result = exec_program([PROGRAMS / "rdc_counter.cu", PROGRAMS / "parts" / "rdc_device.cu"], capture_output=True)
    assert result.exit_code() == 2 and result.launches == 1
    assert any("calls scaled, whose body is not in the PTX" in e and "--nvcc-flag=-rdc=true" in e for e in result.errors), result.errors


HIP_HOST_FREE = PROGRAMS / "hip_host_free.hip"


@pytest.mark.parametrize("path", [pytest.param(HIP_HOST_FREE, marks=hip_marks(HIP_HOST_FREE), id="hip_host_free")])
def test_a_hip_programs_findings_name_hips_calls(path):
    (finding,) = run(path).findings
    assert finding.cause.startswith("hipFree of `hipHostMalloc#1`, memory that hipHostMalloc allocated at ")
    assert finding.cause.endswith(": it must be freed with hipHostFree")
    assert finding.sites[0].op == "hipFree" and finding.address.allocation == "hipHostMalloc#1"


def test_every_program_states_its_expectations():
    for path in FILES:
        header = read_header(path)
        assert header.expect or "expect_error" in header.extra, path
        assert "exit" in header.extra, path


def test_a_host_finding_names_the_call_and_the_allocation():
    (finding,) = run(PROGRAMS / "memcpy_past_end.cu").findings
    assert finding.space == "global" and finding.address.allocation == "cudaMalloc#1"
    assert finding.cause == (
        "cudaMemcpy (cudaMemcpyHostToDevice) writes 260 bytes at 0x%x: 4 bytes past the end of `cudaMalloc#1` (256 bytes)"
        % finding.address.address
    )
    (site,) = finding.sites
    assert site.thread is None and site.op == "cudaMemcpy" and site.function.startswith("main")
    assert finding.details["allocated_at"] == f"at {display_path(str(PROGRAMS / 'memcpy_past_end.cu'))}:10"


def test_a_kernel_in_a_freed_graph_allocation_is_told_it_was_freed_and_where():
    path = PROGRAMS / "graph_memory_use_after_free.cu"
    (finding,) = run(path).findings
    assert finding.kind == "out-of-bounds" and finding.space == "global"
    assert "`cudaGraphAddMemAllocNode#2` (128 bytes" in finding.cause and finding.cause.endswith("a use after free")
    assert finding.details["freed_at"] == f"at {display_path(str(path))}:27"


def test_identical_leaks_are_merged_with_a_count():
    (finding,) = run(PROGRAMS / "leak.cu").findings
    assert finding.count == 2 and finding.cause == "400 bytes allocated by cudaMalloc were never freed"


def test_a_race_in_every_launch_is_one_finding_with_its_first_launch():
    (finding,) = run(PROGRAMS / "repeated_race.cu").findings
    assert finding.kind == "data-race" and finding.space == "global"
    assert finding.launch == {
        "index": 2,
        "kernel": "publish",
        "grid": [1, 1, 1],
        "block": [64, 1, 1],
        "host": f"{display_path(str(PROGRAMS / 'repeated_race.cu'))}:35",
    }
    (one_launch,) = check(
        PROGRAMS / "repeated_race.cu", kernel="publish", grid=1, block=64, args=["buf:64", "buf:1"]
    ).findings
    assert finding.count == 3 * one_launch.count


def test_a_replayed_launch_counts_its_race_as_a_simulated_one_would():
    (finding,) = run(PROGRAMS / "repeated_launches.cu").findings
    assert (finding.kind, finding.space, finding.launch["index"]) == ("data-race", "global", 16)
    (one_launch,) = check(
        PROGRAMS / "repeated_launches.cu", kernel="publish", grid=1, block=32, args=["buf:32", "buf:1"]
    ).findings
    assert finding.count == 4 * one_launch.count


def test_an_in_place_launch_on_the_same_data_replays_with_its_findings():
    result = run(PROGRAMS / "repeated_in_place.cu")
    (finding,) = result.findings
    assert (finding.kind, finding.space, finding.same_value) == ("data-race", "global", True)
    (one_launch,) = check(
        PROGRAMS / "repeated_in_place.cu", kernel="add_one", grid=2, block=128, args=["buf:256", "buf:1"]
    ).findings
    assert finding.count == 7 * one_launch.count and result.replayed == 7


def test_what_is_kept_for_replays_goes_least_recently_launched_first():
    path = PROGRAMS / "repeated_in_place_budget.cu"
    result = exec_program([path], limits=Limits(max_memory=256 << 20), capture_output=True)
    assert result.stdout == "8 8\n" and result.errors == []
    assert (result.launches, result.replayed) == (15, 8)  # copy_big 1, restore 4, add_table 3


def test_a_replayed_launch_races_with_a_copy_as_it_did_when_it_ran():
    (finding,) = run(PROGRAMS / "repeated_stream_race.cu").findings
    assert [site.loc.line for site in finding.sites] == [17, 31] and finding.count == 3


def test_a_stream_race_names_both_operations_and_their_streams():
    (finding,) = run(PROGRAMS / "stream_copy_race.cu").findings
    assert finding.kind == "data-race" and finding.space == "global"
    assert (finding.address.allocation, finding.address.offset) == ("cudaMalloc#1", 0)
    kernel, copy = finding.sites
    assert (kernel.op, kernel.loc.line, kernel.function) == ("write", 15, "_Z7producePi")
    assert (copy.op, copy.loc.line, copy.thread) == ("cudaMemcpyAsync", 30, None)
    where = display_path(str(PROGRAMS / "stream_copy_race.cu"))
    assert finding.cause.startswith(
        f"kernel produce (launched at {where}:28) on stream 1 writes these bytes and cudaMemcpyAsync at {where}:30 "
        "on stream 2 reads them, and nothing orders the two"
    )
    assert finding.launch["index"] == 1 and finding.launch["kernel"] == "produce"


def test_a_host_access_before_waiting_is_a_race_with_the_work_it_did_not_wait_for():
    findings = run(PROGRAMS / "host_reads_too_early.cu").findings
    host_sides = sorted((f.sites[1].op, f.sites[1].loc.line, f.address.allocation) for f in findings)
    assert host_sides == [("read", 28, "cudaMallocManaged#1"), ("read", 29, "cudaMallocHost#2")]
    assert all(f.sites[1].thread is None and f.cause.endswith("orders the two") for f in findings)


def test_host_code_touching_device_memory_crashes_as_on_a_gpu():
    result = run(PROGRAMS / "host_touches_device_memory.cu")
    assert result.status == 128 + 11  # SIGSEGV
    (finding,) = result.findings
    assert finding.cause.startswith("the host writes `cudaMalloc#1` (256 bytes) at offset 8")


def test_an_uninitialised_read_names_the_line_that_allocated_the_memory():
    (finding,) = run(PROGRAMS / "uninitialized_malloc.cu").findings
    where = f"{display_path(str(PROGRAMS / 'uninitialized_malloc.cu'))}:24"
    assert finding.details["allocated_at"] == where
    assert finding.cause.endswith(f"(`cudaMalloc#1` was allocated at {where})")


def test_an_uninitialised_read_a_forked_schedule_makes_is_counted_with_the_others():
    # lane 32 wins the claim under reverse (forked from schedule 0's run), random and flip (forked): three reads,
    # the forked schedules' sent back from their processes (`GlobalInitCheck.absorb`)
    (finding,) = run(PROGRAMS / "uninitialized_read_other_winner.cu").findings
    assert (finding.kind, finding.space, finding.sites[0].loc.line, finding.count) == ("uninitialized-read", "global", 16, 3)
    assert finding.sites[0].thread == (32, 0, 0)
