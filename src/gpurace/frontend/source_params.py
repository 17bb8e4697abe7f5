"""C++ parameter names of a kernel, read from its source file.

PTX names parameters `_Z5countPiS__param_0`; the mangled name holds their
types but not their names. Reports that say `counter (int*)` instead of
`arg1 (int*)` are easier to act on, and the names are what users write in
annotations such as `__requires(n == 256)`. So when the kernel came from a
`.cu` file, its `__global__` definition is found in the text and its
parameter list split. This is a light reading of the source, not a C++
parser: any doubt (macros in the signature, overloads with the same number
of parameters and different names, unnamed parameters) gives None for that
name, and reports fall back to `argN`.
"""

from __future__ import annotations

import re

from gpurace.frontend.demangle import split_top_level

_COMMENT_OR_STRING = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_IDENTIFIER_AT_END = re.compile(r"([A-Za-z_]\w*)\s*$")
# Words that end a parameter declaration without naming it (`unsigned int`, `float*` is caught by the `*`).
_TYPE_WORDS = frozenset(
    "void bool char short int long signed unsigned float double size_t const volatile __restrict__ "
    "restrict struct class enum typename".split()
)


def _blank(match: re.Match) -> str:
    """Replace a comment or literal by spaces, keeping newlines, so offsets and line numbers stay put."""
    return re.sub(r"[^\n]", " ", match.group(0))


def strip_comments(source: str) -> str:
    """The source with comments and string/char literals blanked out."""
    return _COMMENT_OR_STRING.sub(_blank, source)


def parameter_names(source: str, kernel_name: str, count: int) -> tuple[str | None, ...] | None:
    """The names of the `count` parameters of `__global__` function `kernel_name` in `source`.

    `kernel_name` is the demangled name (`ns::scale`, `steps<float, 4>`): the
    unqualified name without template arguments is looked up. Returns None
    when no single reading of the definition can be trusted.
    """
    base = kernel_name.split("<", 1)[0].rsplit("::", 1)[-1]
    if not re.fullmatch(r"[A-Za-z_]\w*", base):
        return None
    text = _DIRECTIVE.sub(_blank, strip_comments(source))  # a macro's body is not a definition
    readings: set[tuple[str | None, ...]] = set()
    for match in re.finditer(rf"\b{re.escape(base)}\s*\(", text):
        if "__global__" not in _declaration_prefix(text, match.start()):
            continue
        inner = balanced(text, match.end() - 1)
        if inner is None:
            continue
        names = _names(inner)
        if names is not None and len(names) == count:
            readings.add(names)
    return readings.pop() if len(readings) == 1 else None


def _declaration_prefix(text: str, at: int) -> str:
    """The text of the declaration that the name at `at` belongs to, up to the name."""
    start = max(text.rfind(c, 0, at) for c in ";{}") + 1
    return text[start:at]


def balanced(text: str, open_at: int, opening: str = "(", closing: str = ")") -> str | None:
    """The text between the bracket at `open_at` and its match; None when it is never closed."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i]
    return None


def _names(inner: str) -> tuple[str | None, ...] | None:
    inner = " ".join(inner.split())
    if inner in ("", "void"):
        return ()
    names: list[str | None] = []
    for decl in split_top_level(inner):
        decl = decl.split("=", 1)[0]  # a default argument
        decl = re.sub(r"\[[^\]]*\]", "", decl).strip()  # array declarators
        m = _IDENTIFIER_AT_END.search(decl)
        named = m is not None and m.group(1) not in _TYPE_WORDS and len(decl[: m.start()].strip()) > 0
        names.append(m.group(1) if named else None)
    return tuple(names)
