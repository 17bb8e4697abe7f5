"""Struct layouts and variable types asked of the compiler (frontend.type_probe)."""

from __future__ import annotations

import pytest

from gpurace.frontend.load import load_module
from gpurace.frontend.type_probe import Field, LayoutUnknown, StructLayout, TypeProbe, check_coverage

SOURCE = """
struct S { int *a; float *b; int n; };
typedef double* DP;
struct __align__(16) T { char c; DP d; S inner; int arr[3]; };
struct Bits { int *p; unsigned mode : 2; };
namespace { struct Hidden { int *p; }; }
__device__ int *p;
__device__ unsigned long long counter;
namespace ns { __device__ float *q; }
__global__ void k(S s, T t, Bits b, Hidden h) { *s.a = *p + *ns::q + counter + t.c + b.mode + *h.p; }
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    path = tmp_path_factory.mktemp("probe") / "k.cu"
    path.write_text(SOURCE)
    return TypeProbe(load_module(path))


def test_layout_comes_from_the_compiler(probe):
    s = probe.struct_layout("S")
    assert (s.size, s.align) == (24, 8)
    assert [(f.name, f.type, f.offset, f.size) for f in s.fields] == [("a", "int*", 0, 8), ("b", "float*", 8, 8), ("n", "int", 16, 4)]
    t = probe.struct_layout("T")
    assert (t.size, t.align) == (64, 16)  # __align__(16) pads the struct
    assert [(f.name, f.type, f.offset) for f in t.fields] == [("c", "char", 0), ("d", "double*", 8), ("inner", "S", 16), ("arr", "int [3]", 40)]


def test_unreadable_structs_are_layout_unknown(probe):
    with pytest.raises(LayoutUnknown, match="cannot tell the layout of Bits"):
        probe.struct_layout("Bits")
    with pytest.raises(LayoutUnknown, match="anonymous namespace"):
        probe.struct_layout("(anonymous namespace)::Hidden")
    with pytest.raises(LayoutUnknown, match="no single definition"):
        probe.struct_layout("Missing")


def test_variable_types(probe):
    assert probe.variable_types(["p", "counter", "ns::q", "no_such_variable"]) == {
        "p": "int*", "counter": "unsigned long long", "ns::q": "float*",
    }  # fmt: skip


def test_a_ptx_module_has_no_source_to_ask(tmp_path, probe):
    from gpurace.frontend.compile import compile_to_ptx

    ptx = tmp_path / "k.ptx"
    ptx.write_text(compile_to_ptx(probe.module.source_path).text)
    module = load_module(ptx)
    with pytest.raises(LayoutUnknown, match="is PTX"):
        TypeProbe(module).struct_layout("S")
    assert TypeProbe(module).variable_types(["p"]) == {}


def test_a_gap_in_the_layout_means_a_member_was_missed():
    fields = (Field("c", "char", 0, 1, 1), Field("v", "float4", 16, 16, 16))
    check_coverage(StructLayout("Ok", 32, 16, fields))  # padding only
    with pytest.raises(LayoutUnknown, match=r"bytes 1\.\.15 before member p"):  # a pointer at 8 was not read
        check_coverage(StructLayout("Gap", 24, 8, (Field("c", "char", 0, 1, 1), Field("p", "int*", 16, 8, 8))))
    with pytest.raises(LayoutUnknown, match=r"bytes 8\.\.15 belong to no member"):
        check_coverage(StructLayout("Tail", 16, 8, (Field("p", "int*", 0, 8, 8),)))
