"""Declarations: variables with their initializers, parameters, registers.

These appear both at module scope and inside function bodies (nvcc puts
demoted `__shared__` arrays, `.local` stack depots and the `.param` slots of
call sequences there), so they are parsed by the same functions in both places.
"""

from __future__ import annotations

from gpurace.frontend.ptx.cursor import Cursor, describe, hex_float, int_value
from gpurace.frontend.ptx.ir import (
    TYPES,
    AddressOf,
    Initializer,
    Param,
    RegDecl,
    Variable,
)
from gpurace.frontend.ptx.lexer import Token
from gpurace.frontend.ptx.vocabulary import OPAQUE_TYPES
from gpurace.limits import MAX_REGISTERS_PER_DECLARATION

_VECTORS = {".v2": 2, ".v4": 4, ".v8": 8}
_POINTER_SPACES = frozenset({".global", ".shared", ".const", ".local"})
_FLOAT_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32"})


def parse_variables(cur: Cursor, linkage: str | None) -> list[Variable]:
    """`.global .align 4 .u32 a = 1, b[2];` and the like, from the state space to the `;`.

    A vector type (`.v4 .f32 x`) becomes one more, innermost dimension: the
    layout in memory is the same, and nothing else in PTX tells them apart.
    """
    space_tok = cur.take()
    space = space_tok[1][1:]
    ptx_line = cur.line(space_tok)
    align: int | None = None
    vector: int | None = None
    ptx_type: str | None = None
    managed = False
    while cur.peek()[0] == "dir":
        tok = cur.take()
        word = tok[1]
        if word == ".align":
            align = _alignment(cur)
        elif word in _VECTORS:
            vector = _VECTORS[word]
        elif word[1:] in TYPES:
            ptx_type = word[1:]
        elif word == ".attribute":
            managed = managed or ".managed" in cur.skip_parenthesised()
        elif word in OPAQUE_TYPES:
            raise cur.error(f"{word} variables (the legacy texture/surface API) are not supported", tok)
        else:
            raise cur.error(f"unexpected {word} in a .{space} declaration", tok)
    if ptx_type is None:
        raise cur.error(f"missing type in a .{space} declaration")
    variables: list[Variable] = []
    while True:
        name_tok = cur.expect_kind("word", "a variable name")
        name = name_tok[1]
        dims = _dims(cur, allow_unsized=True)
        if vector is not None:
            dims += (vector,)
        init = parse_initializer(cur) if cur.accept("=") else None
        if init is not None:
            dims = _fit_initializer(cur, name_tok, dims, len(init))
            _check_initial_values(cur, name_tok, ptx_type, init)
        variables.append(Variable(name, space, ptx_type, dims, align, init, linkage, ptx_line, managed))
        if not cur.accept(","):
            cur.expect(";", "';' after a declaration")
            return variables


def parse_param(cur: Cursor) -> Param:
    """One `.param` (or `.reg`) entry of a parameter list, e.g. `.param .u64 .ptr .global .align 4 p`."""
    space = cur.take()[1][1:]
    align = ptr_space = ptr_align = None
    ptx_type: str | None = None
    pointer = False
    vector: int | None = None
    while cur.peek()[0] == "dir":
        tok = cur.take()
        word = tok[1]
        if word == ".align":
            value = _alignment(cur)
            if pointer:
                ptr_align = value
            else:
                align = value
        elif word == ".ptr":
            pointer = True
        elif pointer and word in _POINTER_SPACES:
            ptr_space = word[1:]
        elif word in _VECTORS:
            vector = _VECTORS[word]
        elif word[1:] in TYPES:
            ptx_type = word[1:]
        else:
            raise cur.error(f"unexpected {word} in a parameter declaration", tok)
    if ptx_type is None:
        raise cur.error("missing type in a parameter declaration")
    name = cur.expect_kind("word", "a parameter name")[1]
    dims = _dims(cur, allow_unsized=False)
    if vector is not None:
        dims += (vector,)
    return Param(name, ptx_type, dims, align, space, ptr_space, ptr_align)  # type: ignore[arg-type]


def parse_param_list(cur: Cursor) -> list[Param]:
    """`( .param ... , .param ... )`; the cursor is on the `(`."""
    cur.expect("(")
    params: list[Param] = []
    if cur.accept(")"):
        return params
    while True:
        tok = cur.peek()
        if tok[1] not in (".param", ".reg"):
            raise cur.error(f"expected .param or .reg in a parameter list, found {describe(tok)}")
        params.append(parse_param(cur))
        if cur.accept(")"):
            return params
        cur.expect(",", "',' or ')' in a parameter list")


def parse_reg_decl(cur: Cursor) -> list[RegDecl]:
    """`.reg .b32 %r<36>;` or `.reg .pred p, q;`, from `.reg` to the `;`."""
    line = cur.line(cur.take())
    ptx_type: str | None = None
    while cur.peek()[0] == "dir":
        tok = cur.take()
        if tok[1][1:] in TYPES:
            ptx_type = tok[1][1:]
        elif tok[1] in _VECTORS:
            raise cur.error(f"vector registers ({tok[1]}) are not supported", tok)
        elif tok[1] == ".align":
            _alignment(cur)
        else:
            raise cur.error(f"unexpected {tok[1]} in a .reg declaration", tok)
    if ptx_type is None:
        raise cur.error("missing type in a .reg declaration")
    decls: list[RegDecl] = []
    while True:
        name = cur.expect_kind("word", "a register name")[1]
        if cur.accept("<"):
            decls.append(RegDecl(ptx_type, name, _register_count(cur), line))
        else:
            decls.append(RegDecl(ptx_type, name, ptx_line=line))
        if not cur.accept(","):
            cur.expect(";", "';' after a .reg declaration")
            return decls


def _register_count(cur: Cursor) -> int:
    """The `N` of `%r<N>`, up to the `>`; bounded here, since the simulator gives every register its own storage."""
    tok = cur.peek()
    count = cur.integer("a register count")
    if count < 0:
        raise cur.error("negative register count", tok)
    if count > MAX_REGISTERS_PER_DECLARATION:
        raise cur.error(
            f"{count:,} registers in one declaration are more than gpurace supports "
            f"({MAX_REGISTERS_PER_DECLARATION:,}); no compiler declares that many",
            tok,
        )
    cur.expect(">")
    return count


def parse_initializer(cur: Cursor) -> Initializer:
    """A scalar or a (nested) brace list after `=`, flattened in element order."""
    if not cur.accept("{"):
        return (_init_element(cur),)
    out: list[int | float | AddressOf] = []
    depth = 1
    while True:
        if cur.accept("{"):
            depth += 1
            continue
        out.append(_init_element(cur))
        while True:
            if cur.accept("}"):
                depth -= 1
                if depth == 0:
                    return tuple(out)
                continue
            cur.expect(",", "',' or '}' in an initializer")
            break


def _init_element(cur: Cursor) -> int | float | AddressOf:
    negative = cur.accept("-")
    tok = cur.take()
    kind = tok[0]
    sign = -1 if negative else 1
    if kind == "int":
        return sign * int_value(tok, cur)
    if kind == "fhex":
        return sign * hex_float(tok[1])[0]
    if kind == "float":
        return sign * float(tok[1])
    if kind == "word" and not negative:
        if tok[1] == "generic" and cur.peek()[1] == "(":
            cur.take()
            symbol = cur.expect_kind("word", "a symbol in generic()")[1]
            offset = _offset(cur)
            cur.expect(")")
            return AddressOf(symbol, offset + _offset(cur), generic=True)
        return AddressOf(tok[1], _offset(cur))
    raise cur.error(f"expected an initializer value, found {describe(tok)}", tok)


def _offset(cur: Cursor) -> int:
    """An optional `+N`, `+-N` or `-N` after a symbol."""
    if cur.accept("+"):
        return cur.integer("an offset")
    if cur.accept("-"):
        return -cur.integer("an offset")
    return 0


def _fit_initializer(cur: Cursor, tok: Token, dims: tuple, values: int) -> tuple:
    """The dimensions of an array with an initializer of `values` elements, checked against it.

    An unsized first dimension (`x[] = {1, 2, 3}`) takes its size from the
    initializer; a sized array must have room for every value.
    """
    if any(d is None for d in dims[1:]):
        raise cur.error(f"only the first dimension of {tok[1]} can be left unsized", tok)
    inner = 1
    for d in dims[1:]:
        inner *= d
    if dims and dims[0] is None:
        dims = (-(-values // inner) if inner else 0, *dims[1:])
    count = inner * (dims[0] if dims else 1)
    if values > count:
        raise cur.error(f"the initializer of {tok[1]} has {values} values for {count} element(s)", tok)
    return dims


def _check_initial_values(cur: Cursor, tok: Token, ptx_type: str, init: Initializer) -> None:
    """Only a floating-point variable may be initialised with floating-point values."""
    if ptx_type in _FLOAT_TYPES:
        return
    bad = next((v for v in init if isinstance(v, float)), None)
    if bad is not None:
        raise cur.error(f"the initializer of {tok[1]} has the value {bad}, which is not an integer for .{ptx_type}", tok)


def _dims(cur: Cursor, allow_unsized: bool) -> tuple:
    dims: list[int | None] = []
    while cur.accept("["):
        if allow_unsized and cur.accept("]"):
            dims.append(None)
            continue
        size = cur.integer("an array size")
        if size < 0:
            raise cur.error("negative array size")
        cur.expect("]")
        dims.append(size)
    return tuple(dims)


def _alignment(cur: Cursor) -> int:
    """The `N` of `.align N`: PTX requires a power of two."""
    tok = cur.peek()
    value = _positive(cur, "an alignment")
    if value & (value - 1):
        raise cur.error(f"alignment {value} is not a power of two", tok)
    return value


def _positive(cur: Cursor, what: str) -> int:
    tok = cur.peek()
    value = cur.integer(what)
    if value <= 0:
        raise cur.error(f"{what} must be positive", tok)
    return value
