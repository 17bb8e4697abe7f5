"""C++ kernel names and parameter types from mangled PTX symbols.

PTX knows parameters only as `.u64`/`.b32`/byte arrays; the C++ types (which
pointer is `const`, what a pointer points to, which argument is a struct) live
only in the mangled name. The demangling itself is the `cxxfilt` package's
(the toolchain's own `__cxa_demangle`); this module splits its output into a
name and parameter types and puts each type in the spelling CUDA programmers
write (`const int*` rather than the demangler's `int const*`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cxxfilt

_OPEN = "<(["
_CLOSE = ">)]"
_CV = ("const", "volatile")
_TRAILING_QUALIFIERS = re.compile(r"(?:\s*(?:const|volatile|&&|&))+$")
# `float const (*) [4][8]`: a pointer to an array, as the demangler writes it (and as CUDA programmers do).
_POINTER_TO_ARRAY = re.compile(r"^(?P<base>[^()]+?)\s*\(\s*\*(?P<quals>(?:\s*(?:const|volatile|restrict|__restrict__))*)\s*\)\s*(?P<dims>(?:\[\d+\]\s*)+)$")


@dataclass(frozen=True)
class Signature:
    """A kernel's C++ name and parameter types.

    `name` keeps namespaces and template arguments (`ns::scale`,
    `steps<float, 4>`) but not the return type. `param_types` is None for an
    unmangled (`extern "C"`) symbol, whose parameter types PTX does not record.
    """

    name: str
    param_types: tuple[str, ...] | None


def demangle_signature(symbol: str) -> Signature:
    """Split a (possibly) mangled symbol into name and normalised parameter types."""
    if not symbol.startswith("_Z"):
        return Signature(symbol, None)
    try:
        text = cxxfilt.demangle(symbol)
    except cxxfilt.InvalidName:
        return Signature(symbol, None)
    open_at = _param_list_start(text)
    if open_at is None:
        return Signature(text, None)
    name = _strip_return_type(text[:open_at].strip())
    inner = text[open_at + 1 : text.rindex(")")].strip()
    if inner in ("", "void"):
        return Signature(name, ())
    return Signature(name, tuple(normalize_type(t) for t in split_top_level(inner)))


def function_name(signature: str) -> str:
    """The name in a demangled function signature, without return type, parameters and qualifiers.

    `cuda::atomic_ref<int>::fetch_add` for `int cuda::atomic_ref<int>::fetch_add(int, cuda::memory_order) const`:
    the signatures of library code run to hundreds of characters, and a
    report that already gives the file and line needs only the name. Text
    that is not a signature (a label) is returned as it is.
    """
    text = signature.strip()
    unqualified = _TRAILING_QUALIFIERS.sub("", text)
    open_at = _param_list_start(unqualified)
    return text if open_at is None else _strip_return_type(unqualified[:open_at].strip())


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` characters outside any <>, () or [] nesting, stripping each part."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def normalize_type(spelling: str) -> str:
    """Rewrite a demangled type in the usual CUDA spelling.

    `int const*` -> `const int*`, `float const restrict*` -> `const float*`
    (restrict on a pointee means nothing), `int* restrict` -> `int* __restrict__`,
    `unsigned int volatile*` -> `volatile unsigned int*`, `float const (*) [4][8]`
    -> `const float (*)[4][8]` (a pointer to arrays, the type a parameter
    `const float x[][4][8]` has). Function pointer types are left as the
    demangler wrote them.
    """
    spelling = " ".join(spelling.split())
    to_array = _POINTER_TO_ARRAY.match(spelling)
    if to_array is not None:
        quals = " ".join(to_array["quals"].replace("__restrict__", "restrict").replace("restrict", "__restrict__").split())
        dims = "".join(to_array["dims"].split())
        return f"{normalize_type(to_array['base'])} (*{' ' + quals if quals else ''}){dims}"
    if "(" in spelling:
        return spelling
    cut = _first_top_level(spelling, "*&")
    base, declarator = (spelling, "") if cut is None else (spelling[:cut], spelling[cut:])
    words = base.split()
    quals = [q for q in _CV if q in words]
    core = " ".join(w for w in words if w not in _CV and w != "restrict")
    out = " ".join([*quals, core])
    declarator = " ".join(declarator.replace("restrict", "__restrict__").split())
    declarator = declarator.replace("* ", "*").replace("*const", "* const")
    declarator = declarator.replace("*volatile", "* volatile").replace("*__restrict__", "* __restrict__")
    return out + declarator


def pointer_to_array(spelling: str) -> tuple[str, tuple[int, ...]] | None:
    """(element type, dimensions) of a pointer to an array: `const float (*)[4][8]` -> ("const float", (4, 8)).

    Such a pointer is what C++ makes of an array parameter with a first
    dimension left open (`float x[][256]` is `float (*)[256]`); None for any
    other type.
    """
    m = _POINTER_TO_ARRAY.match(" ".join(spelling.split()))
    if m is None:
        return None
    return m["base"].strip(), tuple(int(d) for d in re.findall(r"\d+", m["dims"]))


def _param_list_start(text: str) -> int | None:
    """Index of the `(` that opens the final, top-level parameter list."""
    if not text.endswith(")"):
        return None
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch in _CLOSE:
            depth += 1
        elif ch in _OPEN:
            depth -= 1
            if depth == 0:
                return i
    return None


def _strip_return_type(prefix: str) -> str:
    """`void steps<float, 4>` -> `steps<float, 4>`: template functions carry their return type."""
    depth = 0
    last_space = -1
    for i, ch in enumerate(prefix):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == " " and depth == 0:
            last_space = i
    return prefix[last_space + 1 :]


def _first_top_level(text: str, chars: str) -> int | None:
    depth = 0
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch in chars and depth == 0:
            return i
    return None
