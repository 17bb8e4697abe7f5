"""Every launch input is checked before the work it sizes starts: exit status 2 and a message naming the input.

Launch dimensions against CUDA's limits and `--max-threads`, buffers and
`.npy` files against the memory budget and the buffer's element type, shared
memory per block against the architecture, local memory per thread against
the hardware's 512 KiB, and the launch's whole footprint against the budget.
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from kernel_files import KERNELS

import gpurace
from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.frontend.gpuverify import parse_launch_header
from gpurace.limits import LimitExceeded, Limits
from gpurace.sim.geometry import parse_dims
from gpurace.sim.memory import Memory

HISTOGRAM = KERNELS / "histogram.cu"
DYNAMIC_SHARED = KERNELS.parent / "dynamic_shared.cu"
HISTOGRAM_ARGS = ["--arg", "buf:3000:iota", "--arg", "buf:64", "--arg", "3000"]

BIG_LOCAL = """
__global__ void big_local(int* out, int k)
{
    volatile char local[1 << 30];
    local[k] = 1;
    out[threadIdx.x] = local[k + threadIdx.x];
}
"""

SCALE = """
__global__ void scale(float* x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}
"""


def run(*args) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["run", *map(str, args)])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def assert_refused(args, *phrases: str) -> str:
    status, output = run(*args)
    assert status == 2, output
    for phrase in phrases:
        assert phrase in output, output
    return output


# --------------------------------------------------------------------------
# Launch dimensions
# --------------------------------------------------------------------------


def test_a_grid_cuda_allows_but_gpurace_cannot_simulate_names_max_threads():
    assert_refused(
        [HISTOGRAM, "--grid", "100000000", "--block", "256", *HISTOGRAM_ARGS],
        "--grid 100000000,1,1 --block 256,1,1", "25,600,000,000 threads", "--max-threads", "16,777,216",
    )  # fmt: skip


@pytest.mark.parametrize(
    "grid, block, phrase",
    [
        ("1", "2048", "--block 2048,1,1: x dimension 2,048 exceeds the CUDA limit 1,024"),
        ("1", "1,1,65", "z dimension 65 exceeds the CUDA limit 64"),
        ("1", "32,32,2", "2,048 threads per block exceed the CUDA limit 1024"),
        ("1,65536", "1", "--grid 1,65536,1: y dimension 65,536 exceeds the CUDA limit 65,535"),
        ("2147483648", "1", "x dimension 2,147,483,648 exceeds the CUDA limit 2,147,483,647"),
    ],
)
def test_dimensions_past_the_cuda_limits_are_refused(grid, block, phrase):
    assert_refused([HISTOGRAM, "--grid", grid, "--block", block, *HISTOGRAM_ARGS], phrase)


@pytest.mark.parametrize("text", ["0", "4,0", "1,2,3,4", "abc", "-1", "", "1,,2", "0x10", "1.5", "٣", "9" * 30, "9" * 5000])
def test_malformed_dimensions_name_the_option(text):
    assert_refused([HISTOGRAM, "--grid", text, "--block", "32", *HISTOGRAM_ARGS], "--grid")
    with pytest.raises(UserError, match="^--block"):
        parse_dims(text, "block")


def test_dimensions_accept_the_usual_spellings():
    assert parse_dims("64", "grid") == (64, 1, 1)
    assert parse_dims("[4, 2]", "grid") == (4, 2, 1)
    assert parse_dims("8x8x2", "block") == (8, 8, 2)


def test_max_threads_is_gpurace_own_limit():
    with pytest.raises(LimitExceeded, match="more than gpurace simulates .512, its own limit: --max-threads raises it"):
        gpurace.run(str(HISTOGRAM), grid=4, block=256, args=["buf:3000", "buf:64", "3000"], limits=Limits(max_threads=512))


@pytest.mark.parametrize("grid", [2.5, True, "4", (1, 0), (1, 2, 3, 4), None, -3])
def test_python_api_dimensions_are_checked(grid):
    with pytest.raises(UserError, match="--grid: expected 1 to 3 positive integers"):
        gpurace.run(str(HISTOGRAM), grid=grid, block=32, args=["buf:3000", "buf:64", "3000"])


def test_gpuverify_header_dimensions_are_checked(tmp_path):
    with pytest.raises(UserError, match="digits is far past what CUDA allows"):
        parse_launch_header("//--blockDim=" + "9" * 5000 + " --gridDim=1\n")
    kernel = tmp_path / "header.cu"
    kernel.write_text("//--blockDim=64 --gridDim=[1,70000]\n" + HISTOGRAM.read_text())
    assert_refused([kernel, *HISTOGRAM_ARGS], "--grid 1,70000,1: y dimension")


# --------------------------------------------------------------------------
# Buffers and the memory budget
# --------------------------------------------------------------------------


def test_a_buffer_larger_than_the_memory_budget_is_refused_before_allocation():
    assert_refused(
        [HISTOGRAM, "--grid", "4", "--block", "256", "--arg", "buf:99999999999", "--arg", "buf:64", "--arg", "3000"],
        "--arg 'buf:99999999999' for argument 1", "372.5 GiB", "memory budget", "--max-memory",
    )  # fmt: skip


def test_buffers_must_fit_the_budget_together():
    with pytest.raises(LimitExceeded, match=r"argument 2 .*\(with the 3\.9 KiB of earlier buffers\) needs 7\.8 KiB"):
        gpurace.run(str(HISTOGRAM), grid=1, block=32, args=["buf:1000", "buf:1000", "3000"], limits=Limits(max_memory=6000))


def test_a_zero_size_buffer_is_real_and_every_access_is_out_of_bounds():
    status, output = run(HISTOGRAM, "--grid", "1", "--block", "32", "--arg", "buf:0", "--arg", "buf:64", "--arg", "32")
    assert status == 1 and "out-of-bounds" in output and "(0 bytes)" in output, output
    status, output = run(HISTOGRAM, "--grid", "1", "--block", "32", "--arg", "buf:0", "--arg", "buf:64", "--arg", "0")
    assert status == 0, output


def test_registers_of_every_thread_must_fit_the_budget():
    with pytest.raises(LimitExceeded, match=r"registers and simulator state \(.* x 1,024 threads"):
        gpurace.run(str(HISTOGRAM), grid=4, block=256, args=["buf:3000", "buf:64", "3000"], limits=Limits(max_memory=100_000))


def test_python_api_arrays_must_have_bytes_and_be_writable():
    bins = np.zeros(64, np.uint32)
    with pytest.raises(UserError, match="Python objects"):
        gpurace.run(str(HISTOGRAM), grid=1, block=32, args=[np.array([None] * 8), bins, 8])
    data = np.arange(8, dtype=np.uint32)
    data.flags.writeable = False
    with pytest.raises(UserError, match="read-only"):
        gpurace.run(str(HISTOGRAM), grid=1, block=32, args=[data, bins, 8])
    scalar = np.array(7, dtype=np.uint32)  # a 0-d array is a one-element buffer
    result = gpurace.run(str(HISTOGRAM), grid=1, block=32, args=[scalar, bins, 1])
    assert result.clean and bins.sum() == 1


# --------------------------------------------------------------------------
# Shared and local memory
# --------------------------------------------------------------------------


def test_shared_memory_per_block_must_fit_the_architecture():
    args = [DYNAMIC_SHARED, "--grid", "2", "--block", "128", "--arg", "buf:256", "--arg", "buf:256", "--arg", "256"]
    assert_refused(
        [*args, "--shared-bytes", "99999"],
        "--shared-bytes 99999: 97.7 KiB of shared memory per block", "64.0 KiB per block that compute_75", "--arch",
    )  # fmt: skip
    status, output = run(*args, "--shared-bytes", "99999", "--arch", "compute_80")  # 163 KiB with the opt-in
    assert status == 0, output
    assert_refused([*args, "--shared-bytes", "200000", "--arch", "compute_86"], "99.0 KiB per block that compute_86")


def test_shared_memory_of_every_block_must_fit_the_budget():
    with pytest.raises(LimitExceeded, match=r"shared memory \(.* x 300 blocks; --shared-bytes, --grid\)"):
        gpurace.run(
            str(DYNAMIC_SHARED), grid=300, block=32, shared_bytes=60000, args=["buf:256", "buf:256", "256"],
            limits=Limits(max_memory=16 << 20),
        )  # fmt: skip


def test_a_local_array_larger_than_a_thread_may_have_is_refused(tmp_path):
    kernel = tmp_path / "big_local.cu"
    kernel.write_text(BIG_LOCAL)
    assert_refused(
        [kernel, "--grid", "1", "--block", "32", "--arg", "buf:32", "--arg", "0"],
        "function big_local needs 1.0 GiB of local memory per thread", "512.0 KiB per thread",
    )  # fmt: skip


def test_local_memory_grown_by_calls_stays_within_the_hardware_and_the_budget():
    with pytest.raises(LimitExceeded, match="512.0 KiB per thread"):
        Memory(1, 32).ensure_local(600 << 10)
    with pytest.raises(LimitExceeded, match="local memory of 1,024 threads"):
        Memory(4, 256, limits=Limits(max_memory=1 << 20)).ensure_local(4096)


# --------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e39", "-1e39", "9" * 5000], ids=["1e39", "-1e39", "5000 digits"])
def test_a_float_too_large_for_its_type_is_refused(tmp_path, value):
    kernel = tmp_path / "scale.cu"
    kernel.write_text(SCALE)
    assert_refused([kernel, "--grid", "1", "--block", "32", "--arg", "buf:32", "--arg", value, "--arg", "32"], "does not fit in float32")
    status, output = run(kernel, "--grid", "1", "--block", "32", "--arg", "buf:32", "--arg", "inf", "--arg", "32")
    assert status == 0, output


# --------------------------------------------------------------------------
# .npy files
# --------------------------------------------------------------------------


def npy_bytes(header: str, data: bytes = b"") -> bytes:
    """A version 1.0 .npy file with this header dict text (padded as NumPy pads it) and data."""
    text = header.encode("latin1")
    text += b" " * (-(10 + len(text) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + data


def _write(path, data: bytes | None = None, array=None, **save):
    if array is not None:
        np.save(path, array, **save)
    else:
        path.write_bytes(data)
    return path


NPY_REFUSED = {
    "float64 into u32": (dict(array=np.arange(3000.0)), ["holds floating-point numbers (float64)", "uint32", "f64:COUNT:file:"]),
    "values that wrap": (dict(array=np.arange(3000) * 10**10), ["element 1 (10000000000) does not fit", "uint32"]),
    "negative into unsigned": (dict(array=-np.arange(3000)), ["element 1 (-1) does not fit"]),
    "strings": (dict(array=np.array(["a"] * 3000)), ["holds strings (<U1)"]),
    "records": (dict(array=np.zeros(3000, dtype=[("a", "i4"), ("b", "f4")])), ["holds records"]),
    "objects": (dict(array=np.array([None] * 3000), allow_pickle=True), ["holds pickled Python objects"]),
    "complex": (dict(array=np.zeros(3000, complex)), ["holds complex numbers"]),
    "too few": (dict(array=np.arange(10, dtype=np.uint32)), ["holds 10 elements, the spec asks for 3000"]),
    "0-d": (dict(array=np.uint32(3)), ["holds 1 element, the spec asks for 3000"]),
    "pickle": (dict(data=b"\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00]\x94(K\x01K\x02e."), ["not a valid .npy file"]),
    "corrupt header": (dict(data=b"\x93NUMPY\x01\x00\x10\x00{'descr': '<u4',\n"), ["not a valid .npy file"]),
    "negative shape": (dict(data=npy_bytes("{'descr': '<u4', 'fortran_order': False, 'shape': (-5,), }")), ["not a valid .npy file"]),
    "bad descr": (dict(data=npy_bytes("{'descr': 'q9', 'fortran_order': False, 'shape': (5,), }")), ["not a valid .npy file"]),
    "huge shape": (
        dict(data=npy_bytes("{'descr': '<u4', 'fortran_order': False, 'shape': (1000000000000000,), }")),
        ["(1,000,000,000,000,000 elements of uint32) needs", "memory budget"],
    ),
    "truncated": (
        dict(data=npy_bytes("{'descr': '<u4', 'fortran_order': False, 'shape': (3000,), }", b"\0" * 100)),
        ["cannot read it as a .npy file"],
    ),
    "empty file": (dict(data=b""), ["not a valid .npy file"]),
}


@pytest.mark.parametrize("case", NPY_REFUSED)
def test_npy_files_that_cannot_fill_the_buffer_are_refused(tmp_path, case):
    contents, phrases = NPY_REFUSED[case]
    path = _write(tmp_path / "x.npy", **contents)
    spec = f"buf:3000:file:{path}"
    assert_refused([HISTOGRAM, "--grid", "1", "--block", "32", "--arg", spec, "--arg", "buf:64", "--arg", "32"], f"--arg '{spec}'", *phrases)


@pytest.mark.parametrize(
    "array",
    [np.arange(3000), np.arange(3000, dtype=">u4"), np.asfortranarray(np.arange(3000, dtype=np.uint32).reshape(60, 50)), np.ones(3000, bool)],
)
def test_npy_files_whose_values_fit_are_converted(tmp_path, array):
    path = _write(tmp_path / "x.npy", array=array)
    status, output = run(HISTOGRAM, "--grid", "1", "--block", "32", "--arg", f"buf:3000:file:{path}", "--arg", "buf:64", "--arg", "3000")
    assert status == 0, output


def test_naming_the_file_type_reads_floats(tmp_path):
    path = _write(tmp_path / "x.npy", array=np.arange(3000.0))
    status, output = run(HISTOGRAM, "--grid", "1", "--block", "32", "--arg", f"f64:3000:file:{path}", "--arg", "buf:64", "--arg", "3000")
    assert status == 0, output


@pytest.mark.parametrize("where", ["missing.npy", "."])
def test_npy_paths_that_are_not_files_are_refused(tmp_path, where):
    spec = f"buf:3000:file:{tmp_path / where}"
    assert_refused([HISTOGRAM, "--grid", "1", "--block", "32", "--arg", spec, "--arg", "buf:64", "--arg", "32"], "not a .npy file")


def test_static_shared_and_constant_memory_stay_within_what_cuda_allows(tmp_path):
    kernel = tmp_path / "big_static.cu"
    kernel.write_text(
        "__constant__ float table[20000];\n"
        "__global__ void k(float* out) { __shared__ float s[13000]; s[threadIdx.x] = table[threadIdx.x];"
        " __syncthreads(); out[threadIdx.x] = s[threadIdx.x ^ 1]; }\n"
    )
    assert_refused([kernel, "--grid", "1", "--block", "32", "--arg", "buf:32"], "50.8 KiB of static shared memory", "48.0 KiB")
    kernel.write_text(kernel.read_text().replace("13000", "64"))
    assert_refused([kernel, "--grid", "1", "--block", "32", "--arg", "buf:32"], "78.1 KiB of __constant__ variables", "64.0 KiB")
