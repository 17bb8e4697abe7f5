"""PTX text to the module IR (`parse_ptx`).

One pass over the token list builds the Module: module directives, global
variables, and functions with their bodies. Nested `{ }` blocks in a body
(call sequences, inline assembly) are scopes in PTX; the IR has a flat body,
so their instructions are appended in order and their declarations go to the
function. Labels that nested scopes declare more than once (inline assembly
in an unrolled loop) are renamed apart so `Function.labels` stays a mapping.

Anything unsupported or malformed raises PtxSyntaxError naming the PTX line.
"""

from __future__ import annotations

from dataclasses import replace

from gpurace.frontend.ptx.cursor import Cursor, describe
from gpurace.frontend.ptx.debuginfo import (
    DebugTables,
    LocReader,
    read_debug_tables,
    read_file_directive,
    read_section,
)
from gpurace.frontend.ptx.declarations import (
    parse_param_list,
    parse_reg_decl,
    parse_variables,
)
from gpurace.frontend.ptx.instructions import InstructionParser
from gpurace.frontend.ptx.ir import Function, Module, RegDecl, SourceLoc, Sym, Variable
from gpurace.frontend.ptx.lexer import Source, Token
from gpurace.frontend.ptx.vocabulary import (
    KNOWN_DIRECTIVES,
    LINKAGE_DIRECTIVES,
    OPAQUE_TYPES,
    PERFORMANCE_DIRECTIVES,
    STATE_SPACE_DIRECTIVES,
)

# Declarations after a label that are not code: `proto: .callprototype ...;`
# describes an indirect call's signature, `.calltargets`/`.branchtargets`
# list possible targets (kept in `Function.target_lists`, for `brx.idx`).
_LABELLED_DECLARATIONS = frozenset({".callprototype", ".calltargets", ".branchtargets"})

# Compilers nest a call sequence or an inline-assembly block in a block or two; each level costs the
# parser time in proportion to the depth, so a hostile file's nesting is bounded.
_MAX_BLOCK_DEPTH = 1024


def parse_ptx(text: str, path: str | None = None) -> Module:
    """Parse a whole PTX module; `path` only serves error messages."""
    cur = Cursor(Source(text, path))
    tables = read_debug_tables(cur)
    return _ModuleParser(cur, tables).parse()


class _ModuleParser:
    def __init__(self, cur: Cursor, tables: DebugTables):
        self.cur = cur
        self.tables = tables
        self.module = Module(files=dict(tables.files))

    def parse(self) -> Module:
        cur = self.cur
        module = self.module
        while True:
            tok = cur.peek()
            kind, word = tok[0], tok[1]
            if kind == "eof":
                return module
            if kind != "dir":
                raise cur.error(f"expected a directive at module scope, found {describe(tok)}", tok)
            if word == ".version":
                cur.take()
                version = cur.take()
                if version[0] not in ("float", "int"):
                    raise cur.error(f"expected a version number, found {describe(version)}", version)
                module.version = version[1]
            elif word == ".target":
                cur.take()
                targets = [cur.expect_kind("word", "a target name")[1]]
                while cur.accept(","):
                    targets.append(cur.expect_kind("word", "a target name")[1])
                module.target = tuple(targets)
            elif word == ".address_size":
                cur.take()
                size = cur.integer("an address size")
                if size not in (32, 64):
                    raise cur.error(f".address_size {size} is not 32 or 64", tok)
                module.address_size = size
            elif word == ".file":
                read_file_directive(cur, self.tables)
            elif word == ".section":
                read_section(cur, DebugTables())  # contents were read by read_debug_tables
            elif word == ".pragma":
                _read_pragma(cur)  # module-scope pragmas carry nothing the IR keeps
            elif word in LINKAGE_DIRECTIVES:
                cur.take()
                self._declaration(word[1:])
            else:
                self._declaration(None)

    def _declaration(self, linkage: str | None) -> None:
        cur = self.cur
        tok = cur.peek()
        word = tok[1]
        if word in (".entry", ".func"):
            self._add_function(_FunctionParser(cur, self.tables).parse(linkage), tok)
        elif word in STATE_SPACE_DIRECTIVES and word != ".param":
            self.module.variables.extend(parse_variables(cur, linkage))
        elif word in OPAQUE_TYPES:
            raise cur.error(f"{word} (the legacy texture/surface API) is not supported", tok)
        elif tok[0] == "dir":
            raise cur.error(_misplaced(word, "at module scope"), tok)
        else:
            raise cur.error(f"expected .entry, .func or a variable after linkage, found {describe(tok)}", tok)

    def _add_function(self, fn: Function, tok: Token) -> None:
        """A definition replaces an earlier declaration; two definitions of one name are an error."""
        functions = self.module.functions
        known = functions.get(fn.name)
        if known is None or (known.is_declaration and not fn.is_declaration):
            functions[fn.name] = fn
        elif not fn.is_declaration:
            raise self.cur.error(f"function {fn.name} is defined twice", tok)


class _FunctionParser:
    """One `.entry` or `.func`: header, performance directives, and body (if any)."""

    def __init__(self, cur: Cursor, tables: DebugTables):
        self.cur = cur
        self.tables = tables

    def parse(self, linkage: str | None) -> Function:
        cur = self.cur
        kw = cur.take()
        is_entry = kw[1] == ".entry"
        if cur.peek()[1] == ".attribute":
            cur.take()
            cur.skip_parenthesised()
        returns = []
        if cur.peek()[1] == "(":
            if is_entry:
                raise cur.error("a kernel (.entry) cannot return values")
            returns = parse_param_list(cur)
        name = cur.expect_kind("word", "a function name")[1]
        params = parse_param_list(cur) if cur.peek()[1] == "(" else []
        fn = Function(name, is_entry, params, returns, linkage=linkage, ptx_line=cur.line(kw))
        self._header_directives(fn)
        if cur.accept(";"):
            fn.is_declaration = True
        elif cur.peek()[1] == "{":
            _BodyParser(cur, self.tables, fn).parse()
        elif linkage == "extern" and cur.peek()[0] in ("dir", "eof"):
            fn.is_declaration = True  # ptxas accepts an extern prototype without ';'
        else:
            raise cur.error(f"expected '{{' or ';' after the header of {name}, found {describe(cur.peek())}")
        return fn

    def _header_directives(self, fn: Function) -> None:
        cur = self.cur
        while True:
            tok = cur.peek()
            word = tok[1]
            if word == ".noreturn":
                cur.take()
                fn.noreturn = True
            elif word == ".pragma":
                fn.pragmas.append(_read_pragma(cur))
            elif word in PERFORMANCE_DIRECTIVES and tok[0] == "dir":
                cur.take()
                count = PERFORMANCE_DIRECTIVES[word]
                values: list[int] = []
                if count != 0:
                    values.append(cur.integer(f"a value for {word}"))
                    while cur.accept(","):
                        values.append(cur.integer(f"a value for {word}"))
                if (count is None and len(values) > 3) or (count is not None and len(values) != count):
                    raise cur.error(f"wrong number of values for {word}", tok)
                fn.directives[word[1:]] = tuple(values)
            else:
                return


class _BodyParser:
    """A function body, nested blocks included, into `fn`."""

    def __init__(self, cur: Cursor, tables: DebugTables, fn: Function):
        self.cur = cur
        self.fn = fn
        self.locs = LocReader(tables)
        self.registers: set[str] = set()
        self.instructions = InstructionParser(cur, self.registers)
        self.reg_types: dict[tuple[str, bool], str] = {}
        self.params: dict[str, int] = {}
        # Scope bookkeeping: the path of block ids the parser is in, each
        # instruction's path, and each label's (name, path, index, token).
        self.path: tuple[int, ...] = (0,)
        self.scopes: list[tuple[int, ...]] = []
        self.label_defs: list[tuple[str, tuple[int, ...], int, Token]] = []
        self.target_defs: list[tuple[str, tuple[int, ...], tuple[str, ...]]] = []  # each target list's label, path, names

    def parse(self) -> None:
        cur = self.cur
        fn = self.fn
        body = fn.body
        scopes = self.scopes
        parse_instruction = self.instructions.parse
        cur.expect("{")
        loc: SourceLoc | None = None
        next_scope = 1
        added: list[list[str]] = [[]]  # bare register names each open block declared
        while True:
            tok = cur.peek()
            kind, word = tok[0], tok[1]
            if kind == "word":
                if cur.peek_at(1)[1] == ":":
                    self._label(tok)
                    continue
                body.append(parse_instruction(loc))
                scopes.append(self.path)
            elif kind == "dir":
                if word == ".loc":
                    loc = self.locs.read(cur)
                    if fn.loc is None:
                        fn.loc = loc
                elif word == ".reg":
                    added[-1].extend(self._registers(parse_reg_decl(cur), tok))
                elif word in STATE_SPACE_DIRECTIVES:
                    self._variables(parse_variables(cur, None))
                elif word in LINKAGE_DIRECTIVES and cur.peek_at(1)[1] in STATE_SPACE_DIRECTIVES:
                    cur.take()
                    self._variables(parse_variables(cur, word[1:]))
                elif word == ".pragma":
                    fn.pragmas.append(_read_pragma(cur))
                else:
                    raise cur.error(_misplaced(word, f"in the body of {fn.name}"), tok)
            elif word == "@" and kind == "punct":
                body.append(parse_instruction(loc))
                scopes.append(self.path)
            elif word == "{" and kind == "punct":
                if len(self.path) > _MAX_BLOCK_DEPTH:
                    raise cur.error(f"blocks nested more than {_MAX_BLOCK_DEPTH} deep in {fn.name}", tok)
                cur.take()
                self.path = (*self.path, next_scope)
                next_scope += 1
                added.append([])
            elif word == "}" and kind == "punct":
                cur.take()
                self.registers.difference_update(added.pop())
                if not added:
                    fn.end_line = cur.line(tok)
                    break
                self.path = self.path[:-1]
            elif kind == "eof":
                raise cur.error(f"the body of {fn.name} is not closed before the end of the file", tok)
            else:
                raise cur.error(f"expected an instruction, a label or a directive, found {describe(tok)}", tok)
        self._resolve_labels()

    def _label(self, tok: Token) -> None:
        cur = self.cur
        cur.take()
        cur.take()
        if cur.peek()[1] in _LABELLED_DECLARATIONS and cur.peek()[0] == "dir":
            if cur.take()[1] == ".callprototype":
                cur.skip_past(";")
                return
            names = [cur.expect_kind("word", "a label or function name")[1]]
            while cur.accept(","):
                names.append(cur.expect_kind("word", "a label or function name")[1])
            cur.expect(";")
            self.label_defs.append((tok[1], self.path, len(self.fn.body), tok))  # scoped as a label is
            self.target_defs.append((tok[1], self.path, tuple(names)))
            return
        self.label_defs.append((tok[1], self.path, len(self.fn.body), tok))

    def _registers(self, decls: list[RegDecl], tok: Token) -> list[str]:
        """Record `.reg` declarations once each; returns the bare (no `%`) names newly in scope."""
        new_bare: list[str] = []
        for decl in decls:
            key = (decl.name, decl.count is not None)
            known = self.reg_types.get(key)
            if known is None:
                self.reg_types[key] = decl.type
                self.fn.regs.append(decl)
            elif known != decl.type:
                raise self.cur.error(
                    f"register {decl.name} is declared as .{known} and as .{decl.type} in {self.fn.name}", tok
                )
            if decl.count is None and not decl.name.startswith("%") and decl.name not in self.registers:
                self.registers.add(decl.name)
                new_bare.append(decl.name)
        return new_bare

    def _variables(self, variables: list[Variable]) -> None:
        """Body declarations go to the function; a `.param` slot redeclared by a later call keeps the larger one."""
        fn = self.fn
        for var in variables:
            if var.space != "param":
                fn.variables.append(var)
                continue
            index = self.params.get(var.name)
            if index is None:
                self.params[var.name] = len(fn.variables)
                fn.variables.append(var)
            else:
                known = fn.variables[index]
                if var.size > known.size:
                    fn.variables[index] = replace(var, align=max(var.align or 1, known.align or 1))

    def _resolve_labels(self) -> None:
        """Fill `fn.labels`; labels declared in several blocks get unique names and branches follow scoping."""
        fn = self.fn
        by_name: dict[str, list[tuple[tuple[int, ...], int, Token]]] = {}
        for name, path, index, tok in self.label_defs:
            by_name.setdefault(name, []).append((path, index, tok))
        renamed: dict[tuple[tuple[int, ...], str], str] = {}
        for name, defs in by_name.items():
            for k, (path, index, tok) in enumerate(defs):
                if (path, name) in renamed:
                    raise self.cur.error(f"label {name} is defined twice in {fn.name}", tok)
                unique = name if k == 0 else f"{name}%{k}"
                if len(defs) > 1:
                    renamed[(path, name)] = unique
                fn.labels[unique] = index
        shared = {name for (_, name) in renamed}
        for name, path, names in self.target_defs:
            visible = tuple(_visible_label(Sym(n), path, renamed, shared).name for n in names)
            fn.target_lists[renamed.get((path, name), name)] = visible
        if not renamed:
            return
        for i, ins in enumerate(fn.body):
            if any(isinstance(op, Sym) and op.name in shared for op in ins.operands):
                path = self.scopes[i]
                operands = tuple(_visible_label(op, path, renamed, shared) for op in ins.operands)
                fn.body[i] = replace(ins, operands=operands)


def _visible_label(op, path: tuple[int, ...], renamed: dict, shared: set[str]):
    """The renamed label `op` refers to from block `path`: the innermost enclosing block's."""
    if not isinstance(op, Sym) or op.name not in shared:
        return op
    for cut in range(len(path), 0, -1):
        unique = renamed.get((path[:cut], op.name))
        if unique is not None:
            return Sym(unique)
    return op


def _misplaced(directive: str, where: str) -> str:
    if directive in KNOWN_DIRECTIVES:
        return f"directive {directive} is not supported {where}"
    return f"unknown directive {directive} {where}"


def _read_pragma(cur: Cursor) -> str:
    """`.pragma "text";` -> "text"."""
    cur.take()
    text = cur.expect_kind("str", "a quoted pragma")[1][1:-1]
    cur.expect(";", "';' after .pragma")
    return text

