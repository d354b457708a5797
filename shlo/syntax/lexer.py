"""The lexer: one compiled master regular expression, matched lazily at the parser's position.

Tokens are produced on demand (:meth:`Lexer.advance`), never as a list, so that the parser can
switch to raw scanning of the text where MLIR's grammar is context sensitive (dimension lists
`2x?x3xf32`, the bodies of `dense<...>` literals, verbatim capture of other dialects' attributes).
Whitespace and `//` comments are consumed as the prefix of each token match.

Token kinds are small integers (the group numbers of the master expression).
"""

from __future__ import annotations

import re

from ..spelling import escape_string  # the inverse of unescape_string (printing is layer 0)

__all__ = [
    "VALUE", "STRING", "TENSOR", "BARE", "FLOAT", "INTEGER", "CARET", "AT", "HASH", "BANG",
    "PUNCT", "EOF", "BAD", "TOKEN_RE", "KIND_NAMES", "SKIP_RE", "LineIndex", "unescape_string",
    "escape_string", "LiteralError", "int_value", "MAX_INT_DIGITS",
]

MAX_INT_DIGITS = 1000
"""The longest integer literal shlo reads (a 2**3000 value; no type of StableHLO is wider)."""


class LiteralError(ValueError):
    """A literal that cannot be a value (raised by :func:`int_value`; the parser reports it at
    its position as a ParseError)."""


def int_value(text: str) -> int:
    """The value of an integer token as MLIR reads it: `0x...` is hexadecimal, anything else
    decimal (leading zeros included: `011` is eleven)."""
    digits = text.lstrip("+-")
    if len(digits) > MAX_INT_DIGITS:
        raise LiteralError(f"integer literal of {len(digits)} digits is too long "
                           f"(at most {MAX_INT_DIGITS})")
    if digits[:2] in ("0x", "0X"):
        v = int(digits[2:], 16)
        return -v if text.startswith("-") else v
    return int(text, 10)


VALUE, STRING, TENSOR, BARE, FLOAT, INTEGER, CARET, AT, HASH, BANG, PUNCT, EOF, BAD = range(1, 14)

KIND_NAMES = {
    VALUE: "SSA value", STRING: "string", TENSOR: "type", BARE: "identifier", FLOAT: "float",
    INTEGER: "integer", CARET: "block label", AT: "symbol", HASH: "attribute", BANG: "type",
    PUNCT: "punctuation", EOF: "end of file", BAD: "character",
}

_STR = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_SKIP = r"(?:\s+|//[^\n]*)*"

# Group numbers must match the constants above.
TOKEN_RE = re.compile(
    _SKIP
    + r"(?:"
    + r"(%[\w$.\-]+(?:#\d+)?)"  # 1 VALUE: %name, %0#1
    + r"|(" + _STR + r")"  # 2 STRING
    # 3 TENSOR: a whole static/dynamic tensor type without encoding, lexed as one token (fast path)
    + r"|(tensor<(?:(?:\d+|\?)x)*(?:[a-z][a-zA-Z0-9]*|complex<f(?:32|64)>)>)"
    + r"|([A-Za-z_][\w$.]*)"  # 4 BARE identifier / keyword / op name
    + r"|([-+]?\d+\.\d*(?:[eE][-+]?\d+)?)"  # 5 FLOAT
    + r"|(-?(?:0x[0-9a-fA-F]+|\d+))"  # 6 INTEGER
    + r"|(\^[\w$.\-]+)"  # 7 CARET block label
    + r"|(@[A-Za-z_][\w$.]*|@" + _STR + r")"  # 8 AT symbol
    + r"|(#[\w$.\-]+)"  # 9 HASH attribute (alias or dialect attribute)
    + r"|(![\w$.\-]+)"  # 10 BANG type (alias or dialect type)
    + r"|(->|::|\{-#|#-\}|[(){}\[\]<>,:=?*+\-|])"  # 11 PUNCT
    + r"|(\Z)"  # 12 EOF
    + r"|(.)"  # 13 BAD
    + r")",
    re.S,
)

SKIP_RE = re.compile(_SKIP)


class LineIndex:
    """Maps character offsets of a text to 1-based (line, column).

    A parse asks about nearby offsets, mostly increasing, so the newlines are counted from the
    offset asked last (`str.count`, no table of line starts)."""

    __slots__ = ("text", "_off", "_line", "_start")

    def __init__(self, text: str) -> None:
        self.text = text
        self._off = 0  # the offset asked last, its line and the offset that line starts at
        self._line = 1
        self._start = 0

    def line_col(self, offset: int) -> tuple[int, int]:
        text = self.text
        if offset >= self._off:
            more = text.count("\n", self._off, offset)
        else:
            more = -text.count("\n", offset, self._off)
        if more:
            self._line += more
            self._start = text.rfind("\n", 0, offset) + 1
        self._off = offset
        return self._line, offset - self._start + 1


_ESCAPE_RE = re.compile(r'\\(?:([0-9a-fA-F]{2})|(.))', re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _unescape_bytes(body: str) -> bytes:
    out = bytearray()
    pos = 0
    for m in _ESCAPE_RE.finditer(body):
        out += body[pos:m.start()].encode("utf-8")
        if m.group(1):
            out.append(int(m.group(1), 16))
        else:
            c = m.group(2)
            if c not in _SIMPLE_ESCAPES:
                raise ValueError(f"unknown escape in string literal: \\{c}")
            out += _SIMPLE_ESCAPES[c].encode("utf-8")
        pos = m.end()
    out += body[pos:].encode("utf-8")
    return bytes(out)


def unescape_string(token: str) -> str:
    """The value of a string token (with its quotes): `\\"`, `\\\\`, `\\n`, `\\t`, hex `\\0A`.

    Bytes that are not valid UTF-8 (binary payloads such as serialized protos) are kept through
    the `surrogateescape` error handler, so that :func:`escape_string` restores them exactly.
    """
    body = token[1:-1]
    if "\\" not in body:
        return body
    return _unescape_bytes(body).decode("utf-8", "surrogateescape")
