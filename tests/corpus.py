"""Reader for the expectation headers of the labelled kernel corpus (tests/kernels/README.md).

Kept independent of the production front end (its own signature splitting) so
that a bug in the front end cannot hide itself by also misreading the header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

KERNELS_DIR = Path(__file__).parent / "kernels"

_HEADER_RE = re.compile(r"^(?://|#)\s*@(\w+)\s*(.*?)\s*$")


@dataclass
class CorpusHeader:
    """Expectations for one corpus file.

    `kernels` maps each kernel name to its parameter types (None entries for
    `?`, i.e. untyped extern "C" parameters). Per-kernel maps are keyed by the
    kernel name with whitespace removed (`steps<float,4>`); `kernel_key`
    computes that key. Keys the reader does not know stay in `extra`, raw.
    """

    path: Path
    kernels: dict[str, tuple[str | None, ...]] = field(default_factory=dict)
    shared: dict[str, int] = field(default_factory=dict)
    barriers: dict[str, list[int]] = field(default_factory=dict)
    warpsyncs: dict[str, list[int]] = field(default_factory=dict)
    atomics: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    fences: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    launches: list[str] = field(default_factory=list)
    expect: list[str] = field(default_factory=list)
    extra: dict[str, list[str]] = field(default_factory=dict)


def kernel_key(name: str) -> str:
    """A kernel name as written in per-kernel header lines: without whitespace."""
    return "".join(name.split())


def corpus_files(directory: Path = KERNELS_DIR) -> list[Path]:
    return sorted([*directory.glob("*.cu"), *directory.glob("*.hip")])


HIP_SKIP_REASON = (
    "HIP's headers (hip/hip_runtime.h) not found in $HIP_PATH, /opt/rocm, /usr or ~/.cache/gpurace/hip/usr: run "
    ".ci/hip-headers (Debian's libamdhip64-dev unpacked into ~/.cache/gpurace/hip) or see the README's HIP kernels"
)


def hip_headers_found() -> bool:
    """True when HIP's headers can be found (`gpurace.frontend.hip`) or CI requires them
    (GPURACE_REQUIRE_HIP=1, set by .ci/run: there a HIP test must fail, not skip, when they are missing)."""
    import os

    from gpurace.errors import UserError
    from gpurace.frontend.hip import find_hip_include_dir

    if os.environ.get("GPURACE_REQUIRE_HIP") == "1":
        return True
    try:
        return find_hip_include_dir() is not None
    except UserError:
        return False


def hip_marks(path: Path) -> list:
    """The pytest marks of a corpus case for `path`: a skip with `HIP_SKIP_REASON` for a `.hip` file when HIP's
    headers are absent."""
    import pytest

    if path.suffix == ".hip" and not hip_headers_found():
        return [pytest.mark.skip(reason=HIP_SKIP_REASON)]
    return []


def read_header(path: Path) -> CorpusHeader:
    """Parse the `// @key value` lines of the leading comment block of `path` (`# @key value` in a Python file)."""
    header = CorpusHeader(path)
    comment = "#" if path.suffix == ".py" else "//"
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if not line.startswith(comment):
            break
        m = _HEADER_RE.match(line)
        if m is None:
            continue
        key, value = m.groups()
        try:
            _apply(header, key, value)
        except ValueError as e:
            raise ValueError(f"{path}:{lineno}: bad @{key} line: {e}") from None
    return header


def _apply(header: CorpusHeader, key: str, value: str) -> None:
    if key == "kernel":
        name, params = _parse_signature(value)
        header.kernels[name] = params
    elif key == "shared":
        name, rest = _split_name(value)
        header.shared[name] = int(rest)
    elif key in ("barriers", "warpsyncs"):
        name, rest = _split_name(value)
        getattr(header, key)[name] = [int(x) for x in rest.split()]
    elif key == "atomics":
        name, rest = _split_name(value)
        header.atomics[name] = [_parse_atomic(item) for item in rest.split()]
    elif key == "fences":
        name, rest = _split_name(value)
        header.fences[name] = [(int(line), scope) for line, scope in (item.split(":") for item in rest.split())]
    elif key == "launch":
        header.launches.append(value)
    elif key == "expect":
        header.expect.append(value)
    else:
        header.extra.setdefault(key, []).append(value)


def _split_name(value: str) -> tuple[str, str]:
    parts = value.split(None, 1)
    if len(parts) != 2:
        raise ValueError("expected a kernel name and values")
    return parts[0], parts[1]


def _parse_atomic(item: str) -> tuple[int, str, str]:
    line, opscope = item.split(":")
    op, scope = opscope.split(".")
    return int(line), op, scope


def _parse_signature(value: str) -> tuple[str, tuple[str | None, ...]]:
    """`steps<float, 4>(float*, int)` -> ("steps<float,4>", ("float*", "int"))."""
    depth = 0
    for i, ch in enumerate(value):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            break
    else:
        raise ValueError("expected NAME(TYPES)")
    if not value.endswith(")"):
        raise ValueError("expected NAME(TYPES)")
    name = kernel_key(value[:i])
    inner = value[i + 1 : -1].strip()
    params: list[str | None] = []
    if inner:
        depth, start = 0, 0
        for j, ch in enumerate(inner + ","):
            if ch in "<(":
                depth += 1
            elif ch in ">)":
                depth -= 1
            elif ch == "," and depth == 0:
                item = " ".join(inner[start:j].split())
                params.append(None if item == "?" else item)
                start = j + 1
    return name, tuple(params)
