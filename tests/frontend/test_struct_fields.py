"""Member names of structs read from their definitions (the names the layout probe then checks)."""

from __future__ import annotations

import pytest

from gpurace.frontend.struct_fields import base_name, member_names, source_files

SOURCE = """
// struct S { int commented_out; };
#define MACRO struct S { int in_a_macro; };
struct S { int *a; float *b; int n; };
typedef double* DP;
struct __align__(16) T {
  char c; DP d, *e; S inner; int arr[3]; float (*rows)[4]; void (*fn)(int);
  static const int K = 3;
  enum E { A, B };
  T() : c(0) {}
  __device__ int f(int x) const { return x; }
  int g();
  bool operator==(const T&) const;
public:
  int q{4}; int r = (1 + 2);
};
typedef struct { int *p; unsigned n; } C;
struct Derived : S { int *x; };
struct Bits { int flags : 3; };
struct WithUnion { union { int *a; float *b; }; };
template <class V> struct W { V *data; int n; };
struct InPlace { struct { int *p; struct Tag { float *q; } t; } s, u; int n; };
struct Anonymous { struct { int *p; }; };
struct InPlaceArray { struct { int *p; } s[2]; };
"""


@pytest.mark.parametrize(
    "type_name, names",
    [
        ("S", ("a", "b", "n")),
        ("ns::S", ("a", "b", "n")),  # the unqualified name is looked up
        ("T", ("c", "d", "e", "inner", "arr", "rows", "fn", "q", "r")),
        ("C", ("p", "n")),  # typedef struct { ... } C;
        ("W<int>", ("data", "n")),  # a template's members, for any of its instantiations
        # a member whose struct type is defined in place: its members by their paths
        ("InPlace", ("s.p", "s.t.q", "u.p", "u.t.q", "n")),
        # what a light reading cannot flatten into member names
        ("Anonymous", None),
        ("InPlaceArray", None),
        ("Derived", None),
        ("Bits", None),
        ("WithUnion", None),
        ("float2", None),
        ("Missing", None),
    ],
)
def test_member_names(type_name, names):
    assert member_names([SOURCE], type_name) == names


def test_two_different_definitions_are_unknown():
    assert member_names(["struct P { int *a; };", "struct P { float *b; };"], "P") is None
    assert member_names(["struct P { int *a; };", "struct P { int *a; };"], "P") == ("a",)


def test_base_name():
    assert base_name("ns::Outer<int, Inner<2>>::Job<float>") == "Job"


def test_source_files_follow_quoted_includes(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "params.h").write_text('#include "deeper.h"\nstruct P { int *a; };\n')
    (tmp_path / "inc" / "deeper.h").write_text("struct Q { float *b; };\n")
    (tmp_path / "k.cu").write_text('#include <cuda.h>\n#include "params.h"\n__global__ void k(P p) {}\n')
    texts = source_files(str(tmp_path / "k.cu"), [str(tmp_path / "inc")])
    assert len(texts) == 3
    assert member_names(texts, "P") == ("a",) and member_names(texts, "Q") == ("b",)
