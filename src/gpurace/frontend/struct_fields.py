"""Data member names of a struct, read from its definition in the source.

PTX knows a struct passed by value only as a byte array, and the mangled
name only names its type. To put buffers into the struct's pointer fields,
gpurace needs its fields: their types, offsets and sizes come from the
compiler (`type_probe`), but no compiler can list a struct's members (C++
has no reflection), so their names are read from the definition here. Like
`source_params`, this is a light reading of the text, not a C++ parser:
anything it cannot read with confidence (a base class, a bit-field, an
anonymous union, two different definitions of the same name) gives None,
and a member whose struct type is defined in place (`struct { int *p; } s;`)
is listed by its members' paths (`s.p`),
and the compiler then checks every name it gives (a wrong name does not
compile; a member it missed shows as a gap in the layout, see
`type_probe.check_coverage`).

The definition may be in the checked file or in a file it includes with
`#include "..."`, found next to the including file or on the include path
(`source_files`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from gpurace.frontend.demangle import split_top_level
from gpurace.frontend.ptx.debuginfo import read_named_source
from gpurace.frontend.source_params import balanced, strip_comments

MAX_SOURCE_FILES = 32
"""Files read at most when looking for a definition: the checked file and the files it includes."""

_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_IDENTIFIER_AT_END = re.compile(r"([A-Za-z_]\w*)\s*$")
# `__align__(16)`, `alignas(8)`, `__attribute__((aligned(8)))`, `[[nodiscard]]`: attributes say nothing of names.
_ATTRIBUTE = re.compile(r"\b(?:__align__|alignas|__declspec)\s*\([^()]*\)|\b__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|\[\[.*?\]\]")
_ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")
# A declarator that names a pointer to a function or to an array: `(*name)(int)`, `(*rows)[4]`.
_POINTER_DECLARATOR = re.compile(r"\(\s*[*&]\s*(?:const\s+|volatile\s+|__restrict__\s+)*([A-Za-z_]\w*)\s*\)")
_NOT_MEMBERS = frozenset("typedef using static friend template static_assert enum constexpr".split())
_TYPE_WORDS = frozenset(
    "void bool char short int long signed unsigned float double const volatile __restrict__ struct class union "
    "enum typename mutable".split()
)


def base_name(type_name: str) -> str:
    """The name a definition declares for `type_name`: `ns::Wrapper<int, 4u>` -> `Wrapper`."""
    previous = None
    while previous != type_name:  # drop template arguments, innermost first
        previous, type_name = type_name, re.sub(r"<[^<>]*>", "", type_name)
    return type_name.rsplit("::", 1)[-1].strip()


def member_names(sources: Iterable[str], type_name: str) -> tuple[str, ...] | None:
    """The data members of struct or class `type_name`, in declaration order, from its definitions in `sources`;
    None when there is none or when the definitions read differently (see the module docstring)."""
    name = base_name(type_name)
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    readings: set[tuple[str, ...] | None] = set()
    for source in sources:
        text = _DIRECTIVE.sub(_blank, strip_comments(source))  # a macro's body is not a definition
        readings.update(_definitions(text, name))
    if len(readings) != 1:
        return None
    return readings.pop()


def source_files(path: str, include_dirs: Iterable[str] = ()) -> list[str]:
    """The texts of the file at `path` and of the files it includes with `#include "..."`, transitively, at most
    MAX_SOURCE_FILES (system headers `<...>` are not read: a kernel's structs are not defined there)."""
    include_dirs = list(include_dirs)
    todo, seen, texts = [os.path.abspath(path)], set(), []
    while todo and len(texts) < MAX_SOURCE_FILES:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        text = read_named_source(current)
        if text is None:
            continue
        texts.append(text)
        for included in _QUOTED_INCLUDE.findall(text):  # a directive starts its line, so comments rarely hide one
            found = _find_include(included, os.path.dirname(current), include_dirs)
            if found is not None:
                todo.append(found)
    return texts


def _find_include(name: str, directory: str, include_dirs: list[str]) -> str | None:
    for base in (directory, *include_dirs):
        candidate = os.path.abspath(os.path.join(base, name))
        if os.path.isfile(candidate):
            return candidate
    return None


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def _definitions(text: str, name: str) -> list[tuple[str, ...] | None]:
    """A reading per definition of `name` in `text`: `struct NAME {...}` and `typedef struct [TAG] {...} NAME;`."""
    found: list[tuple[str, ...] | None] = []
    attributes = r"(?:(?:__align__|alignas|__declspec)\s*\([^()]*\)\s*|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*)*"
    head = re.compile(rf"\b(?:struct|class)\s+{attributes}{re.escape(name)}\s*(?:final\s*)?(:(?!:)[^;{{]*)?\{{")
    for m in head.finditer(text):
        body = balanced(text, m.end() - 1, "{", "}")
        if body is not None:
            found.append(None if m.group(1) else _members(body))  # members of a base class are not listed here
    for m in re.finditer(rf"\btypedef\s+struct\s*{attributes}(?:[A-Za-z_]\w*\s*)?\{{", text):
        body = balanced(text, m.end() - 1, "{", "}")
        if body is not None and re.match(rf"\s*{re.escape(name)}\s*;", text[m.end() + len(body) + 1 :]):
            found.append(_members(body))
    return found


def _members(body: str) -> tuple[str, ...] | None:
    names: list[str] = []
    for statement, is_function in _statements(body):
        statement = _ACCESS.sub("", _ATTRIBUTE.sub(" ", statement)).strip()
        if is_function or not statement:
            continue
        words = statement.split()
        if words[0] in _NOT_MEMBERS or re.search(r"\boperator\b", statement):
            continue  # a nested type, a static member, an operator
        if words[0] in ("struct", "class", "union") and "{" in statement:
            nested = _nested_members(statement)
            if nested is None:
                return None
            names.extend(nested)
            continue
        declared = _declared_names(statement)
        if declared is None:
            return None
        names.extend(declared)
    return tuple(names)


def _nested_members(statement: str) -> list[str] | None:
    """The members of a member whose struct type is defined in place, by their paths:
    `struct { int *p; int n; } s;` -> s.p, s.n (such a type often has no name, so its members are reached
    through the member). None for a union (its members overlap), an anonymous member (no declarator), or a
    declarator other than a plain name."""
    m = re.match(r"\s*(?:struct|class)\s*(?:[A-Za-z_]\w*\s*)?\{", statement)
    body = None if m is None else balanced(statement, m.end() - 1, "{", "}")
    if body is None:
        return None
    inner = _members(body)
    declarators = [d.strip() for d in statement[m.end() + len(body) + 1 :].split(",")]
    if inner is None or not all(re.fullmatch(r"[A-Za-z_]\w*", d) for d in declarators):
        return None
    return [f"{d}.{name}" for d in declarators for name in inner]


def _statements(body: str) -> list[tuple[str, bool]]:
    """The member declarations of a class body, each with whether it is a function (a definition with a body
    ends without `;`; a brace initialiser `int n{3};` does not end a declaration)."""
    out: list[tuple[str, bool]] = []
    current: list[str] = []
    depth = 0
    i = 0
    while i < len(body):
        ch = body[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "{" and depth == 0:
            inner = balanced(body, i, "{", "}")
            if inner is None:
                return out
            i += len(inner) + 2
            text = "".join(current)
            if "(" in text.split("=", 1)[0] and not _POINTER_DECLARATOR.search(text):
                out.append((text, True))  # a function (or constructor) with its body
                current = []
            else:
                current.append("{" + (inner if re.match(r"\s*(?:struct|class|union|enum)\b", text) else "") + "}")
            continue
        elif ch == ";" and depth == 0:
            text = "".join(current)
            out.append((text, "(" in text.split("=", 1)[0] and not _POINTER_DECLARATOR.search(text)))
            current = []
            i += 1
            continue
        current.append(ch)
        i += 1
    return out


def _declared_names(statement: str) -> list[str] | None:
    """The names one member declaration declares (`int *a, *b, n` -> a, b, n); None for a bit-field or a
    declarator it cannot read."""
    names = []
    for k, declarator in enumerate(split_top_level(statement)):
        declarator = re.sub(r"\{[^{}]*\}", "", declarator.split("=", 1)[0])  # initialisers
        if re.search(r"(?<!:):(?!:)", declarator):
            return None  # a bit-field has no offset
        pointer = _POINTER_DECLARATOR.search(declarator)
        if pointer is not None:
            names.append(pointer.group(1))
            continue
        declarator = re.sub(r"\[[^\]]*\]", "", declarator).strip()
        m = _IDENTIFIER_AT_END.search(declarator)
        if m is None or m.group(1) in _TYPE_WORDS or (k == 0 and not declarator[: m.start()].strip()):
            return None
        names.append(m.group(1))
    return names
