"""C++ parameter names read from kernel definitions in source text."""

from __future__ import annotations

import pytest

from gpurace.frontend.compile import compile_to_ptx
from gpurace.frontend.kernels import describe_kernels
from gpurace.frontend.load import load_module
from gpurace.frontend.source_params import parameter_names, strip_comments


@pytest.mark.parametrize(
    "source, kernel, count, names",
    [
        ("__global__ void k(int* a, const float* __restrict__ b, int n) {}", "k", 3, ("a", "b", "n")),
        ("__global__ void k(void) {}", "k", 0, ()),
        ("__global__ void k() {}", "k", 0, ()),
        ("template <typename T, int N>\n__global__ void steps(T* data, T scale) {}", "steps<float, 4>", 2, ("data", "scale")),
        ("namespace ns { __global__ void scale(float* v, float s) {} }", "ns::scale", 2, ("v", "s")),
        ('extern "C" __global__ void plain(unsigned char* bytes, long long count) {}', "plain", 2, ("bytes", "count")),
        ("__global__ void k(int a[], int b[16]) {}", "k", 2, ("a", "b")),
        # an unnamed parameter and a bare type stay unknown
        ("__global__ void k(int*, unsigned int) {}", "k", 2, (None, None)),
        # a declaration and the definition agree
        ("__global__ void k(int* out);\n__global__ void k(int* out) { *out = 1; }", "k", 1, ("out",)),
        # calls of the kernel and host functions of the same name are not definitions
        ("void k(int x);\n__global__ void k(int* p) {}\nvoid host() { k<<<1, 1>>>(0); }", "k", 1, ("p",)),
        # a macro body, continued over lines, is not a definition
        ("#define K(x) \\\n  __global__ void k(int* x)\n__global__ void k(int* z) {}", "k", 1, ("z",)),
        # comments and strings inside the signature do not confuse the reading
        ('__global__ void k(int* a /* out, int z */, int n // count, more\n) {}', "k", 2, ("a", "n")),
    ],
)
def test_names(source, kernel, count, names):
    assert parameter_names(source, kernel, count) == names


def test_unknown_when_ambiguous_or_absent():
    overloads = "__global__ void k(int* a) {}\n__global__ void k(float* b) {}"
    assert parameter_names(overloads, "k", 1) is None
    assert parameter_names("__global__ void other(int* a) {}", "k", 1) is None
    assert parameter_names("__global__ void k(int* a) {}", "k", 2) is None
    assert parameter_names("#define K(x) __global__ void k(int* x)\nK(a) {}", "k", 1) is None


def test_strip_comments_keeps_lines():
    text = 'a // one\n/* two\nthree */ "four" b'
    stripped = strip_comments(text)
    assert stripped.count("\n") == text.count("\n")
    assert stripped.split() == ["a", "b"]


def test_a_kernel_defined_in_an_included_file_has_its_parameter_names(tmp_path):
    (tmp_path / "kernels.cu").write_text("__global__ void fill(int *counter, int amount) {\n    counter[0] = amount;\n}\n")
    (tmp_path / "main.cu").write_text('#include "kernels.cu"\n')
    module = load_module(tmp_path / "main.cu")
    (info,) = describe_kernels(module)
    assert [p.cpp_name for p in info.params] == ["counter", "amount"]


def test_a_ptx_file_with_line_information_has_the_names_of_its_source(tmp_path):
    source = tmp_path / "kernels.cu"
    source.write_text("__global__ void fill(int *counter, int amount) {\n    counter[0] = amount;\n}\n")
    ptx = tmp_path / "kernels.ptx"
    ptx.write_text(compile_to_ptx(source).text)
    (info,) = describe_kernels(load_module(ptx))
    assert [p.cpp_name for p in info.params] == ["counter", "amount"]
