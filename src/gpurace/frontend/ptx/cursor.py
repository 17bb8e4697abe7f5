"""A read position in the token list, with the checks every parsing step needs.

Every parsing function takes a Cursor; errors go through `Cursor.error` so
that each one names the PTX line of the token where parsing stopped.
"""

from __future__ import annotations

import struct

from gpurace.errors import PtxSyntaxError
from gpurace.frontend.ptx.lexer import Source, Token, tokenize


class Cursor:
    """Tokens of one PTX text and the index of the next one to read."""

    def __init__(self, source: Source):
        self.source = source
        self.tokens: list[Token] = tokenize(source)
        self.i = 0

    # -- looking and taking -------------------------------------------------

    def peek(self) -> Token:
        return self.tokens[self.i]

    def peek_at(self, ahead: int) -> Token:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else self.tokens[-1]

    def take(self) -> Token:
        """The next token; at the end, the `eof` token again (never past it)."""
        tok = self.tokens[self.i]
        if tok[0] != "eof":
            self.i += 1
        return tok

    def accept(self, text: str) -> bool:
        """Consume the next token if its text is `text`."""
        if self.tokens[self.i][1] == text:
            self.i += 1
            return True
        return False

    def expect(self, text: str, what: str | None = None) -> Token:
        tok = self.tokens[self.i]
        if tok[1] != text:
            raise self.error(f"expected {what or repr(text)}, found {describe(tok)}", tok)
        self.i += 1
        return tok

    def expect_kind(self, kind: str, what: str) -> Token:
        tok = self.tokens[self.i]
        if tok[0] != kind:
            raise self.error(f"expected {what}, found {describe(tok)}", tok)
        self.i += 1
        return tok

    def skip_past(self, text: str) -> None:
        """Skip tokens up to and including the next `text` token (a statement end)."""
        while True:
            tok = self.take()
            if tok[0] == "eof":
                raise self.error(f"missing {text!r} before the end of the file", tok)
            if tok[1] == text and tok[0] == "punct":
                return

    def skip_parenthesised(self) -> list[str]:
        """Skip a balanced `( ... )` group, as in `.attribute(.managed)`; the texts of its tokens."""
        self.expect("(")
        depth = 1
        texts = []
        while depth:
            tok = self.take()
            if tok[0] == "eof":
                raise self.error("unbalanced '(' before the end of the file", tok)
            if tok[0] == "punct":
                depth += tok[1] == "("
                depth -= tok[1] == ")"
            texts.append(tok[1])
        return texts[:-1]

    # -- values ---------------------------------------------------------------

    def integer(self, what: str = "an integer") -> int:
        """An integer literal, optionally negative."""
        negative = self.accept("-")
        tok = self.expect_kind("int", what)
        value = int_value(tok, self)
        return -value if negative else value

    def line(self, tok: Token | None = None) -> int:
        return self.source.line_of((tok or self.tokens[self.i])[2])

    def error(self, message: str, tok: Token | None = None) -> PtxSyntaxError:
        return self.source.error(message, (tok or self.tokens[self.i])[2])


def describe(tok: Token) -> str:
    """A token as an error message names it."""
    if tok[0] == "eof":
        return "the end of the file"
    return repr(tok[1])


def int_value(tok: Token, cursor: Cursor) -> int:
    """The value of an `int` token: decimal, hex `0x`, binary `0b` or octal `0...`, optional `U`.

    PTX integer constants are 64-bit; a literal that needs more bits is an error here rather than a
    value that overflows whatever later converts it.
    """
    text = tok[1].rstrip("U")
    prefixed = text[:2] in ("0x", "0X", "0b", "0B")
    if len((text[2:] if prefixed else text).lstrip("0")) > 64:  # more digits than 64 bits have in any base
        raise cursor.error(f"integer constant {tok[1][:40]}... does not fit in 64 bits", tok)
    if prefixed:
        value = int(text, 0)
    elif len(text) > 1 and text[0] == "0":
        if not all(c in "01234567" for c in text):
            raise cursor.error(f"malformed octal number {tok[1]!r}", tok)
        value = int(text, 8)
    else:
        value = int(text)
    if value >= 1 << 64:
        raise cursor.error(f"integer constant {tok[1]} does not fit in 64 bits", tok)
    return value


def hex_float(text: str) -> tuple[float, str, int]:
    """The value, kind ("f32"/"f64") and bit pattern of a `0f...`/`0d...` literal."""
    bits = int(text[2:], 16)
    if text[1] in "fF":
        return struct.unpack("<f", struct.pack("<I", bits))[0], "f32", bits
    return struct.unpack("<d", struct.pack("<Q", bits))[0], "f64", bits
