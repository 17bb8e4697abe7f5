"""C++ type facts that PTX does not keep, asked of the compiler: struct layouts and the types of variables.

PTX has a struct parameter as `.param .align 8 .b8 s[24]` and a `__device__
int *p` as `.global .u64 p`: no field names, no offsets, no pointer types.
Computing a layout in Python from the source text would have to redo the
compiler's alignment rules (nested structs, `__align__`, `alignas`,
templates, typedefs), so gpurace asks the compiler itself. A *probe* is the
module's own source compiled again, with the same compiler and options
(`Module.compile_options`), followed by explicit instantiations of one
empty template kernel, one per question:

    template <int I, class T, unsigned long long A, unsigned long long B, unsigned long long C>
    __global__ void __gpurace_probe() {}
    template __global__ void __gpurace_probe<0, S, sizeof(S), alignof(S), 0>();
    template __global__ void __gpurace_probe<1, decltype(S::a), __builtin_offsetof(S, a), sizeof(S::a), alignof(decltype(S::a))>();

The answers come back in the mangled names of the instantiated kernels in
the PTX (`__gpurace_probe<1, int*, 0ull, 8ull, 8ull>` once demangled): the
type as the compiler resolved it (typedefs and template arguments
included) and the numbers it computed. The member names come from the
struct's definition in the source (`struct_fields`), and the compiler checks
them: a name that is not a member does not compile, and a member the reading
missed leaves a gap that `check_coverage` finds. A struct gpurace cannot
read gives `LayoutUnknown`, whose message says why.

A probe costs one compile (tens to hundreds of milliseconds with NVRTC,
seconds with nvcc); answers are cached per source file version, options and
question.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from gpurace.errors import CompileError, UserError
from gpurace.frontend.compile import compile_to_ptx
from gpurace.frontend.demangle import demangle_signature, normalize_type, split_top_level
from gpurace.frontend.ptx.ir import Module
from gpurace.frontend.struct_fields import member_names, source_files
from gpurace.limits import Limits

PROBE = "__gpurace_probe"
PROBE_TEMPLATE = (
    "template <int I, class T, unsigned long long A, unsigned long long B, unsigned long long C>\n"
    f"__global__ void {PROBE}() {{}}\n"
)
CACHE_ENTRIES = 64
"""Probe answers kept per process (an input search checks the same launch hundreds of times)."""

_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)")
_cache: OrderedDict[tuple, dict[int, tuple[str, int, int, int]]] = OrderedDict()


class LayoutUnknown(UserError):
    """gpurace cannot tell a struct's layout (or a variable's type); the message says why."""


@dataclass(frozen=True)
class Field:
    """A data member: its name, C++ type (normalised as parameter types are), offset, size and alignment."""

    name: str
    type: str
    offset: int
    size: int
    align: int


@dataclass(frozen=True)
class StructLayout:
    """A struct's size, alignment and data members in declaration order, as the compiler lays them out."""

    type: str
    size: int
    align: int
    fields: tuple[Field, ...]


class TypeProbe:
    """Questions about the C++ types of one module, answered by compiling probes of its source (module docstring).

    `limits` bound each compile as they bound the module's own.
    """

    def __init__(self, module: Module, limits: Limits | None = None):
        self.module = module
        self.limits = limits

    def struct_layout(self, type_name: str) -> StructLayout:
        """The layout of the struct `type_name` (as a parameter type spells it); LayoutUnknown when it cannot be told."""
        what = f"the layout of {type_name}"
        self._check_source(what)
        _check_nameable(type_name, what)
        options = self.module.compile_options
        names = member_names(source_files(self.module.source_path, options.include_dirs), type_name)
        if names is None:
            raise LayoutUnknown(
                f"cannot tell {what}: no single definition of it that gpurace can read (a struct or class without "
                f"base classes or bit-fields) in {self.module.source_path} or the files it includes"
            )
        queries = [f"{type_name}, sizeof({type_name}), alignof({type_name}), 0"]
        for name in names:
            # A path into a member of a type defined in place (`s.p`) is reached through an object of the struct.
            access = f"(({type_name}*)0)->{name}" if "." in name else f"{type_name}::{name}"
            member = f"decltype({access})"
            queries.append(f"{member}, __builtin_offsetof({type_name}, {name}), sizeof({access}), alignof({member})")
        try:
            answers = self._probe(queries)
        except CompileError as e:
            raise LayoutUnknown(
                f"cannot tell {what}: the compiler rejected its members as read from the source "
                f"({', '.join(names) or 'none'}): {_first_errors(str(e))}"
            ) from None
        _, size, align, _ = answers[0]
        fields = tuple(Field(name, *answers[k + 1]) for k, name in enumerate(names))
        layout = StructLayout(type_name, size, align, fields)
        check_coverage(layout)
        return layout

    def variable_types(self, names: Iterable[str]) -> dict[str, str]:
        """The C++ types of the namespace-scope variables `names` (C++ names, `ns::p`); a name whose type cannot be
        told (no C++ source, a name only the compiler can spell) is left out."""
        names = list(dict.fromkeys(names))
        if not names or not self._has_source():
            return {}
        writable = [n for n in names if _nameable(n)]
        queries = [f"decltype({n}), 0, sizeof({n}), 0" for n in writable]
        try:
            answers = self._probe(queries)
            return {n: answers[k][0] for k, n in enumerate(writable)}
        except CompileError:
            out = {}
            for n, query in zip(writable, queries):  # one at a time, so one bad name does not hide the others
                try:
                    out[n] = self._probe([query])[0][0]
                except CompileError:
                    pass
            return out

    def _has_source(self) -> bool:
        """Whether the module was compiled from C++ that a probe can be compiled against."""
        path = self.module.source_path
        return self.module.compile_options is not None and path is not None and not str(path).endswith(".ptx")

    def _check_source(self, what: str) -> None:
        if not self._has_source():
            path = self.module.source_path
            raise LayoutUnknown(f"cannot tell {what}: gpurace reads it from the C++ source, and {path or 'the module'} is PTX")

    def _probe(self, queries: list[str]) -> dict[int, tuple[str, int, int, int]]:
        """The answers (type, A, B, C) to `queries` ("TYPE, A, B, C" template arguments) by index; a CompileError
        when the compiler rejects any of them."""
        appendix = PROBE_TEMPLATE + "".join(
            f"template __global__ void {PROBE}<{k}, {query}>();\n" for k, query in enumerate(queries)
        )
        path = str(self.module.source_path)
        options = self.module.compile_options
        try:
            info = os.stat(path)
            version = (info.st_mtime_ns, info.st_size)
        except OSError:
            version = None
        key = (path, version, options, appendix)
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        compiled = compile_to_ptx(
            path, include_dirs=options.include_dirs, defines=options.defines, arch=options.arch,
            device_debug=options.device_debug, limits=self.limits, appendix=appendix, relocatable=options.relocatable,
            nvcc_flags=options.nvcc_flags,
        )  # fmt: skip
        answers = _read_answers(compiled.text)
        if len(answers) != len(queries):
            raise CompileError(f"{path}: the compiler left out {len(queries) - len(answers)} of gpurace's type probes")
        _cache[key] = answers
        if len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
        return answers


def check_coverage(layout: StructLayout) -> None:
    """LayoutUnknown unless the fields account for every byte of the struct but padding: each field at the first
    offset its alignment allows after the previous one, and the size the last one's end rounded up to the
    struct's alignment. A member the source reading missed (a macro, an unusual declaration) shows as a gap."""
    end = 0
    for f in sorted(layout.fields, key=lambda f: f.offset):
        expected = _align_up(end, max(f.align, 1))
        if f.offset != expected:
            raise LayoutUnknown(
                f"cannot tell the layout of {layout.type}: bytes {end}..{f.offset - 1} before member {f.name} belong "
                "to no member gpurace read from the source (a member declared in a way it cannot read?)"
            )
        end = f.offset + f.size
    if layout.fields and _align_up(end, max(layout.align, 1)) != layout.size:
        raise LayoutUnknown(
            f"cannot tell the layout of {layout.type}: bytes {end}..{layout.size - 1} belong to no member gpurace read "
            "from the source (a member declared in a way it cannot read?)"
        )


def _read_answers(ptx: str) -> dict[int, tuple[str, int, int, int]]:
    """The probe kernels' template arguments, by question index, from the PTX's `.entry` names."""
    answers = {}
    for mangled in _ENTRY.findall(ptx):
        name = demangle_signature(mangled).name
        if not name.startswith(PROBE + "<"):
            continue
        index, type_, *numbers = split_top_level(name[len(PROBE) + 1 : name.rindex(">")])
        answers[_number(index)] = (normalize_type(type_), *(_number(n) for n in numbers))
    return answers


def _number(text: str) -> int:
    """A template argument as the demangler writes it: `8ull`, `0`, `(unsigned long long)8`."""
    digits = re.findall(r"\d+", text)
    return int(digits[-1]) if digits else 0


def _nameable(name: str) -> bool:
    """Whether C++ code can name `name` as the demangler spells it (not `(anonymous namespace)::p`)."""
    return "(" not in name and "{" not in name


def _check_nameable(type_name: str, what: str) -> None:
    if not _nameable(type_name):
        raise LayoutUnknown(f"cannot tell {what}: the type cannot be named outside its file's anonymous namespace")


def _first_errors(log: str, count: int = 2) -> str:
    """The first compiler errors of a log, one line each."""
    errors = [line.strip() for line in log.splitlines() if "error" in line.lower() and "could not compile" not in line]
    return "; ".join(errors[:count]) or log.strip().splitlines()[-1]


def _align_up(n: int, align: int) -> int:
    return -(-n // align) * align
