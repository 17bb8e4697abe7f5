"""Kernel names and C++ parameter types recovered from mangled PTX symbols."""

from __future__ import annotations

import pytest

from gpurace.frontend.demangle import Signature, demangle_signature, normalize_type, pointer_to_array, split_top_level
from gpurace.frontend.kernels import ParamInfo


@pytest.mark.parametrize(
    ("symbol", "name", "types"),
    [
        ("_Z6reducePKiPii", "reduce", ("const int*", "int*", "int")),
        ("_Z5stepsIfLi4EEvPT_S0_", "steps<float, 4>", ("float*", "float")),
        ("_Z4stepIiLb1EEvPT_", "step<int, true>", ("int*",)),
        ("_ZN2ns5scaleEPfRKf", "ns::scale", ("float*", "const float&")),
        ("_ZN5outer5inner1kEPd", "outer::inner::k", ("double*",)),
        ("_ZN12_GLOBAL__N_11kEPi", "(anonymous namespace)::k", ("int*",)),
        ("_Z5axpby6ParamsPKfPf4Pair", "axpby", ("Params", "const float*", "float*", "Pair")),
        ("_Z1fN3foo3BarIiEE", "f", ("foo::Bar<int>",)),
        ("_Z4histPKhPji", "hist", ("const unsigned char*", "unsigned int*", "int")),
        ("_Z1fxyPKy", "f", ("long long", "unsigned long long", "const unsigned long long*")),
        ("_Z1fPVi", "f", ("volatile int*",)),
        ("_Z1fPKVi", "f", ("const volatile int*",)),
        ("_Z1fPrKf", "f", ("const float*",)),
        ("_Z1fPKPKi", "f", ("const int* const*",)),
        ("_Z1fRi", "f", ("int&",)),
        ("_Z1fOi", "f", ("int&&",)),
        ("_Z1fPFviE", "f", ("void (*)(int)",)),
        ("_Z1fP6__halfP13__nv_bfloat16", "f", ("__half*", "__nv_bfloat16*")),
        ("_Z1fachstj", "f", ("signed char", "char", "unsigned char", "short", "unsigned short", "unsigned int")),
        ("_Z1fv", "f", ()),
        ("_Z1fIiEvT_", "f<int>", ("int",)),
        ("_Z3mapI5PointLi2EEvPKT_PS0_", "map<Point, 2>", ("const Point*", "Point*")),
        ("_Z1fRKSt5arrayIiLm3EE", "f", ("const std::array<int, 3ul>&",)),
        # `float x[][256]` is a pointer to arrays of 256 floats
        ("_Z4rowsPA256_fi", "rows", ("float (*)[256]", "int")),
        ("_Z1fPA4_A8_Kf", "f", ("const float (*)[4][8]",)),
    ],
)
def test_mangled_names(symbol, name, types):
    assert demangle_signature(symbol) == Signature(name, types)


@pytest.mark.parametrize("symbol", ["vec_add", "fill", "kernel_with__Z_inside", "_Zgarbage"])
def test_unmangled_names_have_untyped_parameters(symbol):
    sig = demangle_signature(symbol)
    assert sig.param_types is None
    assert sig.name == symbol


@pytest.mark.parametrize(
    ("spelling", "normal"),
    [
        ("int const*", "const int*"),
        ("float const* restrict", "const float* __restrict__"),
        ("float* restrict", "float* __restrict__"),
        ("unsigned int volatile*", "volatile unsigned int*"),
        ("int const volatile*", "const volatile int*"),
        ("int const* const", "const int* const"),
        ("Foo<int const, 2> const&", "const Foo<int const, 2>&"),
        ("long   long", "long long"),
        ("float (*) [256]", "float (*)[256]"),
        ("float const (*) [4][8]", "const float (*)[4][8]"),
        ("int (* restrict) [2]", "int (* __restrict__)[2]"),
        ("void (*)(int)", "void (*)(int)"),
    ],
)
def test_normalize_type(spelling, normal):
    assert normalize_type(spelling) == normal


def test_split_only_at_top_level_commas():
    assert split_top_level("A<int, 2>, void (*)(int, float), int[3]") == ["A<int, 2>", "void (*)(int, float)", "int[3]"]


@pytest.mark.parametrize(
    ("cpp", "pointee"),
    [
        ("const float*", ("float", 4)),
        ("float* __restrict__", ("float", 4)),
        ("const double* __restrict__", ("double", 8)),
        ("unsigned char*", ("unsigned char", 1)),
        ("volatile int*", ("int", 4)),
        ("unsigned long long*", ("unsigned long long", 8)),
        ("__half*", ("__half", 2)),
        ("const int* const*", None),
        ("Params*", None),
        ("int&", None),
        ("int", None),
        ("void*", None),
        ("void (*)(int)", None),
        (None, None),
        # a pointer to arrays: its buffer's elements are the arrays' scalars
        ("float (*)[256]", ("float", 4)),
        ("const double (*)[4][8]", ("double", 8)),
        ("Params (*)[4]", None),
    ],
)
def test_pointee(cpp, pointee):
    assert ParamInfo("p", cpp, "u64", 8).pointee == pointee


@pytest.mark.parametrize(
    ("cpp", "ptx_type", "pointer"),
    [
        ("int*", "u64", True),
        ("float (*)[256]", "u64", True),
        ("const float (*)[4][8]", "u64", True),
        ("void (*)(int)", "u64", False),
        ("int", "u32", False),
        ("Params", "b8", False),
        (None, "u64", True),  # extern "C": 64-bit integers are taken as pointers
        (None, "u32", False),
    ],
)
def test_is_pointer(cpp, ptx_type, pointer):
    assert ParamInfo("p", cpp, ptx_type, 8).is_pointer is pointer


def test_pointer_to_array():
    assert pointer_to_array("const float (*)[4][8]") == ("const float", (4, 8))
    assert pointer_to_array("float*") is None and pointer_to_array("void (*)(int)") is None
