"""HIP sources through HIP's NVIDIA path (gpurace.frontend.hip): results against NumPy, races by kind, memory
space and source line, the 32-lane warp note, where HIP's headers are found and what is refused.

The corpus runners check the `tests/kernels/hip/` headers too; these tests run the same kernels on chosen inputs.
Every test here needs HIP's headers (Debian's libamdhip64-dev; `.ci/hip-headers` unpacks them into ~/.cache/gpurace/hip).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from corpus import HIP_SKIP_REASON, hip_headers_found

import gpurace
from gpurace.api import check
from gpurace.cli import cli
from gpurace.frontend import hip
from gpurace.frontend.compile import compile_to_ptx

pytestmark = pytest.mark.skipif(not hip_headers_found(), reason=HIP_SKIP_REASON)

HIP_DIR = Path(__file__).resolve().parents[1] / "kernels" / "hip"
CUDA_DIR = Path(__file__).resolve().parents[1] / "kernels" / "cupy"


def _cli(*args: str):
    return CliRunner().invoke(cli, list(args))


def _findings(report) -> list[tuple]:
    return sorted((f.kind, f.space, tuple(sorted(s.loc.line for s in f.sites))) for f in report.findings)


def _files(report) -> set[str]:
    return {Path(s.loc.file).name for f in report.findings for s in f.sites}


# --------------------------------------------------------------------------
# Results against NumPy, racy and race-free twins
# --------------------------------------------------------------------------


def test_shared_memory_reduction_sums_each_block():
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(1, np.float32)
    result = gpurace.run(HIP_DIR / "reduce_shared.hip", grid=2, block=128, args=[x, out, 256])
    assert out[0] == np.float32(x.sum())
    report = check(HIP_DIR / "reduce_shared.hip", grid=2, block=128, args=[x, np.zeros(1, np.float32), 256])
    assert report.clean and result is not None


def test_reduction_missing_a_barrier_races_on_shared_memory_at_its_line():
    x = np.arange(256, dtype=np.float32)
    report = check(HIP_DIR / "reduce_missing_barrier.hip", grid=2, block=128, args=[x, np.zeros(1, np.float32), 256])
    assert _findings(report) == [("data-race", "shared", (20, 20))]
    assert _files(report) == {"reduce_missing_barrier.hip"}


def test_histogram_with_atomics_counts_every_value():
    values = np.random.default_rng(1).integers(0, 1000, 128).astype(np.int32)
    bins = np.zeros(8, np.int32)
    gpurace.run(HIP_DIR / "histogram_atomic.hip", grid=2, block=64, args=[values, bins, 128, 8])
    assert bins.tolist() == np.bincount(values % 8, minlength=8).tolist()
    assert check(HIP_DIR / "histogram_atomic.hip", grid=2, block=64, args=[values, np.zeros(8, np.int32), 128, 8]).clean


def test_histogram_without_atomics_races_on_global_memory():
    values = np.arange(128, dtype=np.int32)
    report = check(HIP_DIR / "histogram_plain.hip", grid=2, block=64, args=[values, np.zeros(8, np.int32), 128, 8])
    assert _findings(report) == [("data-race", "global", (12, 12))]


def test_warp_shift_with_syncwarp_shifts_and_is_clean():
    x = np.arange(32, dtype=np.float32) * 2
    y = np.zeros(32, np.float32)
    gpurace.run(HIP_DIR / "warp_shift_syncwarp.hip", grid=1, block=32, args=[x, y])
    assert y.tolist() == np.roll(x, -1).tolist()
    assert check(HIP_DIR / "warp_shift_syncwarp.hip", grid=1, block=32, args=[x, np.zeros(32, np.float32)]).clean


def test_warp_shift_without_syncwarp_is_an_intra_warp_race():
    x = np.arange(32, dtype=np.float32)
    report = check(HIP_DIR / "warp_shift.hip", grid=1, block=32, args=[x, np.zeros(32, np.float32)])
    assert _findings(report) == [("data-race", "shared", (15, 16))]
    assert "same warp" in report.findings[0].cause


def test_hip_warp_votes_and_shuffles_run_as_cuda_sync_forms(tmp_path):
    """HIP's mask-less __ballot/__any/__all (the compatibility header) and __shfl_down/__shfl_xor (HIP's header)."""
    path = tmp_path / "votes.hip"
    path.write_text(
        "#include <hip/hip_runtime.h>\n"
        "__global__ void votes(const int* x, unsigned long long* ballot, int* any, int* all, int* sum) {\n"
        "    int t = hipThreadIdx_x;\n"
        "    int v = x[t];\n"
        "    ballot[t] = __ballot(v & 1);\n"
        "    any[t] = __any(v == 5);\n"
        "    all[t] = __all(v >= 0);\n"
        "    for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);\n"
        "    v = __shfl(v, 0);\n"
        "    sum[t] = v + (__shfl_xor(t, 1) ^ 1) - t;\n"
        "}\n"
    )
    x = np.arange(32, dtype=np.int32)
    ballot, any_, all_, total = np.zeros(32, np.uint64), np.zeros(32, np.int32), np.zeros(32, np.int32), np.zeros(32, np.int32)
    result = gpurace.run(path, grid=1, block=32, args=[x, ballot, any_, all_, total])
    assert ballot.tolist() == [sum(1 << i for i in range(32) if i & 1)] * 32
    assert any_.astype(bool).all() and all_.astype(bool).all()
    assert total.tolist() == [int(x.sum())] * 32
    assert not result.findings


# --------------------------------------------------------------------------
# Reports: source lines of the .hip file, the 32-lane note
# --------------------------------------------------------------------------


def test_text_and_json_reports_say_that_warp_findings_assume_32_lanes():
    args = ["check", str(HIP_DIR / "warp_shift.hip"), "--grid", "1", "--block", "32", "--arg", "buf:32", "--arg", "buf:32"]
    text = _cli(*args)
    assert text.exit_code == 1
    assert "warp_shift.hip:15:5: error: data race on shared memory" in text.output
    assert f"note: {hip.WARP_SIZE_NOTE}" in text.output
    data = json.loads(_cli(*args, "--format", "json").stdout)
    assert data["launch"]["notes"] == [hip.WARP_SIZE_NOTE]
    sarif = json.loads(_cli(*args, "--format", "sarif").stdout)
    assert hip.WARP_SIZE_NOTE in json.dumps(sarif)
    assert {Path(a["file"]).resolve() for f in data["findings"] for a in f["accesses"]} == {HIP_DIR / "warp_shift.hip"}


def test_a_clean_hip_report_carries_the_note_and_a_cuda_one_does_not():
    clean = _cli("check", str(HIP_DIR / "histogram_atomic.hip"), "--grid", "2", "--block", "64", "--format", "json")
    assert clean.exit_code == 0 and json.loads(clean.stdout)["launch"]["notes"] == [hip.WARP_SIZE_NOTE]
    cuda = _cli("check", str(CUDA_DIR / "histogram_atomic.cu"), "--grid", "2", "--block", "64", "--format", "json")
    assert cuda.exit_code == 0 and "notes" not in json.loads(cuda.stdout)["launch"]


def test_verify_states_the_warp_size_in_each_kernels_scope():
    result = _cli("verify", str(HIP_DIR / "histogram_atomic.hip"), "--format", "json")
    assert result.exit_code == 0, result.output
    (kernel,) = json.loads(result.stdout)["kernels"]
    assert hip.WARP_SIZE_NOTE in kernel["scope"]


def test_warp_size_64_is_refused_and_32_accepted():
    args = ["check", str(HIP_DIR / "histogram_atomic.hip"), "--grid", "2", "--block", "64"]
    refused = _cli(*args, "--warp-size", "64")
    assert refused.exit_code == 2
    assert "--warp-size 64" in refused.stderr and "32-lane warps only" in refused.stderr
    assert _cli(*args, "--warp-size", "32").exit_code == 0


def test_a_cu_file_written_against_hip_is_compiled_as_hip(tmp_path):
    path = tmp_path / "uses_hip.cu"
    path.write_text(
        '#include "hip/hip_runtime.h"\n__global__ void k(int* p) { p[hipThreadIdx_x] = warpSize; }\n'
    )
    compiled = compile_to_ptx(path)
    assert compiled.hip and compiled.compiler == "nvcc"
    out = np.zeros(4, np.int32)
    gpurace.run(path, grid=1, block=4, args=[out])
    assert out.tolist() == [32] * 4


def test_a_cpp_file_is_a_kernel_file_only_when_it_includes_hip(tmp_path):
    hip_cpp = tmp_path / "kernel.cpp"
    hip_cpp.write_text("#include <hip/hip_runtime.h>\n__global__ void k(int* p) { p[threadIdx.x] = 1; }\n")
    assert _cli("kernels", str(hip_cpp)).exit_code == 0
    host = tmp_path / "host.cpp"
    host.write_text("int main() { return 0; }\n")
    result = _cli("kernels", str(host))
    assert result.exit_code == 2 and "only when it is a HIP source" in result.stderr


def test_a_file_that_gets_hip_through_its_own_header_is_hip(tmp_path):
    """As in HIP's samples: `app.cpp` includes `app.hpp`, which includes hip/hip_runtime.h; `app.cpp` uses HIP's API."""
    (tmp_path / "app.hpp").write_text("#include <hip/hip_runtime.h>\n")
    path = tmp_path / "app.cpp"
    path.write_text(
        '#include "app.hpp"\n__global__ void k(int* p) { p[hipThreadIdx_x] = 2; }\n'
        "void launch(int* p) { hipLaunchKernelGGL(k, dim3(1), dim3(4), 0, 0, p); }\n"
    )
    out = np.zeros(4, np.int32)
    gpurace.run(path, grid=1, block=4, args=[out])
    assert out.tolist() == [2] * 4


def test_a_hip_file_in_latin_1_is_read_as_latin_1(tmp_path):
    """AMD's SDK samples carry a Latin-1 copyright sign; a race in such a file names its lines as usual."""
    path = tmp_path / "latin1.cpp"
    path.write_bytes(
        "// Copyright \u00a9 AMD\n#include <hip/hip_runtime.h>\n"
        "__global__ void k(int* p) { p[0] = hipThreadIdx_x; }\n".encode("latin-1")
    )
    report = check(path, grid=1, block=2, args=[np.zeros(1, np.int32)])
    assert _findings(report) == [("data-race", "global", (3, 3))]
    not_hip = tmp_path / "latin1.cu"
    not_hip.write_bytes("// \u00a9\n__global__ void k(int* p) { p[0] = 1; }\n".encode("latin-1"))
    result = _cli("kernels", str(not_hip))
    assert result.exit_code == 2 and "not a UTF-8 text file" in result.stderr


def test_a_hip_compile_error_names_the_hip_file_and_line(tmp_path):
    path = tmp_path / "broken.hip"
    path.write_text("#include <hip/hip_runtime.h>\n\n__global__ void k(int* p) { p[0] = undefined_name; }\n")
    result = _cli("kernels", str(path))
    assert result.exit_code == 2
    assert "broken.hip(3)" in result.stderr and "undefined_name" in result.stderr
    assert "CUDA_11010" not in result.stderr  # HIP 5.2's own warning is left out of the log
    assert "Traceback" not in result.output


# --------------------------------------------------------------------------
# Finding HIP's headers
# --------------------------------------------------------------------------


def _unique_kernel(tmp_path: Path, name: str = "k.hip") -> Path:
    """A HIP file whose bytes no other test compiles (conftest remembers compiles by content, not by HIP_PATH)."""
    path = tmp_path / name
    path.write_text(f"#include <hip/hip_runtime.h>\n// {tmp_path}\n__global__ void k(int* p) {{ p[0] = 1; }}\n")
    return path


def test_without_headers_a_hip_file_is_an_input_error_saying_how_to_install_them(tmp_path, monkeypatch):
    monkeypatch.delenv("HIP_PATH", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(hip, "SEARCHED_ROOTS", (str(tmp_path / "nowhere"),))
    result = _cli("kernels", str(_unique_kernel(tmp_path)))
    assert result.exit_code == 2
    assert "HIP's headers" in result.stderr and "apt-get install --no-install-recommends libamdhip64-dev" in result.stderr
    assert "dpkg -x" in result.stderr and "Traceback" not in result.output


def test_a_hip_path_without_headers_is_an_error_naming_it(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("HIP_PATH", str(empty))
    result = _cli("kernels", str(_unique_kernel(tmp_path)))
    assert result.exit_code == 2 and str(empty) in result.stderr
    result = _cli("kernels", str(_unique_kernel(tmp_path)), "--hip-path", str(tmp_path / "missing"))
    assert result.exit_code == 2 and "--hip-path" in result.stderr and "no such directory" in result.stderr


def test_hip_path_takes_the_root_or_its_include_folder(tmp_path, monkeypatch):
    include = hip.find_hip_include_dir()
    assert include is not None
    for given in (include.parent, include):
        monkeypatch.delenv("HIP_PATH", raising=False)
        result = _cli("kernels", str(_unique_kernel(tmp_path, f"k{len(str(given))}.hip")), "--hip-path", str(given))
        assert result.exit_code == 0, result.output


def test_hip_headers_are_found_in_the_user_cache(tmp_path, monkeypatch):
    """Where `dpkg -x libamdhip64-dev_*.deb ~/.cache/gpurace/hip` puts them (the README's first line)."""
    include = hip.find_hip_include_dir()
    cache = tmp_path / "cache"
    (cache / "gpurace" / "hip" / "usr" / "include").mkdir(parents=True)
    (cache / "gpurace" / "hip" / "usr" / "include" / "hip").symlink_to(include / "hip")
    monkeypatch.delenv("HIP_PATH", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(hip, "SEARCHED_ROOTS", (str(tmp_path / "nowhere"),))
    assert hip.find_hip_include_dir() == cache / "gpurace" / "hip" / "usr" / "include"


def test_hip_headers_are_found_in_a_system_root(tmp_path, monkeypatch):
    include = hip.find_hip_include_dir()
    root = tmp_path / "rocm"
    (root / "include").mkdir(parents=True)
    (root / "include" / "hip").symlink_to(include / "hip")
    monkeypatch.delenv("HIP_PATH", raising=False)
    monkeypatch.setattr(hip, "SEARCHED_ROOTS", (str(root),))
    assert hip.find_hip_include_dir() == root / "include"


# --------------------------------------------------------------------------
# Untrusted file names and contents
# --------------------------------------------------------------------------


def test_a_file_name_a_shell_would_interpret_stays_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "pwned"
    path = tmp_path / "k $(touch pwned) `touch pwned`;.hip"
    shutil.copy(HIP_DIR / "warp_shift.hip", path)
    report = check(path, grid=1, block=32, args=[np.zeros(32, np.float32), np.zeros(32, np.float32)])
    assert not marker.exists()
    assert _findings(report) == [("data-race", "shared", (15, 16))]
    assert {s.loc.file for f in report.findings for s in f.sites} == {str(path)}


def test_a_hip_include_path_a_shell_would_interpret_is_reached_safely(tmp_path, monkeypatch):
    include = hip.find_hip_include_dir()
    marker = tmp_path / "pwned"
    monkeypatch.chdir(tmp_path)
    odd = tmp_path / "hip $(touch pwned)"
    (odd / "include").mkdir(parents=True)
    (odd / "include" / "hip").symlink_to(include / "hip")
    monkeypatch.setenv("HIP_PATH", str(odd))
    assert _cli("kernels", str(_unique_kernel(tmp_path))).exit_code == 0
    assert not marker.exists()


def test_pragmas_in_the_file_do_not_become_compiler_options(tmp_path):
    """A HIP file's text reaches nvcc only as the text of a source file: no line of it becomes an option."""
    path = tmp_path / "opts.hip"
    path.write_text("#include <hip/hip_runtime.h>\n// -o /tmp/x --run\n__global__ void k(int* p) { p[0] = 1; }\n")
    assert _cli("kernels", str(path)).exit_code == 0


# --------------------------------------------------------------------------
# Whole HIP programs under exec
# --------------------------------------------------------------------------


def test_a_hip_program_runs_under_exec_and_its_race_names_the_hip_line(tmp_path):
    program = Path(__file__).resolve().parents[1] / "programs" / "hip_histogram.hip"
    result = _cli("exec", str(program), "--format", "json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stderr[result.stderr.index("{") :])
    assert data["launch"]["notes"] == [hip.WARP_SIZE_NOTE]
    (finding,) = data["findings"]
    assert finding["kind"] == "data-race" and finding["space"] == "global"
    assert {(Path(a["file"]).name, a["line"]) for a in finding["accesses"]} == {("hip_histogram.hip", 21)}


@pytest.mark.parametrize(
    "cuda, hip_text",
    [
        ("cudaMemcpy (cudaMemcpyHostToDevice) writes", "hipMemcpy (hipMemcpyHostToDevice) writes"),
        ("cudaFree of `cudaMallocHost#1`: free it with cudaFreeHost", "hipFree of `hipHostMalloc#1`: free it with hipHostFree"),
        ("cudaHostAlloc#2 failed with cudaErrorLaunchFailure", "hipHostMalloc#2 failed with hipErrorLaunchFailure"),
        ("__cudaPushCallConfiguration in cuda_runtime.h, CUDA C++", "__cudaPushCallConfiguration in cuda_runtime.h, CUDA C++"),
    ],
)
def test_the_runtimes_names_are_spelt_as_hip_spells_them(cuda, hip_text):
    assert hip.hip_spelling(cuda) == hip_text
