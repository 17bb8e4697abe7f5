"""Compiling .cu/.ptx inputs to PTX: NVRTC, nvcc from PATH and nvcc from the PyPI wheel."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.errors import CompileError, UserError
from gpurace.frontend import compile as compile_mod
from gpurace.frontend.compile import compile_to_ptx, find_nvcc, has_host_code, normalize_arch, pypi_cuda_roots

DEVICE_ONLY = """\
__global__ void twice(int* p)
{
    p[threadIdx.x] *= 2;
}
"""

WITH_HOST = """\
#include <cstdio>
__global__ void twice(int* p)
{
    p[threadIdx.x] *= 2;
}
int main()
{
    int* d;
    cudaMalloc(&d, 128);
    twice<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    printf("ok\\n");
    return 0;
}
"""

USES_MACROS = """\
#include "config.h"
#ifndef FACTOR
#error FACTOR must be defined
#endif
__global__ void store(int* p)
{
    p[0] = FACTOR * BASE;
}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def only_pypi_nvcc(monkeypatch):
    """A PATH without any system CUDA and no $CUDA_HOME: only the wheel's nvcc can be found."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    nvcc = find_nvcc()
    assert nvcc is not None
    assert any(nvcc == root / "bin" / "nvcc" for root in pypi_cuda_roots())
    return nvcc


def test_ptx_is_read_as_it_is(tmp_path):
    text = ".version 8.0\n.target sm_75\n.address_size 64\n"
    path = _write(tmp_path, "k.ptx", text)
    out = compile_to_ptx(path)
    assert (out.text, out.compiler) == (text, "ptx")


def test_device_only_source_goes_through_nvrtc_with_line_info(tmp_path):
    path = _write(tmp_path, "twice.cu", DEVICE_ONLY)
    out = compile_to_ptx(path)
    assert out.compiler == "nvrtc"
    assert ".entry _Z5twicePi" in out.text
    assert f'.file\t1 "{path.resolve()}"' in out.text or f'.file 1 "{path.resolve()}"' in out.text
    assert re.search(r"\.loc\s+1\s+3\s+\d+", out.text), "no .loc for line 3"


def test_host_code_goes_through_nvcc(tmp_path):
    path = _write(tmp_path, "host.cu", WITH_HOST)
    out = compile_to_ptx(path)
    assert out.compiler == "nvcc"
    assert ".entry _Z5twicePi" in out.text
    assert re.search(r"\.loc\s+\d+\s+4\s+\d+", out.text)


def test_nvrtc_rejection_falls_back_to_nvcc(tmp_path):
    # NVRTC ships no <climits>; nvcc uses the host compiler's.
    path = _write(tmp_path, "limits.cu", "#include <climits>\n__global__ void k(int* p) { p[0] = INT_MAX; }\n")
    assert not has_host_code(path.read_text())
    out = compile_to_ptx(path)
    assert out.compiler == "nvcc"
    assert "2147483647" in out.text


def test_pypi_nvcc_compiles_host_code_without_system_cuda(tmp_path, only_pypi_nvcc):
    path = _write(tmp_path, "host.cu", WITH_HOST)
    out = compile_to_ptx(path)
    assert (out.compiler, out.compiler_path) == ("nvcc", str(only_pypi_nvcc))
    assert ".entry _Z5twicePi" in out.text


def test_pypi_toolchain_compiles_device_code_with_cuda_headers(tmp_path, only_pypi_nvcc):
    src = '#include <cuda_fp16.h>\n__global__ void h(__half* p) { p[0] = __hadd(p[1], p[2]); }\n'
    path = _write(tmp_path, "half.cu", src)
    out = compile_to_ptx(path)
    assert out.compiler == "nvrtc"
    assert ".entry _Z1hP6__half" in out.text


@pytest.mark.parametrize("host", [False, True], ids=["nvrtc", "nvcc"])
def test_include_dirs_and_defines_pass_through(tmp_path, host):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "config.h").write_text("#define BASE 7\n")
    src = USES_MACROS + ("int main() { return 0; }\n" if host else "")
    path = _write(tmp_path, "macros.cu", src)
    out = compile_to_ptx(path, include_dirs=[inc], defines=["FACTOR=3"])
    assert out.compiler == ("nvcc" if host else "nvrtc")
    assert re.search(r"mov\.u32\s+%r\d+,\s*21;", out.text)
    with pytest.raises(CompileError, match="FACTOR must be defined"):
        compile_to_ptx(path, include_dirs=[inc])


def test_arch_selects_the_target():
    assert normalize_arch("sm_80") == "compute_80"
    assert normalize_arch("compute_90a") == "compute_90a"
    with pytest.raises(UserError, match="--arch"):
        normalize_arch("volta")


def test_arch_reaches_the_compiler(tmp_path):
    path = _write(tmp_path, "twice.cu", DEVICE_ONLY)
    assert re.search(r"^\.target sm_80\b", compile_to_ptx(path, arch="sm_80").text, re.M)
    assert re.search(r"^\.target sm_75\b", compile_to_ptx(path).text, re.M)


def test_device_compile_error_shows_nvrtc_diagnostics(tmp_path):
    path = _write(tmp_path, "bad.cu", "__global__ void k(int* p)\n{\n    p[0] = undefined_name;\n}\n")
    with pytest.raises(CompileError) as info:
        compile_to_ptx(path)
    message = str(info.value)
    assert "NVRTC" in message
    assert f"{path.resolve()}(3)" in message
    assert "undefined_name" in message


def test_host_compile_error_shows_nvcc_diagnostics(tmp_path):
    path = _write(tmp_path, "bad_host.cu", WITH_HOST.replace("cudaMalloc(&d, 128);", "cudaMalloc(&d, 128)"))
    with pytest.raises(CompileError) as info:
        compile_to_ptx(path)
    message = str(info.value)
    assert "nvcc could not compile" in message
    assert "bad_host.cu" in message and "error" in message


def test_host_code_without_any_nvcc_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_mod, "find_nvcc", lambda: None)
    path = _write(tmp_path, "host.cu", WITH_HOST)
    with pytest.raises(CompileError, match="host code.*needs nvcc"):
        compile_to_ptx(path)


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("k.py", "Numba kernels .* are checked with `gpurace check FILE.py"),
        ("k.cpp", "a .cpp file is taken for a kernel file only when it is a HIP source"),
        ("k.txt", "unknown file type '.txt'"),
        ("kernel", "unknown file type"),
    ],
)
def test_unsupported_inputs(tmp_path, name, pattern):
    path = _write(tmp_path, name, "x")
    with pytest.raises(UserError, match=pattern):
        compile_to_ptx(path)


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        compile_to_ptx(tmp_path / "absent.cu")


def test_bad_define_is_rejected(tmp_path):
    path = _write(tmp_path, "twice.cu", DEVICE_ONLY)
    with pytest.raises(UserError, match="-D"):
        compile_to_ptx(path, defines=["1BAD"])


def test_host_code_detection_ignores_comments():
    assert has_host_code(WITH_HOST)
    assert has_host_code("__global__ void k() {}\nvoid go() { k<<<1, 1>>>(); }")
    assert not has_host_code(DEVICE_ONLY + "// int main() { k<<<1, 1>>>(); }\n/* cudaMalloc(&p, 4); */\n")


def test_compile_error_through_the_cli(tmp_path):
    path = _write(tmp_path, "bad.cu", "__global__ void k(int* p)\n{\n    p[0] = undefined_name;\n}\n")
    result = CliRunner().invoke(cli, ["kernels", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("gpurace: error: ")
    assert "undefined_name" in result.stderr
    assert "Traceback" not in result.output + result.stderr


DEAD_SHARED_STORE = """\
__global__ void dead(void)
{
    __shared__ int a[16];
    a[0] = threadIdx.x;
}
"""


@pytest.mark.parametrize("host_code", [False, True])
def test_device_debug_keeps_stores_the_optimiser_deletes(tmp_path, host_code):
    source = DEAD_SHARED_STORE + ("int main() { dead<<<1, 16>>>(); return 0; }\n" if host_code else "")
    path = _write(tmp_path, "dead.cu", source)
    optimised = compile_to_ptx(path)
    debug = compile_to_ptx(path, device_debug=True)
    assert (optimised.compiler, debug.compiler) == (("nvcc", "nvcc") if host_code else ("nvrtc", "nvrtc"))
    assert not re.search(r"\bst\.", optimised.text)  # nothing reads a[0], so the store is gone
    assert re.search(r"\bst\.(shared\.)?u32", debug.text)


def test_files_written_for_gpuverify_are_compiled_without_optimisation(tmp_path):
    # no #include: GPUVerify's front end includes its cuda.h itself, and so does gpurace
    path = _write(tmp_path, "gv.cu", "//pass\n//--blockDim=16 --gridDim=1\n" + DEAD_SHARED_STORE.replace("{\n", "{\n    __requires(1 == 1);\n", 1))
    assert re.search(r"\bst\.(shared\.)?u32", compile_to_ptx(path).text)
