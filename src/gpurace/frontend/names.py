"""Readable names for PTX symbols in reports.

nvcc names a function-scope `__shared__ int s[256]` in `reduce` as
`_ZZ6reducePKiPiiE1s`; users know it as `s`. Reports show the demangled
variable name, qualified by namespace when it has one, but without the
enclosing function's signature.
"""

from __future__ import annotations

from functools import cache

import cxxfilt


@cache
def variable_name(symbol: str) -> str:
    """`_ZZ6reducePKiPiiE1s` -> `s`; `_ZN2ns7counterE` -> `ns::counter`; unmangled names unchanged."""
    if not symbol.startswith("_Z"):
        return symbol
    try:
        text = cxxfilt.demangle(symbol)
    except cxxfilt.InvalidName:
        return symbol
    depth = 0
    cut = -1
    for i, ch in enumerate(text):
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif ch == ":" and depth == 0 and text[i - 1 : i + 1] == "::" and i >= 1 and text[i - 2] == ")":
            cut = i + 1
    return text[cut:] if cut >= 0 else text
