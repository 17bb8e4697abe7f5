"""Mutations of real PTX for the simulator fuzz tests: edits of whole instructions, of their parts, and of declarations.

Byte-level mutations (what `tests/frontend/test_parser_fuzz.py` does) rarely
get past the parser; these keep the text well-formed PTX most of the time, so
the mutated kernel reaches the simulator and the detectors. A seed is cut into
lines; the lines of function bodies are classified, and each mutation edits
one of them. Every choice is drawn from Hypothesis strategies, so a failure
shrinks to a short list of readable edits.

The seeds are nvcc's PTX for small kernels of the corpus (`ptx/*.ptx`; their
first line names the source); `ptx/sampler.cu` is compiled for sm_80 to add
the instructions the corpus lacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

SEED_DIR = Path(__file__).parent / "ptx"

_INSTRUCTION = re.compile(
    r"^(?P<indent>\s*)(?P<guard>@!?[%\w$]+\s+)?(?P<opcode>[A-Za-z_][\w$]*)(?P<mods>(?:\.[\w$:]+)*)"
    r"(?P<space>\s*)(?P<operands>[^;]*);(?P<tail>.*)$"
)
_DECLARED_RANGE = re.compile(r"\.reg\s+\.(\w+)\s+(%?[\w$]+)<(\d+)>")
_LABEL = re.compile(r"^\s*([\w$]+):")
_SYMBOL = re.compile(r"\b([A-Za-z_$][\w$]*)(?=\s*[\[;,)])")
_TYPED_DECLARATION = re.compile(
    r"^\s*(?:\.visible\s+|\.extern\s+)?\.(reg|param|shared|global|const|local)\b.*\.(\w+)\s"
)  # group 1: the state space, group 2: the (last) type
_NUMBER_IN_DECLARATION = re.compile(r"(?<=[<\[])\d+(?=[>\]])|(?<=\.align )\d+")

OPCODES = (
    "add", "sub", "mul", "mad", "div", "rem", "min", "max", "abs", "neg", "and", "or", "xor", "not", "shl", "shr",
    "mov", "cvt", "cvta", "setp", "selp", "set", "ld", "st", "ldu", "atom", "red", "bar", "barrier", "membar",
    "fence", "bra", "ret", "exit", "call", "shfl", "vote", "match", "redux", "activemask", "prmt", "bfe", "bfi",
    "popc", "clz", "brev", "bfind", "shf", "lop3", "fma", "rcp", "sqrt", "ex2", "lg2", "isspacep", "cp",
    "nanosleep", "trap", "mul24", "sad", "dp4a", "addc", "testp", "copysign", "tex", "mma", "wmma", "alloca",
)
MODIFIERS = (
    "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64", "b128", "f16", "f16x2",
    "bf16", "bf16x2", "f32", "f64", "tf32", "pred", "u16x2", "s16x2",
    "global", "shared", "local", "const", "param", "shared::cta", "shared::cluster",
    "v2", "v4", "v8", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "weak", "mmio",
    "cta", "gpu", "sys", "gl", "cluster", "to", "wide", "lo", "hi", "rn", "rz", "rm", "rp", "rni", "sat", "ftz",
    "approx", "full", "cc", "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hs", "equ", "nan", "num",
    "add", "min", "max", "inc", "dec", "exch", "cas", "and", "or", "xor", "popc", "sync", "aligned", "warp",
    "arrive", "red", "up", "down", "bfly", "idx", "all", "any", "uni", "ballot", "async", "ca", "cg", "nc",
    "commit_group", "wait_group", "wait_all", "clamp", "wrap", "l", "r", "b4e", "ecl", "shiftamt",
)
IMMEDIATES = (
    "0", "1", "-1", "15", "16", "31", "32", "33", "63", "64", "65", "255", "1024", "4096", "0x7fffffff",
    "0x80000000", "0xffffffff", "4294967296", "0x7fffffffffffffff", "0xffffffffffffffff",
    "18446744073709551616", "99999999999999999999999999", "-9223372036854775808", "0f7F800000", "0fFFC00000",
    "0f00000001", "0d7FF0000000000000", "0d8000000000000000", "1.5", "-0f80000000",
)
SPECIAL_REGISTERS = (
    "%tid.x", "%tid.z", "%ntid.y", "%ctaid.x", "%nctaid.z", "%laneid", "%warpid", "%nwarpid", "%smid",
    "%clock", "%clock64", "%globaltimer", "%lanemask_lt", "%lanemask_ge", "%envreg3", "%pm0",
    "%dynamic_smem_size", "%cluster_ctarank", "%gridid", "%clusterid.x",
)
OTHER_OPERANDS = (
    "_", "WARP_SZ", "%undeclared7", "[0]", "[0x7fffffffffffffff]", "[-8]", "{}", "(_)", "!%p1", "%p1|%p2",
    "%r1|%p1", "[%p1]", "[%f1]", "[%rd1+-4]", "[%rd1+4096]", "[%r1+0x7fffffffffffffff]",
)
DECLARATION_NUMBERS = (0, 1, 2, 3, 7, 16, 31, 4096, 65536, 65537, 1 << 20, 1 << 31, 1 << 40, 1 << 64)
DECLARED_TYPES = (
    "pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s64", "f16", "f16x2", "bf16", "f32", "f64",
)
INSTRUCTION_EDITS = (
    "opcode", "modifier", "add-modifier", "drop-modifier", "operand", "add-operand", "drop-operand", "guard", "vector",
)
GUARDS = ("", "@%p1 ", "@!%p1 ", "@%r1 ", "@%p0 ", "@%rd1 ", "@%nope ", "@%tid.x ")


@dataclass(frozen=True)
class Seed:
    """One seed's lines, and what mutations may pick from it."""

    name: str
    lines: tuple[str, ...]
    body: tuple[int, ...]  # lines inside function bodies
    instructions: tuple[int, ...]  # single-line instructions among them
    declarations: tuple[int, ...]  # declaration lines with a number to change (`<N>`, `[N]`, `.align N`, `= N`)
    typed: tuple[int, ...]  # declarations with a type and a state space (`.reg`, `.param`, `.shared`, ...)
    registers: tuple[str, ...]  # registers the seed declares, a few of each range
    labels: tuple[str, ...]
    symbols: tuple[str, ...]  # parameters, variables and functions

    def __repr__(self) -> str:  # a failing example names its seed, not every line of it
        return f"<seed {self.name}>"


def load_seed(path: Path) -> Seed:
    lines = tuple(_join_statements(path.read_text().splitlines()))
    body = _body_lines(lines)
    return Seed(
        name=path.stem,
        lines=lines,
        body=body,
        instructions=tuple(i for i in body if _is_instruction(lines[i])),
        declarations=tuple(
            i for i, line in enumerate(lines)
            if line.lstrip().startswith(".") and (_NUMBER_IN_DECLARATION.search(line) or "=" in line)
        ),
        typed=tuple(i for i, line in enumerate(lines) if _TYPED_DECLARATION.match(line)),
        registers=_declared_registers(lines),
        labels=tuple(m.group(1) for i in body if (m := _LABEL.match(lines[i]))),
        symbols=_declared_symbols(lines),
    )  # fmt: skip


def _body_lines(lines: tuple[str, ...]) -> tuple[int, ...]:
    """The lines inside function bodies (nested blocks included), but for the braces themselves."""
    body, depth = [], 0
    for i, line in enumerate(lines):
        code = line.split("//")[0]
        if depth > 0 and code.strip() not in ("{", "}", ""):
            body.append(i)
        depth += code.count("{") - code.count("}")
    return tuple(body)


def _declared_registers(lines: tuple[str, ...]) -> tuple[str, ...]:
    """A few registers of each `%r<N>` range: the first ones, the middle one and the last one."""
    registers: list[str] = []
    for _type, prefix, count in _DECLARED_RANGE.findall("\n".join(lines)):
        n = int(count)
        registers += sorted({f"{prefix}{k}" for k in (0, 1, 2, n // 2, n - 1) if 0 <= k < n})
    return tuple(registers)


def _declared_symbols(lines: tuple[str, ...]) -> tuple[str, ...]:
    """Names that declarations and function headers introduce: parameters, variables, functions."""
    starts = (".param", ".shared", ".global", ".const", ".local", ".visible", ".func", ".entry")
    declaring = (line.split("//")[0] for line in lines if line.lstrip().startswith(starts))
    return tuple(sorted({s for code in declaring for s in _SYMBOL.findall(code) if not s.startswith("%")}))


def _join_statements(lines: list[str]) -> list[str]:
    """The lines, with an instruction that nvcc spreads over several (a `call`) joined into one, so edits reach it."""
    out: list[str] = []
    pending = ""
    for line in lines:
        code = line.split("//")[0].strip()
        if pending:
            pending += " " + code
            if code.endswith(";"):
                out.append(pending)
                pending = ""
        elif code and code[0] not in ".{}" and not code.endswith((";", ":", "{", "}")) and not _LABEL.match(code):
            pending = line.rstrip()
        else:
            out.append(line)
    return out + ([pending] if pending else [])


def _is_instruction(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and stripped[0] not in ".{}/" and not _LABEL.match(line) and _INSTRUCTION.match(line) is not None


def seeds() -> list[Seed]:
    return [load_seed(p) for p in sorted(SEED_DIR.glob("*.ptx"))]


# --------------------------------------------------------------------------- one instruction, taken apart


@dataclass
class Parts:
    """An instruction line as guard, opcode, modifiers and operands, to edit and put back together."""

    indent: str
    guard: str
    opcode: str
    modifiers: list[str]
    operands: list[str]

    @staticmethod
    def of(line: str) -> Parts:
        m = _INSTRUCTION.match(line)
        assert m is not None, line
        mods = [x for x in m.group("mods").split(".") if x]
        return Parts(m.group("indent"), m.group("guard") or "", m.group("opcode"), mods, split_operands(m.group("operands")))

    def line(self) -> str:
        head = ".".join([self.opcode, *self.modifiers])
        return f"{self.indent}{self.guard}{head} {', '.join(self.operands)};"


def split_operands(text: str) -> list[str]:
    """Operands separated by top-level commas (not those inside `[]`, `{}` or `()`)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "[{("
        depth -= c in "]})"
        if c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    return out + [last] if last or out else out


# --------------------------------------------------------------------------- mutations


def operand_choices(seed: Seed) -> st.SearchStrategy[str]:
    registers = st.sampled_from(seed.registers) if seed.registers else st.just("%r1")
    named = st.sampled_from(seed.labels + seed.symbols) if seed.labels or seed.symbols else st.just("$L__BB0_1")
    vector = st.lists(st.one_of(registers, st.just("_")), min_size=1, max_size=9).map(lambda rs: "{" + ", ".join(rs) + "}")
    offsets = st.sampled_from(("", "+4", "+-4", "+8", "+4096", "+0x7fffffffffffffff"))
    address = st.tuples(st.one_of(registers, named), offsets).map(lambda t: f"[{t[0]}{t[1]}]")
    return st.one_of(
        registers,
        st.sampled_from(IMMEDIATES),
        st.sampled_from(SPECIAL_REGISTERS),
        named,
        address,
        vector,
        st.sampled_from(OTHER_OPERANDS),
    )


@st.composite
def edit_instruction(draw, seed: Seed) -> tuple:
    """One edit of one instruction: its opcode, a modifier, an operand, its guard or its vector arity."""
    at = draw(st.sampled_from(seed.instructions))
    kind = draw(st.sampled_from(INSTRUCTION_EDITS))
    if kind == "opcode":
        return (kind, at, draw(st.sampled_from(OPCODES)))
    if kind in ("modifier", "add-modifier"):
        return (kind, at, draw(st.integers(0, 5)), draw(st.sampled_from(MODIFIERS)))
    if kind in ("drop-modifier", "drop-operand"):
        return (kind, at, draw(st.integers(0, 5)))
    if kind in ("operand", "add-operand"):
        return (kind, at, draw(st.integers(0, 5)), draw(operand_choices(seed)))
    if kind == "guard":
        return (kind, at, draw(st.sampled_from(GUARDS)))
    return (kind, at, draw(st.sampled_from(("", "v2", "v4", "v8"))))


@st.composite
def random_instruction(draw, seed: Seed) -> str:
    """An instruction made of parts drawn at random: an opcode, modifiers and operands from the pools."""
    guard = draw(st.sampled_from(GUARDS))
    head = ".".join([draw(st.sampled_from(OPCODES)), *draw(st.lists(st.sampled_from(MODIFIERS), max_size=4))])
    operands = draw(st.lists(operand_choices(seed), max_size=5))
    return f"\t{guard}{head} {', '.join(operands)};"


@st.composite
def edit_structure(draw, seed: Seed) -> tuple:
    """Delete, duplicate, swap or move body lines, retarget a branch, or insert a random instruction."""
    kind = draw(st.sampled_from(("delete", "duplicate", "swap", "move", "target", "insert")))
    if kind in ("delete", "duplicate"):
        return (kind, draw(st.sampled_from(seed.body)))
    if kind == "insert":
        return (kind, draw(st.sampled_from(seed.body)), draw(random_instruction(seed)))
    if kind == "target":
        labels = seed.labels + ("$L__nowhere",)
        return (kind, draw(st.sampled_from(seed.instructions)), draw(st.sampled_from(labels)))
    return (kind, draw(st.sampled_from(seed.body)), draw(st.sampled_from(seed.body)))


@st.composite
def edit_declaration(draw, seed: Seed) -> tuple:
    """Change a number of a declaration (a register count, an array size, an alignment, an initial value),
    its type or its state space."""
    if draw(st.booleans()):
        at = draw(st.sampled_from(seed.typed))
        if draw(st.booleans()):
            return ("retype", at, draw(st.sampled_from(DECLARED_TYPES)))
        return ("respace", at, draw(st.sampled_from(("reg", "param", "shared", "global", "const", "local"))))
    at = draw(st.sampled_from(seed.declarations))
    if "=" in seed.lines[at] and draw(st.booleans()):
        return ("initializer", at, draw(st.integers(0, 20)), draw(st.sampled_from(IMMEDIATES)))
    return ("declaration", at, draw(st.integers(0, 3)), draw(st.sampled_from(DECLARATION_NUMBERS)))


def apply(seed: Seed, edits: list[tuple]) -> str:
    """The seed's text with `edits` applied in order.

    Line numbers in edits refer to the seed's lines and stay valid: an edit
    replaces a line (by None to delete it, by several lines to insert), it
    never renumbers them.
    """
    lines: list[str | None] = list(seed.lines)
    for edit in edits:
        _apply_one(lines, edit)
    return "\n".join(line for line in lines if line is not None) + "\n"


def _apply_one(lines: list, edit: tuple) -> None:
    kind = edit[0]
    if kind == "nothing":
        return
    at = edit[1]
    if lines[at] is None:
        return
    if kind == "delete":
        lines[at] = None
    elif kind == "duplicate":
        lines[at] = lines[at] + "\n" + lines[at]
    elif kind == "swap":
        other = edit[2]
        if lines[other] is not None:
            lines[at], lines[other] = lines[other], lines[at]
    elif kind == "move":
        other = edit[2]
        if lines[other] is not None:
            lines[other] = lines[at] + "\n" + lines[other]
            lines[at] = None
    elif kind == "insert":
        lines[at] = edit[2] + "\n" + lines[at]
    elif kind == "declaration":
        lines[at] = _renumber(lines[at], edit[2], edit[3])
    elif kind == "initializer":
        lines[at] = _change_initial_value(lines[at], edit[2], edit[3])
    elif kind == "retype":
        m = _TYPED_DECLARATION.match(lines[at])
        if m:
            lines[at] = lines[at][: m.start(2)] + edit[2] + lines[at][m.end(2) :]
    elif kind == "respace":
        m = _TYPED_DECLARATION.match(lines[at])
        if m:
            lines[at] = lines[at][: m.start(1)] + edit[2] + lines[at][m.end(1) :]
    elif "\n" not in lines[at] and _INSTRUCTION.match(lines[at]):
        lines[at] = _edit_parts(Parts.of(lines[at]), edit).line()


def _renumber(line: str, which: int, value: int) -> str:
    numbers = list(_NUMBER_IN_DECLARATION.finditer(line))
    if not numbers:
        return line
    m = numbers[which % len(numbers)]
    return line[: m.start()] + str(value) + line[m.end() :]


def _change_initial_value(line: str, which: int, value: str) -> str:
    head, _, init = line.partition("=")
    numbers = list(re.finditer(r"-?\b\d+\b", init))
    if not numbers:
        return line
    m = numbers[which % len(numbers)]
    return f"{head}={init[: m.start()]}{value}{init[m.end() :]}"


def _edit_parts(p: Parts, edit: tuple) -> Parts:
    kind = edit[0]
    if kind == "opcode":
        p.opcode = edit[2]
    elif kind == "modifier" and p.modifiers:
        p.modifiers[edit[2] % len(p.modifiers)] = edit[3]
    elif kind in ("modifier", "add-modifier"):
        p.modifiers.insert(edit[2] % (len(p.modifiers) + 1), edit[3])
    elif kind == "drop-modifier" and p.modifiers:
        del p.modifiers[edit[2] % len(p.modifiers)]
    elif kind == "operand" and p.operands:
        p.operands[edit[2] % len(p.operands)] = edit[3]
    elif kind in ("operand", "add-operand"):
        p.operands.insert(edit[2] % (len(p.operands) + 1), edit[3])
    elif kind == "drop-operand" and p.operands:
        del p.operands[edit[2] % len(p.operands)]
    elif kind == "guard":
        p.guard = edit[2]
    elif kind == "vector":
        p.modifiers = [m for m in p.modifiers if m not in ("v2", "v4", "v8")]
        if edit[2]:
            p.modifiers.insert(min(1, len(p.modifiers)), edit[2])
    elif kind == "target" and p.operands:
        p.operands[-1] = edit[2]
    return p
