"""Which values verify assumes an enumeration-typed parameter holds (`verify.enum_ranges`): C++'s bit-field
range of an unscoped enumeration without a fixed type, read only where the file's definition is unambiguous."""

from __future__ import annotations

import pytest

from gpurace.verify.enum_ranges import range_in_source


@pytest.mark.parametrize(
    "source, expected",
    [
        ("enum E { A, B, C };", (0, 3)),
        ("enum E { A = 1 };", (0, 1)),
        ("enum E { A = 0x10, B };", (0, 31)),
        ("enum E { A = -1, B = 5 };", (-8, 7)),
        ("enum E { A = -4, B };", (-4, 3)),
        ("enum E { A = 3, B = A, C };", (0, 7)),
        ("typedef enum { A, B } E;", (0, 1)),
        ("typedef enum Tag { A, B, C, D, F } E;", (0, 7)),
        ("enum E { A, B };\nenum E x;\n", (0, 1)),
    ],
)
def test_unscoped_enumeration_has_the_bit_field_range(source, expected):
    got = range_in_source(source, "E")
    assert got is not None and (got.lo, got.hi) == expected


@pytest.mark.parametrize(
    "source",
    [
        "enum class E { A, B };",  # scoped: any int
        "enum struct E { A, B };",
        "enum E : unsigned { A, B };",  # fixed underlying type: any of its values
        "typedef enum : int { A } E;",
        "enum E { A = N, B };",  # a value verify cannot read
        "enum E { A = 1 << 3 };",
        "namespace n { enum E { A, B }; }",  # not the global E
        "struct S { enum E { A, B }; };",
        "#if V\nenum E { A, B };\n#endif\n",  # maybe not compiled
        "enum E { A, B };\nenum E { C = 9 };",  # two definitions
        "enum E { A, B };\ntypedef int E;",  # another type of that name
        "enum F { A, B };",  # none of that name
        "// enum E { A, B };",
    ],
)
def test_no_range_where_the_reading_is_not_certain(source):
    assert range_in_source(source, "E") is None
