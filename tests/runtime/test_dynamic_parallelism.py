"""CUDA Dynamic Parallelism and the device heap: the pending launch limit, and what is refused, with the reason (the
programs that run, and their races, are in tests/programs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpurace import exec_program
from gpurace.sim import device_runtime

GPURACE = str(Path(sys.executable).with_name("gpurace"))
NVCC_FLAGS = ["-rdc=true", "-lcudadevrt"]
CDP_FLAGS = tuple(f"--nvcc-flag={flag}" for flag in NVCC_FLAGS)

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
    (tmp_path / "copy.cu").write_text(CHILD_AND_PARENT % "cudaMemcpyAsync(a + 1, a, 4, cudaMemcpyDeviceToDevice, 0);" + MAIN)
    run = gpurace("exec", *CDP_FLAGS, "copy.cu", cwd=tmp_path)
    assert run.returncode == 2
    assert "device-side cudaMemcpyAsync is not supported" in run.stderr, run.stderr


PENDING = """\
#include <cstdio>
__global__ void child(int *a, int i) { a[i] = i + 1; }
__global__ void parent(int *a, int *errors) {
    for (int i = 0; i < 3; i++) {
        child<<<1, 1>>>(a, i);
        errors[i] = cudaGetLastError();
    }
}
int main() {
    int *a, *errors;
    cudaMalloc(&a, 3 * sizeof(int));
    cudaMalloc(&errors, 3 * sizeof(int));
    cudaMemset(a, 0, 3 * sizeof(int));
    parent<<<1, 1>>>(a, errors);
    int ha[3], he[3];
    cudaMemcpy(ha, a, sizeof ha, cudaMemcpyDeviceToHost);
    cudaMemcpy(he, errors, sizeof he, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 3; i++)
        printf("%d %d\\n", ha[i], he[i]);
    return 0;
}
"""


def test_a_launch_past_the_pending_launch_limit_fails_as_cuda_reports_it(tmp_path, monkeypatch):
    monkeypatch.setattr(device_runtime, "MAX_PENDING_LAUNCHES", 2)  # CUDA's default, 2048, is a long test
    (tmp_path / "pending.cu").write_text(PENDING)
    result = exec_program(tmp_path / "pending.cu", nvcc_flags=NVCC_FLAGS, capture_output=True)
    assert result.errors == [] and result.findings == []
    # The third launch fails with cudaErrorLaunchPendingCountExceeded (69) and does not run.
    assert result.stdout.splitlines() == ["1 0", "2 0", "0 69"]
    assert result.launches == 3


REUSE = """\
__global__ void churn(int *out) {
    for (int i = 0; i < 10; i++) {
        int *p = (int *)malloc(1 << 20);
        p[0] = i;
        out[0] = p[0];
        free(p);
    }
}
int main() {
    int *out;
    cudaMalloc(&out, sizeof(int));
    churn<<<1, 1>>>(out);
    cudaDeviceSynchronize();
    return 0;
}
"""


def test_a_program_that_needs_freed_device_heap_memory_again_is_stopped(tmp_path):
    (tmp_path / "churn.cu").write_text(REUSE)
    run = gpurace("exec", "churn.cu", cwd=tmp_path)
    assert run.returncode == 2
    assert "churn.cu:3: the device heap (8 MiB) has no room left for a 1048576-byte allocation, which would fit in " \
        "the memory the program freed: gpurace does not reuse freed device heap memory" in run.stderr, run.stderr


def test_device_heap_allocations_need_the_whole_program(tmp_path):
    (tmp_path / "scratch.cu").write_text("__global__ void scratch(int *out) { int *p = (int *)malloc(4); *p = 1; *out = *p; }\n")
    run = gpurace("check", "scratch.cu", "--grid", "1", "--block", "1", "--arg", "i32:1", cwd=tmp_path)
    assert run.returncode == 2
    assert "scratch.cu:1: the kernel allocates device heap memory (malloc or cudaMalloc in device code), which " \
        "`gpurace check` cannot run on its own: run the whole program with `gpurace exec`" in run.stderr, run.stderr
