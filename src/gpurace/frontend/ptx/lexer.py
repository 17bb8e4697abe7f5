"""PTX text to a flat list of tokens, in one regular-expression pass.

The lexer knows nothing about PTX statements; it only cuts the text into
words, directives, numbers, strings and punctuation, and drops whitespace and
comments. A dotted instruction name (`ld.global.L1::no_allocate.v4.f32`) or a
special register (`%tid.x`) is one `word` token, because splitting it is the
parser's job and keeping it whole keeps the token count (and the time) low.

Each token is a plain tuple `(kind, text, offset)`; the list always ends with
an `eof` token so the parser can look ahead without bounds checks.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from gpurace.errors import PtxSyntaxError

Token = tuple[str, str, int]

# Whitespace and comments are consumed in front of every token, so one match
# yields one token. Alternatives are tried in order: hex floats before
# integers, integers before the catch-all error groups.
_SKIP = r"(?:\s+|//[^\n]*|/\*[\s\S]*?\*/)*"
_TOKEN_RE = re.compile(
    _SKIP
    + r"(?:"
    + r'(?P<str>"(?:[^"\\\n]|\\.)*")'
    + r"|(?P<fhex>0[fF][0-9a-fA-F]{8}(?![\w$])|0[dD][0-9a-fA-F]{16}(?![\w$]))"
    + r"|(?P<float>(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![\w$.]))"
    + r"|(?P<int>(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)U?(?![\w$]))"
    + r"|(?P<dir>\.[A-Za-z_$][\w$]*)"
    + r"|(?P<word>[A-Za-z_$%][\w$]*(?:(?:\.|::)[\w$]+)*)"
    + r"|(?P<punct>[{}()\[\],;:+\-=<>|!@])"
    + r"|(?P<opencomment>/\*)"
    + r"|(?P<badnum>\d[\w$.]*)"
    + r"|(?P<bad>.)"
    + r"|(?P<eof>\Z)"
    + r")"
)

_QUOTED = 200  # characters of the offending line an error message quotes

_ERRORS = {
    "opencomment": "unterminated /* comment",
    "badnum": "malformed number {!r}",
    "bad": "unexpected character {!r}",
}


class Source:
    """The PTX text with its path, turning offsets into 1-based lines for messages."""

    def __init__(self, text: str, path: str | None):
        self.text = text
        self.path = path
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect_right(self._newlines, offset - 1) + 1 if offset > 0 else 1

    def line_text(self, line: int) -> str:
        start = self._newlines[line - 2] + 1 if line >= 2 else 0
        end = self._newlines[line - 1] if line - 1 < len(self._newlines) else len(self.text)
        return self.text[start:end]

    def error(self, message: str, offset: int) -> PtxSyntaxError:
        """A PtxSyntaxError naming the line that holds `offset` and quoting it (its first `_QUOTED` characters)."""
        line = self.line_of(offset)
        text = self.line_text(line)
        if len(text) > _QUOTED:
            text = text[:_QUOTED] + " ..."
        return PtxSyntaxError(message, line, self.path, text)


def tokenize(source: Source) -> list[Token]:
    """All tokens of `source`, ending with an `eof` token; bad characters raise PtxSyntaxError."""
    tokens: list[Token] = []
    append = tokens.append
    for m in _TOKEN_RE.finditer(source.text):
        kind = m.lastgroup
        if kind == "eof":
            break
        if kind in _ERRORS:
            raise source.error(_ERRORS[kind].format(m.group(kind)), m.start(kind))
        append((kind, m.group(kind), m.start(kind)))
    tokens.append(("eof", "", len(source.text)))
    return tokens
