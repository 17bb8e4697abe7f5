"""The module IR: what the PTX parser produces and every later stage reads.

The IR keeps PTX's own vocabulary (opcodes, modifiers, state spaces) rather than
lowering to a smaller instruction set, because the detectors need exactly what
PTX says about memory: state space, `.volatile`, memory semantics and scope. It
is deliberately plain data (frozen dataclasses and tuples) so the simulator can
pre-decode it once per launch and the tests can compare it structurally.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from gpurace.frontend.compile import CompileOptions

# --------------------------------------------------------------------------
# Source locations
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceLoc:
    """A `.loc` position, with the chain of call sites it was inlined into.

    `inlined_at` is the location of the call that was inlined (itself possibly
    inlined further); `function` is the name of the inlined function the
    position belongs to (`function_name` in `.loc`), when PTX gives it.
    """

    file: str
    line: int
    column: int = 0
    inlined_at: SourceLoc | None = None
    function: str | None = None

    def chain(self) -> tuple[SourceLoc, ...]:
        """This location followed by every call site it was inlined at."""
        out: list[SourceLoc] = []
        loc: SourceLoc | None = self
        while loc is not None:
            out.append(loc)
            loc = loc.inlined_at
        return tuple(out)


# --------------------------------------------------------------------------
# Operands
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Reg:
    """A virtual register such as `%r5`, `%rd2`, `%p1`, `%f3`."""

    name: str


@dataclass(frozen=True)
class SpecialReg:
    """A special register: `%tid.x` is SpecialReg("tid", "x"); `%laneid` has no component."""

    name: str
    component: str | None = None


@dataclass(frozen=True)
class Imm:
    """An immediate. `kind` is "int", "f32" (`0f...`) or "f64" (`0d...` or a decimal float).

    Float immediates written in hex keep their exact bit pattern in `bits`.
    """

    value: int | float
    kind: str = "int"
    bits: int | None = None


@dataclass(frozen=True)
class Sym:
    """A symbol used as a value: a variable's address, a label, a function, a `.param` name."""

    name: str


@dataclass(frozen=True)
class Addr:
    """A memory operand `[base+offset]`; base is a register, a symbol, or None for `[imm]`."""

    base: Reg | Sym | None
    offset: int = 0


@dataclass(frozen=True)
class Vec:
    """A vector operand `{%r1, %r2, ...}`; elements may be `Sink` in destinations."""

    elems: tuple[Operand, ...]


@dataclass(frozen=True)
class PredPair:
    """The two destinations of `setp ... %p1|%p2, ...` (second is the complement)."""

    first: Reg
    second: Reg


@dataclass(frozen=True)
class Sink:
    """The `_` placeholder destination."""


@dataclass(frozen=True)
class Negated:
    """A negated predicate source operand, `!%p2`, as in `setp.lt.and.s32 %p1, %r1, %r2, !%p2`.

    Instruction guards (`@!%p1`) are not operands; they live in Instruction.guard.
    """

    reg: Reg


@dataclass(frozen=True)
class ParamList:
    """A parenthesised operand list in `call`: `(retval0)` or `(param0, param1)`."""

    items: tuple[Operand, ...]


Operand = Union[Reg, SpecialReg, Imm, Sym, Addr, Vec, PredPair, Sink, Negated, ParamList]


# --------------------------------------------------------------------------
# Instructions
# --------------------------------------------------------------------------

STATE_SPACES = frozenset({"global", "shared", "local", "const", "param", "generic"})
SCOPES = frozenset({"cta", "cluster", "gpu", "sys"})
SEMANTICS = frozenset({"relaxed", "acquire", "release", "acq_rel", "sc", "weak", "volatile", "mmio"})
TYPES = frozenset(
    {
        "pred", "b8", "b16", "b32", "b64", "b128",
        "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
        "f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32",
    }
)


@dataclass(frozen=True)
class Guard:
    """An instruction predicate: `@%p1` (negated False) or `@!%p1` (negated True)."""

    reg: Reg
    negated: bool = False


@dataclass(frozen=True)
class Instruction:
    """One PTX instruction.

    `opcode` is the first dotted component (`ld`, `atom`, `bar`, `setp`, ...);
    `modifiers` are the remaining components in source order, without dots
    (`ld.global.v2.u32` gives ("global", "v2", "u32")). `operands` are in
    source order, destinations first. `ptx_line` is the 1-based line in the
    PTX text; `loc` is the most recent `.loc` before the instruction.
    """

    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Guard | None = None
    loc: SourceLoc | None = None
    ptx_line: int = 0
    text: str = ""

    @property
    def types(self) -> tuple[str, ...]:
        """The type modifiers, in order (`cvt.rn.f32.s32` gives ("f32", "s32"))."""
        return tuple(m for m in self.modifiers if m in TYPES)

    @property
    def space(self) -> str | None:
        """The state space modifier, if any; `.shared::cta` (the executing block's shared memory) is `shared`."""
        for m in self.modifiers:
            if m in STATE_SPACES:
                return m
            if m == "shared::cta":
                return "shared"
        return None

    @property
    def scope(self) -> str | None:
        """The scope modifier, if any (`cta`, `cluster`, `gpu`, `sys`)."""
        for m in self.modifiers:
            if m in SCOPES:
                return m
        return None

    @property
    def semantics(self) -> str | None:
        """The memory-semantics modifier, if any (`relaxed`, `acquire`, `volatile`, ...)."""
        for m in self.modifiers:
            if m in SEMANTICS:
                return m
        return None

    def has(self, modifier: str) -> bool:
        return modifier in self.modifiers

    def where(self) -> str:
        """`file:line` of the source position, or the PTX line when there is none (for messages).

        Written as reports write positions: the user's frame of an inlining
        chain, the path relative to the current directory when below it
        (`debuginfo.user_frame`, `debuginfo.display_path`).
        """
        if self.loc is not None:
            from gpurace.frontend.ptx.debuginfo import display_path, user_frame  # debuginfo imports this module

            lead = user_frame(self.loc)
            return f"{display_path(lead.file)}:{lead.line}"
        return f"PTX line {self.ptx_line}"


# --------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class AddressOf:
    """An initializer element that is the address of a symbol, plus a byte offset (`{sym+8}`, `generic(sym)`)."""

    symbol: str
    offset: int = 0
    generic: bool = False


Initializer = tuple[Union[int, float, AddressOf], ...]


@dataclass(frozen=True)
class Variable:
    """A `.global`/`.shared`/`.const`/`.local` variable (module scope or inside a function).

    `dims` are the array dimensions as written (empty for a scalar; `None` for
    an unsized dimension as in `.extern .shared .b8 smem[]`). `init` is the
    flattened initializer in element order, or None. `linkage` is one of
    "visible", "weak", "extern", "common" or None. `managed`: declared
    `.attribute(.managed)`, a `__managed__` variable, which host code reaches too.
    """

    name: str
    space: str
    type: str
    dims: tuple[int | None, ...] = ()
    align: int | None = None
    init: Initializer | None = None
    linkage: str | None = None
    ptx_line: int = 0
    managed: bool = False

    @property
    def elem_size(self) -> int:
        return type_size(self.type)

    @property
    def count(self) -> int | None:
        """Number of elements; None for an unsized (extern) array."""
        n = 1
        for d in self.dims:
            if d is None:
                return None
            n *= d
        return n

    @property
    def size(self) -> int:
        """Size in bytes (0 for an unsized extern array)."""
        c = self.count
        return 0 if c is None else c * self.elem_size


@dataclass(frozen=True)
class Param:
    """A `.param` of an entry or function (or a `.reg` parameter of a `.func`).

    `ptx_type` is the PTX type (`u64`, `b8` for byte arrays); `dims` as for
    Variable; `ptr_space`/`ptr_align` come from `.ptr.global.align N` when present.
    """

    name: str
    ptx_type: str
    dims: tuple[int, ...] = ()
    align: int | None = None
    space: str = "param"
    ptr_space: str | None = None
    ptr_align: int | None = None

    @property
    def size(self) -> int:
        n = type_size(self.ptx_type)
        for d in self.dims:
            n *= d
        return n


@dataclass(frozen=True)
class RegDecl:
    """A `.reg` declaration: `.reg .b32 %r<36>` is RegDecl("b32", "%r", 36); a single register has count None.

    `ptx_line` is for messages only: two declarations that differ only in it are equal.
    """

    type: str
    name: str
    count: int | None = None
    ptx_line: int = field(default=0, compare=False)

    def names(self) -> tuple[str, ...]:
        if self.count is None:
            return (self.name,)
        return tuple(f"{self.name}{i}" for i in range(self.count))


@dataclass
class Function:
    """An `.entry` (kernel) or `.func` (device function).

    `labels` maps each label to the index of the instruction that follows it
    in `body` (== len(body) for a trailing label). `variables` holds
    function-scope `.shared`/`.local`/`.global`/`.const` declarations (nvcc
    puts demoted `__shared__` variables here). `pragmas` keeps `.pragma` strings.
    `ptx_line` is the line of the header and `end_line` that of the `}` closing
    the body (0 for a declaration). `target_lists` maps the label of each
    `.branchtargets` or `.calltargets` list to the labels or functions it
    names, in order (`brx.idx` indexes into the former).
    """

    name: str
    is_entry: bool
    params: list[Param] = field(default_factory=list)
    returns: list[Param] = field(default_factory=list)
    body: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    regs: list[RegDecl] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    linkage: str | None = None
    noreturn: bool = False
    is_declaration: bool = False
    directives: dict[str, tuple[int, ...]] = field(default_factory=dict)
    pragmas: list[str] = field(default_factory=list)
    target_lists: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ptx_line: int = 0
    end_line: int = 0
    loc: SourceLoc | None = None


@dataclass
class Module:
    """A whole PTX module."""

    version: str = ""
    target: tuple[str, ...] = ()
    address_size: int = 64
    variables: list[Variable] = field(default_factory=list)
    functions: dict[str, Function] = field(default_factory=dict)
    files: dict[int, str] = field(default_factory=dict)
    source_path: str | None = None
    compile_options: CompileOptions | None = None
    """How `frontend.load` compiled the source (None for modules made otherwise), for the type probes."""
    param_names: dict[str, tuple[str | None, ...]] = field(default_factory=dict)
    """Source names of kernel parameters by kernel, where the front end knows them and the source cannot be read
    for them (a Numba kernel's PTX parameters: `x`, `x.shape[0]`, ...)."""
    programs: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """Kernels flattened for the simulator, by mangled name (`sim.program.build_program`): a program launches a
    kernel hundreds of times, and a module is not changed once it is loaded (`dataclasses.replace` starts afresh)."""

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions.values() if f.is_entry and not f.is_declaration]


_TYPE_SIZES = {
    "pred": 1, "b8": 1, "u8": 1, "s8": 1,
    "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8,
    "b128": 16,
}


def type_size(ptx_type: str) -> int:
    """Size in bytes of a PTX fundamental type (`u32` -> 4)."""
    return _TYPE_SIZES[ptx_type]
