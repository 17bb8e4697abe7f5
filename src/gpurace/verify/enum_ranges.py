"""The values an enumeration-typed kernel parameter can hold, read from the kernel's source.

PTX passes an enum as a plain integer, but C++ restricts it: an unscoped
enumeration without a fixed underlying type has as values those of the
smallest bit-field that holds all its enumerators (`enum {A, B, C}`: 0 to 3),
and giving it any other value (a cast from an integer out of that range) is
undefined behaviour. Faial assumes that too (its `drf-enum-constraint`
example is race-free only so), more tightly: between the enumerators. verify
assumes the bit-field range, which is what the standard guarantees, and
states it in the report.

The enumeration is read from the kernel's own file, and only where the
reading is unambiguous: one definition of that name, at file scope (a
demangled unqualified type name is one of the global namespace), outside
preprocessor conditionals, with enumerators whose values are integer literals
or earlier enumerators. Scoped enumerations (`enum class`) and enumerations
with a fixed underlying type (`enum E : int`) hold any value of that type and
get no range; so does anything else (an enumeration defined in a header, a
typedef of one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gpurace.frontend.source_params import balanced, strip_comments

_NAME = r"[A-Za-z_]\w*"
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w*)(?:[^\n]*\\\n)*[^\n]*", re.M)
_INT = re.compile(r"([-+]?)\s*(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)[uUlL]*")
# `enum NAME {`, `enum class NAME`, `enum NAME : T {`, and `typedef enum [TAG] [: T] { ... } NAME ;`
_TAGGED = re.compile(rf"\benum\s+(?P<scoped>(?:class|struct)\s+)?(?P<name>{_NAME})\s*(?P<fixed>:[^{{;]*)?(?P<open>\{{)?")
_TYPEDEF = re.compile(rf"\btypedef\s+enum\b\s*(?:{_NAME}\s*)?(?P<fixed>:[^{{;]*)?\{{")


@dataclass(frozen=True)
class EnumRange:
    """The values of an enumeration: `lo` to `hi` inclusive, `signed` when some enumerator is negative."""

    name: str
    lo: int
    hi: int

    @property
    def signed(self) -> bool:
        return self.lo < 0


def enum_range(source_path: str | None, type_name: str | None) -> EnumRange | None:
    """The range of the enumeration `type_name` (a parameter's C++ type) defined in the file, or None."""
    if source_path is None or type_name is None or not re.fullmatch(_NAME, type_name.strip()):
        return None
    try:
        source = Path(source_path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return range_in_source(source, type_name.strip())


def range_in_source(source: str, name: str) -> EnumRange | None:
    """The range of the enumeration `name` as the C++ text `source` defines it (see the module), or None."""
    text = strip_comments(source)
    conditional = _conditional_spans(text)
    text = _DIRECTIVE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    definitions: list[tuple[int, str | None]] = []  # (position, body; None: any value of some type)
    for m in _TAGGED.finditer(text):
        if m.group("name") != name or not (m.group("open") or m.group("fixed") or m.group("scoped")):
            continue  # `enum E x;` names the type, it does not define it
        scoped_or_fixed = m.group("scoped") or m.group("fixed")
        body = None if scoped_or_fixed else balanced(text, m.end() - 1, "{", "}")
        definitions.append((m.start(), body))
    for m in _TYPEDEF.finditer(text):
        body = balanced(text, m.end() - 1, "{", "}")
        if body is None:
            continue
        after = re.match(rf"\s*({_NAME})\s*;", text[m.end() + len(body) + 1 :])
        if after is not None and after.group(1) == name:
            definitions.append((m.start(), None if m.group("fixed") else body))
    other_types = re.search(rf"\b(?:struct|class|union|using|typedef(?!\s+enum\b)[^;]*)\s+{name}\b", text)
    if len(definitions) != 1 or other_types is not None:
        return None
    at, body = definitions[0]
    if body is None or _depth(text, at) != 0 or any(lo <= at < hi for lo, hi in conditional):
        return None
    values = _enumerator_values(body)
    if not values:
        return None
    lo, hi = min(values), max(values)
    if lo >= 0:
        width = max(1, hi.bit_length())
        return EnumRange(name, 0, (1 << width) - 1)
    width = max(hi.bit_length(), (-lo - 1).bit_length()) + 1
    return EnumRange(name, -(1 << (width - 1)), (1 << (width - 1)) - 1)


def _enumerator_values(body: str) -> list[int] | None:
    """The enumerators' values: each an integer literal, an earlier enumerator, or one more than the one before."""
    known: dict[str, int] = {}
    values: list[int] = []
    following = 0
    for item in (part.strip() for part in body.split(",")):
        if not item:
            continue
        m = re.fullmatch(rf"({_NAME})\s*(?:=\s*(.+))?", item, re.S)
        if m is None:
            return None
        if m.group(2) is not None:
            value = _value(m.group(2).strip(), known)
            if value is None:
                return None
            following = value
        known[m.group(1)] = following
        values.append(following)
        following += 1
    return values


def _value(expr: str, known: dict[str, int]) -> int | None:
    while expr.startswith("(") and expr.endswith(")") and balanced(expr, 0) == expr[1:-1]:
        expr = expr[1:-1].strip()
    if expr in known:
        return known[expr]
    m = _INT.fullmatch(expr)
    if m is None:
        return None
    digits = m.group(2)
    value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 8) if len(digits) > 1 and digits[0] == "0" else int(digits)
    return -value if m.group(1) == "-" else value


def _depth(text: str, at: int) -> int:
    """How many braces are open at `at` (0: file scope)."""
    return text.count("{", 0, at) - text.count("}", 0, at)


def _conditional_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost `#if`/`#ifdef`/`#ifndef` ... `#endif` region."""
    spans, stack = [], []
    for m in _DIRECTIVE.finditer(text):
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef"):
            stack.append(m.start())
        elif word == "endif" and stack:
            start = stack.pop()
            if not stack:
                spans.append((start, m.end()))
    if stack:
        spans.append((stack[0], len(text)))
    return spans
