"""GPUVerify launch headers, the style detection that picks the compatibility cuda.h, and `simple_requirements`."""

from __future__ import annotations

import pytest

from gpurace.errors import UserError
from gpurace.frontend.compile import compile_to_ptx, has_host_code
from gpurace.frontend.gpuverify import (
    COMPAT_INCLUDE_DIR,
    kernel_requirements,
    parse_launch_header,
    read_launch_header,
    simple_requirements,
    uses_gpuverify,
)
from gpurace.frontend.kernels import describe_kernels
from gpurace.frontend.load import load_module

# ---------------------------------------------------------------- headers


def test_pass_header_with_2d_grid(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text("//pass\n//--blockDim=64 --gridDim=[4,2]\n\n#include <cuda.h>\n__global__ void k() {}\n")
    h = read_launch_header(f)
    assert h is not None
    assert (h.grid, h.block, h.expect) == ((4, 2, 1), (64, 1, 1), "pass")
    assert h.defines == () and h.ignored == ()
    assert (h.path, h.line) == (str(f), 2)


def test_xfail_header_with_options_and_expected_messages():
    text = (
        "//xfail:BOOGIE_ERROR\n"
        "//--gridDim=1 --blockDim=[32, 2, 2] --no-inline --warp-sync=32 --equality-abstraction --only-intra-group\n"
        "//kernel.cu:8:21: write by thread\n"
        "//--blockDim=999\n"
        "__global__ void k() {}\n"
    )
    h = parse_launch_header(text, "k.cu")
    assert h.expect == "xfail:BOOGIE_ERROR"
    assert h.grid == (1, 1, 1)
    assert h.block == (32, 2, 2)  # the first options line counts; later comment lines are messages
    assert h.ignored == ("--no-inline", "--warp-sync=32", "--equality-abstraction", "--only-intra-group")


def test_defines_in_both_spellings():
    h = parse_launch_header("//pass\n//--blockDim=16 --gridDim=2 -DN=16 -D WIDTH -DNAME=a=b\n")
    assert h.defines == ("N=16", "WIDTH", "NAME=a=b")


def test_opencl_spellings_and_global_size():
    h = parse_launch_header("//pass\n//--local_size=[8,4] --global_size=[64,8]\n")
    assert h.block == (8, 4, 1)
    assert h.grid == (8, 2, 1)
    h = parse_launch_header("//pass\n//--local_size=64 --num_groups=3\n")
    assert (h.grid, h.block) == ((3, 1, 1), (64, 1, 1))


def test_label_without_options_and_options_without_label():
    h = parse_launch_header("//pass\n__global__ void k() {}\n")
    assert (h.expect, h.grid, h.block) == ("pass", None, None)
    h = parse_launch_header("// a comment first\n\n//--blockDim=32 --gridDim=2\n__global__ void k() {}\n")
    assert (h.expect, h.grid, h.block, h.line) == (None, (2, 1, 1), (32, 1, 1), 3)


@pytest.mark.parametrize(
    "text",
    [
        "__global__ void k() {}\n",
        "// saxpy: y = a * x + y\n//--------------------------------\n__global__ void k() {}\n",
        "//--verbose prints more\n__global__ void k() {}\n",
        "#include <cuda.h>\n//pass\n//--blockDim=64 --gridDim=1\n",  # not the leading comment block
        "// @launch --grid 1 --block 32\n// @expect clean\n__global__ void k() {}\n",
    ],
)
def test_no_header(text):
    assert parse_launch_header(text) is None


@pytest.mark.parametrize(
    "options, message",
    [
        ("--blockDim=abc --gridDim=1", "--blockDim=abc: expected a positive integer or [X,Y] / [X,Y,Z]"),
        ("--blockDim=[64,1,1,1] --gridDim=1", "--blockDim=[64,1,1,1]"),
        ("--blockDim=0 --gridDim=1", "--blockDim=0: dimensions must be positive"),
        ("--blockDim= --gridDim=1", "--blockDim=: expected"),
        ("--blockDim --gridDim=1", "--blockDim=: expected"),
        ("--blockDim=64 --gridDim=[2,", "--gridDim=[2,"),
        ("--blockDim=64 --gridDim=2 -D9X", "-D9X: expected -DNAME or -DNAME=VALUE"),
        ("--local_size=64 --global_size=100", "--global_size=[100, 1, 1] is not a multiple of the block"),
        ("--global_size=100", "--global_size needs --local_size"),
    ],
)
def test_malformed_header_names_file_and_line(tmp_path, options, message):
    f = tmp_path / "bad.cu"
    f.write_text(f"//xfail:BOOGIE_ERROR\n//{options}\n__global__ void k() {{}}\n")
    with pytest.raises(UserError) as e:
        read_launch_header(f)
    assert str(e.value).startswith(f"{f}:2: ")
    assert message in str(e.value)


# ---------------------------------------------------------------- style detection and compilation


@pytest.mark.parametrize(
    "code, expected",
    [
        ("//pass\n//--blockDim=64 --gridDim=1\n__global__ void k() {}", True),
        ("__global__ void k(int n) { __requires(n > 0); }", True),
        ("__global__ void k(int *a) { for (int i = 0; __invariant(i >= 0), i < 4; i++) a[i] = 0; }", True),
        ("__global__ void k(int *a) { __assert(__same_group); }", True),
        ("__axiom(blockDim.x == 64);\n__global__ void k(int *a) { a[threadIdx.x] = 0; }", True),
        ("__global__ void k(int *a) { a[0] = 1; } // __requires(n > 0) in a comment", False),
        ("__global__ void k(int *a) { a[0] = __all(a[1]); }", False),  # CUDA's legacy warp vote
    ],
)
def test_uses_gpuverify(code, expected):
    assert uses_gpuverify(code) is expected


def test_cuda_h_is_host_code_only_outside_gpuverify_files():
    code = '#include "cuda.h"\n__global__ void k(int n) { __requires(n > 0); }\n'
    assert has_host_code(code)
    assert not has_host_code(code, gpuverify=True)
    assert has_host_code("#include <cuda.h>\n#include <stdio.h>\nint main() {}\n", gpuverify=True)


def test_compat_header_is_package_data():
    assert (COMPAT_INCLUDE_DIR / "cuda.h").is_file()


def test_gpuverify_file_compiles_with_nvrtc_and_keeps_annotation_calls(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(
        "//pass\n//--blockDim=32 --gridDim=1\n#include <cuda.h>\n"
        "__global__ void k(int *a, int n) {\n"
        "  __requires(n == 32);\n"
        "  for (int i = 0; __invariant(__no_read(a)), i < n; i++) a[threadIdx.x] += i;\n"
        "  __assert(a[threadIdx.x] >= 0);\n"
        "  __ensures(__return_val_int() == 0);\n"
        "}\n"
    )
    compiled = compile_to_ptx(f)
    assert compiled.compiler == "nvrtc"
    assert ".extern .func __gpurace_requires" in compiled.text
    assert ".extern .func __gpurace_assert" in compiled.text
    assert "verifier_only" not in compiled.text  # __invariant and __ensures compile to nothing


def test_host_file_with_annotations_gets_the_compat_header_under_nvcc(tmp_path):
    f = tmp_path / "host.cu"
    f.write_text(
        "#include <cuda.h>\n#include <stdio.h>\n#include <assert.h>\n"
        "__global__ void k(int n) { __requires(n > 0); __assert(n < 100); }\n"
        "int main() { CUdeviceptr p = 0; k<<<1, 32>>>(5); printf(\"%d\\n\", (int)p); return 0; }\n"
    )
    compiled = compile_to_ptx(f)
    assert compiled.compiler == "nvcc"
    assert "__gpurace_requires" in compiled.text and "__gpurace_assert" in compiled.text


def test_driver_api_file_does_not_get_the_compat_header(tmp_path):
    f = tmp_path / "driver.cu"
    f.write_text(
        "#include <cuda.h>\n"
        "#ifdef GPURACE_GPUVERIFY_CUDA_H\n#error the compatibility header was used\n#endif\n"
        "__global__ void k(int *a) { a[threadIdx.x] = 1; }\n"
        "int main() { CUdeviceptr p = 0; return (int)p; }\n"
    )
    assert compile_to_ptx(f).compiler == "nvcc"


# ---------------------------------------------------------------- simple_requirements


def test_each_simple_form():
    src = """
    __global__ void k(int a, int b, int c, int d, int e, int f) {
        __requires(a == 64);
        __requires(b >= 1);
        __requires(c > 0x10);
        __requires(d <= 100u);
        __requires(e < -2);
        __requires(8 <= f);
    }
    """
    assert simple_requirements(src, ["a", "b", "c", "d", "e", "f"]) == {
        "a": (64, 64),
        "b": (1, None),
        "c": (17, None),
        "d": (None, 100),
        "e": (None, -3),
        "f": (8, None),
    }


def test_conjunctions_combine_and_other_conjuncts_are_left_to_run_time():
    src = """
    __global__ void k(unsigned n, int m, int *p) {
        __requires(n >= 32 && n <= 1024 && __is_pow2(n));
        __global_requires((n > 63) & (m < 10) & p != 0);
        __requires(n < 512);
    }
    """
    assert simple_requirements(src, ["n", "m", "p"]) == {"n": (64, 511), "m": (None, 9)}


@pytest.mark.parametrize(
    "requires",
    [
        "n > 0 ? m > 0 : 1",
        "(n = 4) > 0",
        "n > 0 | m > 0 && n < 4",
        "n + 1 > 4 || m != 0",
        "n + 1 > 4",
        "n > m",
        "!(n > 4)",
        "n != 4",
    ],
)
def test_conditions_that_are_not_simple_bounds(requires):
    src = f"__global__ void k(int n, int m) {{ __requires({requires}); }}"
    assert simple_requirements(src, ["n", "m"]) == {}


@pytest.mark.parametrize(
    ("requires", "bounds"),
    [
        ("n == 1 | n == 2", {"n": (1, 1)}),
        ("n == 1 || n == 2", {"n": (1, 1)}),
        ("n > 0 || m > 0", {"n": (1, None)}),
        ("n + 1 > 4 || m > 0", {"m": (1, None)}),
        ("(n + 1 > 4) | (n >= 8 & m < 3)", {"n": (8, None), "m": (None, 2)}),
        ("n == 4 && m > 1 || n == 5", {"n": (4, 4), "m": (2, None)}),
    ],
)
def test_a_disjunction_is_satisfied_by_its_first_simple_alternative(requires, bounds):
    src = f"__global__ void k(int n, int m) {{ __requires({requires}); }}"
    assert simple_requirements(src, ["n", "m"]) == bounds


def test_named_constants_such_as_device_functions_compare_as_their_values():
    src = "__global__ void k(fn f, fn g, int n) { __requires(f == half | f == twice); __requires(twice == g); __requires(n < f); }"
    constants = {"half": 0x800000100, "twice": 0x800000200}
    assert simple_requirements(src, ["f", "g", "n"], constants=constants) == {"f": (0x800000100, 0x800000100), "g": (0x800000200, 0x800000200)}


def test_only_named_parameters_comments_and_macros_do_not_count():
    src = """
    #define CHECK __requires(n == 7)
    // __requires(n == 1)
    /* __requires(n == 2) */
    __global__ void k(int n, int unnamed) {
        int local = 3;
        __requires(local == 3);
        __requires(n == 5);
    }
    """
    assert simple_requirements(src, ["n", None]) == {"n": (5, 5)}


def test_an_assumption_bounds_a_parameter_as_a_precondition_does():
    src = """
    __global__ void k(int n, int m, int *out) {
        __assume(n == 2);
        __assume(m < 100 && m > 3);
        out[n * threadIdx.x] = m;
    }
    """
    assert simple_requirements(src, ["n", "m", "out"], kernel="k") == {"n": (2, 2), "m": (4, 99)}


def test_contradictions_give_an_empty_range():
    src = "__global__ void k(int n) { __requires(n > 10 && n < 5); }"
    assert simple_requirements(src, ["n"]) == {"n": (11, 4)}


def test_kernel_scope_ignores_other_functions():
    src = """
    __device__ int helper(int n) { __requires(n == 1); return n; }
    __global__ void other(int n) { __requires(n == 2); }
    __global__ void k(int n, int *out) {
        __requires(n >= 100);
        out[0] = helper(1);
    }
    """
    assert simple_requirements(src, ["n", "out"], kernel="k") == {"n": (100, None)}
    assert simple_requirements(src, ["n", "out"], kernel="other") == {"n": (2, 2)}
    assert simple_requirements(src, ["n", "out"]) == {"n": (100, 1)}


def test_kernel_requirements_by_parameter_index(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(
        "#include <cuda.h>\n"
        "__device__ int twice(int n) { __requires(n < 5); return 2 * n; }\n"
        "__global__ void k(int *out, unsigned n, int m) {\n"
        "  __requires(n >= 64 && n <= 4096);\n"
        "  __requires(m == 3);\n"
        "  out[threadIdx.x] = twice(m) + n;\n"
        "}\n"
    )
    (info,) = describe_kernels(load_module(f))
    assert kernel_requirements(f.read_text(), info) == {1: (64, 4096), 2: (3, 3)}
