"""CUDA Dynamic Parallelism refused where it cannot run, with the reason (the programs that run are in tests/programs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GPURACE = str(Path(sys.executable).with_name("gpurace"))
CDP_FLAGS = ("--nvcc-flag=-rdc=true", "--nvcc-flag=-lcudadevrt")

CHILD_AND_PARENT = """\
__global__ void child(int *a) { a[threadIdx.x] = 1; }
__global__ void parent(int *a) {
    if (threadIdx.x == 0) {
        child<<<1, 32>>>(a);
        %s
    }
}
"""
MAIN = """
int main() {
    int *a;
    cudaMalloc(&a, 32 * sizeof(int));
    parent<<<1, 32>>>(a);
    cudaDeviceSynchronize();
    return 0;
}
"""


def gpurace(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([GPURACE, *args], cwd=cwd, capture_output=True, text=True)


def test_device_side_cuda_device_synchronize_is_refused_with_the_reason(tmp_path):
    (tmp_path / "sync.cu").write_text(CHILD_AND_PARENT % "cudaDeviceSynchronize();" + MAIN)
    run = gpurace("exec", *CDP_FLAGS, "sync.cu", cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("gpurace: error: ") and (
        "sync.cu:5: cudaDeviceSynchronize in device code was removed in CUDA 12 (CUDA Dynamic Parallelism 2): a "
        "parent grid cannot wait for its children" in run.stderr
    ), run.stderr


def test_device_side_launches_need_the_whole_program(tmp_path):
    (tmp_path / "parent.cu").write_text(CHILD_AND_PARENT % "")
    run = gpurace("check", "parent.cu", "--kernel", "parent", "--grid", "1", "--block", "32", "--arg", "i32:32", cwd=tmp_path)
    assert run.returncode == 2
    assert "parent.cu:4: a kernel launch in device code (CUDA Dynamic Parallelism) needs the whole program" in run.stderr
    assert "gpurace exec --nvcc-flag=-rdc=true --nvcc-flag=-lcudadevrt" in run.stderr


def test_linked_check_refuses_device_side_launches_by_name(tmp_path):
    (tmp_path / "parent.cu").write_text(CHILD_AND_PARENT % "")
    (tmp_path / "other.cu").write_text("__device__ int unused_value;\n")
    run = gpurace("check", "parent.cu", "other.cu", "--kernel", "parent", "--grid", "1", "--block", "32",
                  "--arg", "i32:32", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 2
    assert "launches a kernel from device code (CUDA Dynamic Parallelism), which `gpurace check` cannot run" in run.stderr


def test_unsupported_device_runtime_calls_are_refused_by_name(tmp_path):
    (tmp_path / "malloc.cu").write_text(CHILD_AND_PARENT % "int *p; cudaMalloc((void **)&p, 4);" + MAIN)
    run = gpurace("exec", *CDP_FLAGS, "malloc.cu", cwd=tmp_path)
    assert run.returncode == 2
    assert "device-side cudaMalloc is not supported" in run.stderr, run.stderr
