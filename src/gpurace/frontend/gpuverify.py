"""Kernel-only files in GPUVerify's style: launch headers, the compatibility cuda.h, simple preconditions.

GPUVerify's test suite, and the suites derived from it, ship only the kernel:
the launch is written on the first comment lines,

    //pass
    //--blockDim=64 --gridDim=[4,2]

(or `//xfail:BOOGIE_ERROR`, then the options, then lines of expected
messages), and the kernel includes "cuda.h" for GPUVerify's annotation
intrinsics (`__requires`, `__assert`, `__invariant`, ...). This module reads
such headers so that `gpurace check FILE` can run these files without launch
options, knows where gpurace's own cuda.h lives (include/cuda.h next to this
file, which gives each annotation the meaning it can have in one execution),
tells the compiler driver whether a file is written in this style, and reads
the simple bounds on parameters that `__requires` states, so that an input
search need not try values the kernel rejects.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.kernels import KernelInfo
from gpurace.frontend.ptx.ir import Module
from gpurace.frontend.source_params import balanced, strip_comments
from gpurace.sim.memory.layout import function_addresses

Dims = tuple[int, int, int]

COMPAT_INCLUDE_DIR = Path(__file__).resolve().parent / "include"

_LABEL_RE = re.compile(r"^(pass|xfail(?::\S*)?)$")
_OPTIONS_RE = re.compile(r"^(?:--[A-Za-z]|-D)")
_TOKEN_RE = re.compile(r"\S*\[[^\]]*\]\S*|\S+")
_DIMS_RE = re.compile(r"^(?:[0-9]+|\[[0-9]+(?:,[0-9]+){0,2}\])$")
_MAX_DIM_DIGITS = 18
"""A dimension with more digits is far past every CUDA limit; it is refused before conversion."""
_DEFINE_RE = re.compile(r"^[A-Za-z_]\w*(?:=.*)?$")
_BLOCK_OPTIONS = ("--blockDim", "--local_size")
_GRID_OPTIONS = ("--gridDim", "--num_groups")
_SIZE_OPTIONS = (*_BLOCK_OPTIONS, *_GRID_OPTIONS, "--global_size")

# Annotation intrinsics that mark a file as written for GPUVerify (not `__all`,
# which is also CUDA's legacy warp vote).
_ANNOTATION_RE = re.compile(
    r"\b__(?:requires|global_requires|ensures|global_ensures|assert|global_assert|assume|"
    r"invariant|global_invariant|candidate_invariant|candidate_global_invariant|function_wide_invariant|"
    r"barrier_invariant(?:_binary)?(?:_\d+)?|implies|read|write|no_read|no_write|read_offset_bytes|"
    r"write_offset_bytes|ptr_base|ptr_offset_bytes|other_int|other_bool|uniform_int|uniform_bool|"
    r"distinct_int|distinct_bool|exclusive|enabled|is_pow2|mod_pow2|add_noovfl\w*|array_snapshot|axiom)\s*\("
    r"|\b__same_group\b"
)


@dataclass(frozen=True)
class LaunchHeader:
    """A GPUVerify launch header: what the first comment lines of a kernel file say.

    `grid` and `block` are None when the header does not give them; `expect`
    is the label (`"pass"`, `"xfail:BOOGIE_ERROR"`, ...) or None; `defines`
    are the `-DNAME[=VALUE]` options; `ignored` lists the other GPUVerify
    options as written (`--no-inline`, `--warp-sync=32`, ...), which concern
    the verifier only; `line` is the line of the options (or of the label).
    """

    path: str
    line: int
    grid: Dims | None = None
    block: Dims | None = None
    expect: str | None = None
    defines: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()


def read_launch_header(path: str | os.PathLike) -> LaunchHeader | None:
    """The GPUVerify launch header of the file at `path`, or None when it has none.

    A header is optional; a malformed one (`--blockDim=abc`) is a UserError
    naming the file and line.
    """
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise UserError(f"{path}: cannot read it: {e.strerror}") from None
    return parse_launch_header(text, str(path))


def parse_launch_header(text: str, path: str = "<source>") -> LaunchHeader | None:
    """The launch header in the leading `//` comment lines of `text` (see `read_launch_header`).

    The label is the first comment line that is `pass` or `xfail[:...]`; the
    options are the first comment line that starts with `--NAME` or `-D`.
    A block is a header only if it has a label or gives launch dimensions,
    so that an ordinary comment such as `//--verbose prints more` is not one.
    """
    label: tuple[int, str] | None = None
    options: tuple[int, str] | None = None
    for lineno, body in _leading_comments(text):
        if label is None and _LABEL_RE.match(body):
            label = (lineno, body)
        elif options is None and _OPTIONS_RE.match(body):
            options = (lineno, body)
    if options is not None and label is None and not _gives_dimensions(options[1]):
        options = None
    if label is None and options is None:
        return None
    expect = label[1] if label else None
    if options is None:
        return LaunchHeader(path=path, line=label[0], expect=expect)
    return _parse_options(path, options[0], options[1], expect)


def uses_gpuverify(code: str) -> bool:
    """True when a source is written for GPUVerify: it has a launch header or uses annotation intrinsics.

    Such files get gpurace's compatibility cuda.h on the include path (and an
    `#include <cuda.h>` in them does not mean host code); this check never
    raises, even for a malformed header, which is reported where the header is read.
    """
    if _ANNOTATION_RE.search(strip_comments(code)):
        return True
    for _, body in _leading_comments(code):
        if _LABEL_RE.match(body) or (_OPTIONS_RE.match(body) and _gives_dimensions(body)):
            return True
    return False


# Names by which a GPUVerify-style file uses a CUDA library that GPUVerify's cuda.h declared, and the macro that
# makes gpurace's cuda.h include that library's real header (include/cuda.h).
_LIBRARY_USES = (
    (
        "__GPURACE_COOPERATIVE_GROUPS",
        re.compile(r"\b(?:cooperative_groups|this_thread_block|this_grid|thread_block\w*|grid_group|"
                   r"tiled_partition|coalesced_\w+|synchronize)\b"),
    ),
    ("__GPURACE_CURAND", re.compile(r"\bcurand\w*")),
)


def library_macros(code: str) -> list[str]:
    """The macros with which gpurace's cuda.h gives a GPUVerify-style file the libraries it uses unincluded.

    GPUVerify's own cuda.h declared cooperative groups and cuRAND's device
    API, so kernels written for it use them without including anything;
    gpurace's cuda.h includes their real headers instead, but only for a file
    that names them, since each costs seconds of compilation.
    """
    text = strip_comments(code)
    return [macro for macro, uses in _LIBRARY_USES if uses.search(text)]


def _leading_comments(text: str):
    """(line number, text after `//`) of each comment line in the leading block of blank and `//` lines."""
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("//"):
            return
        yield lineno, stripped[2:].strip()


def _gives_dimensions(options: str) -> bool:
    return any(_option_name(t) in _SIZE_OPTIONS for t in _tokens(options))


def _tokens(body: str) -> list[str]:
    return _TOKEN_RE.findall(body)


def _option_name(token: str) -> str:
    return token.split("=", 1)[0]


def _parse_options(path: str, lineno: int, body: str, expect: str | None) -> LaunchHeader:
    where = f"{path}:{lineno}"
    grid = block = total = None
    defines: list[str] = []
    ignored: list[str] = []
    tokens = _tokens(body)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name = _option_name(token)
        if token == "-D" and i + 1 < len(tokens):
            i += 1
            defines.append(_define(where, tokens[i]))
        elif token.startswith("-D"):
            defines.append(_define(where, token[2:]))
        elif name in _SIZE_OPTIONS:
            dims = _dims(where, name, token[len(name) + 1 :] if "=" in token else None)
            if name in _BLOCK_OPTIONS:
                block = dims
            elif name in _GRID_OPTIONS:
                grid = dims
            else:
                total = dims
        else:
            ignored.append(token)
        i += 1
    if total is not None and grid is None:
        grid = _grid_from_global_size(where, total, block)
    return LaunchHeader(
        path=path, line=lineno, grid=grid, block=block, expect=expect, defines=tuple(defines), ignored=tuple(ignored)
    )


def _dims(where: str, name: str, value: str | None) -> Dims:
    """`64`, `[64,2]` or `[64, 2, 1]` -> three positive ints."""
    compact = "".join(value.split()) if value is not None else ""
    if not _DIMS_RE.match(compact):
        raise UserError(
            f"{where}: {name}={value or ''}: expected a positive integer or [X,Y] / [X,Y,Z] of positive integers"
        )
    parts = compact.strip("[]").split(",")
    digits = max(len(p) for p in parts)
    if digits > _MAX_DIM_DIGITS:
        raise UserError(f"{where}: {name}: a dimension of {digits} digits is far past what CUDA allows")
    dims = [int(p) for p in parts]
    if any(d <= 0 for d in dims):
        raise UserError(f"{where}: {name}={value}: dimensions must be positive")
    return tuple((dims + [1, 1])[:3])  # type: ignore[return-value]


def _define(where: str, text: str) -> str:
    if not _DEFINE_RE.match(text):
        raise UserError(f"{where}: -D{text}: expected -DNAME or -DNAME=VALUE")
    return text


def _grid_from_global_size(where: str, total: Dims, block: Dims | None) -> Dims:
    """GPUVerify's `--global_size` counts threads; the grid is that divided by the block."""
    if block is None:
        raise UserError(f"{where}: --global_size needs --local_size (or --blockDim) to give the grid")
    if any(t % b for t, b in zip(total, block)):
        raise UserError(f"{where}: --global_size={list(total)} is not a multiple of the block {list(block)}")
    return tuple(t // b for t, b in zip(total, block))  # type: ignore[return-value]


# --------------------------------------------------------------------------
# Simple preconditions
# --------------------------------------------------------------------------

_REQUIRES_RE = re.compile(r"\b__(?:(?:global_)?requires|assume)\s*\(")
_DIRECTIVE_RE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_INT = r"[-+]?(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*"
_NAME = r"[A-Za-z_]\w*"
_OPERAND = rf"{_INT}|{_NAME}"
_COMPARISON_RE = re.compile(
    rf"^(?:(?P<n1>{_NAME})\s*(?P<op1>==|>=|<=|>|<)\s*(?P<c1>{_OPERAND})|(?P<c2>{_INT})\s*(?P<op2>==|>=|<=|>|<)\s*(?P<n2>{_NAME}))$"
)
_MIRROR = {"==": "==", ">=": "<=", "<=": ">=", ">": "<", "<": ">"}

Bounds = tuple[int | None, int | None]


def simple_requirements(
    source_text: str, param_names, *, kernel: str | None = None, constants: Mapping[str, int] = {}
) -> dict[str, Bounds]:
    """Inclusive bounds `(lo, hi)` on parameters that the `__requires` and `__assume` of `source_text` state.

    Reads `__requires(...)`, `__global_requires(...)` and `__assume(...)` (an
    assumption about a parameter bounds its values as a precondition does,
    Faial's examples state theirs that way) whose argument is a
    comparison of a parameter with an integer constant (`x == C`, `x >= C`,
    `x > C`, `x <= C`, `x < C`, or the constant first, `C <= x`), or a
    conjunction of such comparisons with `&&` (or `&`, as GPUVerify kernels
    often write it) next to other conditions; those other conditions are left
    to the check at run time. A disjunction (`i == 1 | i == 2`, with `|` or
    `||`) is satisfied by its first alternative that is wholly such a
    conjunction: its bounds are taken (one alternative is enough for the
    precondition to hold). Preconditions with `?:`, `,` or `^` at the top
    level, or with `|` inside `&&`, are left to the check at run time.
    `constants` names identifiers that stand for integers, such as device
    functions (`f == divideByTwo` bounds a function pointer to that function's
    address). `param_names` are the C++ names (None entries are
    skipped); a side without a bound is None, and lo > hi means the
    preconditions contradict each other. With `kernel` (its name), only
    preconditions inside that `__global__` function's body are read, since a
    device function's `__requires` or `__assume` constrains its own parameters.
    The bounds only choose values (automatic scalars, search candidates): every
    `__requires` and `__assume` is still checked where the kernel runs it.
    """
    names = {n for n in param_names if n}
    text = _DIRECTIVE_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), strip_comments(source_text))
    if kernel is not None:
        text = _kernel_body(text, kernel)
    bounds: dict[str, list[int | None]] = {}
    for m in _REQUIRES_RE.finditer(text):
        inner = balanced(text, m.end() - 1)
        if inner is None:
            continue
        for name, op, value in _chosen_comparisons(inner, names, constants):
            lo, hi = {"==": (value, value), ">=": (value, None), ">": (value + 1, None), "<=": (None, value), "<": (None, value - 1)}[op]
            current = bounds.setdefault(name, [None, None])
            if lo is not None:
                current[0] = lo if current[0] is None else max(current[0], lo)
            if hi is not None:
                current[1] = hi if current[1] is None else min(current[1], hi)
    return {name: (b[0], b[1]) for name, b in bounds.items()}


def _chosen_comparisons(expr: str, names, constants: Mapping[str, int]) -> list[tuple[str, str, int]]:
    """The comparisons of one precondition that choose values: the simple conjuncts of a conjunction, or all of
    the first alternative of a disjunction whose conjuncts are all simple; [] when nothing can be chosen."""
    alternatives = _disjuncts(expr)
    if len(alternatives) == 1:
        parsed = [_comparison(c, names, constants) for c in _conjuncts(expr)]
        return [c for c in parsed if c is not None]
    for alternative in alternatives:
        conjuncts = _conjuncts(_unparenthesised(alternative))
        parsed = [_comparison(c, names, constants) for c in conjuncts]
        if conjuncts and None not in parsed:
            return parsed  # type: ignore[return-value]
    return []


def kernel_requirements(source_text: str, kernel: KernelInfo, constants: Mapping[str, int] = {}) -> dict[int, Bounds]:
    """`simple_requirements` of a kernel's own `__requires`, keyed by parameter index.

    Parameters whose C++ name is unknown (`ParamInfo.cpp_name` None) get no
    bounds; their preconditions are still checked when the kernel runs.
    """
    names = [p.cpp_name for p in kernel.params]
    bounds = simple_requirements(source_text, names, kernel=kernel.name, constants=constants)
    return {i: bounds[name] for i, name in enumerate(names) if name in bounds}


def requirement_bounds(module: Module, info: KernelInfo) -> dict[int, Bounds]:
    """`kernel_requirements` of a kernel of `module`, read from its CUDA source (none for PTX input): the
    defaults of `auto` scalars and the candidates of the input search stay inside them instead of
    stopping at the precondition. The module's device functions are constants there (their addresses, as
    the simulator gives them), so `__requires(f == g)` picks function `g` for a function pointer `f`.
    Other preconditions are checked when the kernel runs."""
    path = module.source_path
    if path is None or Path(path).suffix == ".ptx":
        return {}
    return kernel_requirements(Path(path).read_text(encoding="utf-8", errors="replace"), info, function_constants(module))


def function_constants(module: Module) -> dict[str, int]:
    """The address of each device function of `module` by its unqualified C++ name, for names only one
    function has (an overloaded name is no constant)."""
    by_name: dict[str, list[int]] = {}
    for mangled, address in function_addresses(module.functions).items():
        by_name.setdefault(demangle_signature(mangled).name.rsplit("::", 1)[-1], []).append(address)
    return {name: addresses[0] for name, addresses in by_name.items() if len(addresses) == 1}


def _kernel_body(text: str, kernel: str) -> str:
    """The bodies of the `__global__` definitions of `kernel` (unqualified, without template arguments)."""
    base = kernel.split("<", 1)[0].rsplit("::", 1)[-1]
    bodies = []
    for m in re.finditer(rf"\b{re.escape(base)}\s*\(", text):
        prefix = text[max(text.rfind(c, 0, m.start()) for c in ";{}") + 1 : m.start()]
        if "__global__" not in prefix:
            continue
        params = balanced(text, m.end() - 1)
        if params is None:
            continue
        after = m.end() + len(params) + 1
        brace = re.match(r"[^;{]*\{", text[after:])
        if brace is None:
            continue
        body = balanced(text, after + brace.end() - 1, "{", "}")
        if body is not None:
            bodies.append(body)
    return "\n".join(bodies)


def _disjuncts(expr: str) -> list[str]:
    """The alternatives of `expr` joined by top-level `||` or `|`; [expr] when it has none, and [] when the
    top level mixes them with what this reading does not take (`?:`, `,`, `^`, an assignment, or `&&`
    binding looser than a `|`)."""
    ops = {op for _, op in _top_level(expr)}
    if ops & {"?", ",", "^", "="} or {"|", "&&"} <= ops:
        return []
    return _split(expr, ("||", "|"))


def _conjuncts(expr: str) -> list[str]:
    """The parts of `expr` joined by top-level `&&` or `&`; [] when something binds looser at the top level."""
    if {op for _, op in _top_level(expr)} & {"||", "|", "?", ",", "^", "="}:
        return []
    return _split(expr, ("&&", "&"))


def _split(expr: str, ops: tuple[str, ...]) -> list[str]:
    """`expr` cut at its top-level operators `ops`."""
    parts, start = [], 0
    for i, op in _top_level(expr):
        if op in ops:
            parts.append(expr[start:i])
            start = i + len(op)
    parts.append(expr[start:])
    return parts


def _top_level(expr: str):
    """(position, operator) of the operators outside brackets that decide how a precondition reads: `||`,
    `&&`, `|`, `&`, and `?`, `,`, `^` and `=` (an assignment, not `==`, `<=`, `>=` or `!=`)."""
    depth, i = 0, 0
    while i < len(expr):
        c = expr[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and expr[i : i + 2] in ("||", "&&"):
            yield i, expr[i : i + 2]
            i += 2
            continue
        elif depth == 0 and (c in "|&?,^" or (c == "=" and _is_assignment(expr, i))):
            yield i, c
        i += 1


def _is_assignment(expr: str, i: int) -> bool:
    """True for the `=` of an assignment, false for `==`, `<=`, `>=` and `!=`."""
    return expr[i - 1 : i] not in ("=", "<", ">", "!") and expr[i + 1 : i + 2] != "="


def _comparison(conjunct: str, names, constants: Mapping[str, int]) -> tuple[str, str, int] | None:
    """`n >= 64`, `(64 <= n)` -> ("n", ">=", 64), with the parameter (one of `names`) on the left; a name in
    `constants` counts as its integer."""
    m = _COMPARISON_RE.match(_unparenthesised(conjunct))
    if m is None:
        return None
    if m.group("n1"):
        name, op, other = m.group("n1"), m.group("op1"), m.group("c1")
    else:
        name, op, other = m.group("n2"), _MIRROR[m.group("op2")], m.group("c2")
    if name not in names:
        if other not in names or name not in constants:
            return None
        name, op, other = other, _MIRROR[op], name
    if other in constants:
        return name, op, constants[other]
    if re.fullmatch(_INT, other) is None:
        return None
    return name, op, _int(other)


def _unparenthesised(expr: str) -> str:
    """`expr` without the parentheses around all of it: `((a > 1))` -> `a > 1`."""
    text = expr.strip()
    while text.startswith("(") and balanced(text, 0) == text[1:-1]:
        text = text[1:-1].strip()
    return text


def _int(literal: str) -> int:
    """A C integer literal (decimal, hex, or octal with a leading 0), with its sign and suffixes."""
    digits = literal.rstrip("uUlL")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    if digits[:2] in ("0x", "0X"):
        return sign * int(digits, 16)
    return sign * int(digits, 8 if len(digits) > 1 and digits.startswith("0") else 10)
