"""The parser's cursor: where a parse is in its text, and the SSA names in scope there.

:class:`Cursor` is the base of the parser (:mod:`shlo.syntax.parser`): the token state
(``k`` the kind, ``v`` the text, ``m`` the match of :data:`shlo.syntax.lexer.TOKEN_RE`), the
moves (advance, reset to a raw offset, save/restore), the small expectations the grammar is
made of (`expect(",")`, `keyword("dim")`, `integer()`, ...), MLIR-style errors
(:class:`shlo.errors.ParseError` at `file:line:col`), and the SSA scopes: ``values`` maps each
name in scope to its value (a list for a result group `%0:2`); each region opens a scope, which
records what the names it binds meant before (:data:`UNBOUND`: nothing) and restores that when
it closes.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ParseError
from ..ir import FileLineColLoc
from .lexer import BARE, EOF, INTEGER, LineIndex, STRING, TOKEN_RE, int_value, unescape_string

__all__ = ["Cursor", "UNBOUND"]

UNBOUND: Any = object()
"""What a scope records for a name no enclosing scope had bound."""
_MATCH = TOKEN_RE.match
_NEXT_IS_EQ_RE = re.compile(r"\s*=")


class Cursor:
    """The position of one parse in its text, the current token, the SSA names in scope."""

    def __init__(self, text: str, filename: str | None = None) -> None:
        self.text = text
        self.filename = filename or "<string>"
        self.lines = LineIndex(text)
        self.pos = 0
        self.prev_end = 0
        self.k = 0
        self.v = ""
        self.m: Any = None
        self.values: dict[str, Any] = {}
        self.scopes: list[dict[str, Any]] = [{}]
        self._advance()

    def _advance(self) -> None:
        self.prev_end = self.pos
        m = _MATCH(self.text, self.pos)
        k = m.lastindex
        self.k = k
        self.v = m.group(k)
        self.m = m
        self.pos = m.end()

    def reset(self, pos: int) -> None:
        """Re-lex from raw text offset ``pos``."""
        self.pos = pos
        self._advance()

    def save(self) -> tuple:
        return (self.pos, self.k, self.v, self.m)

    def restore(self, state: tuple) -> None:
        self.pos, self.k, self.v, self.m = state

    @property
    def start(self) -> int:
        """Offset of the current token."""
        return self.m.start(self.k)

    def location_at(self, offset: int) -> FileLineColLoc:
        line, col = self.lines.line_col(offset)
        return FileLineColLoc(self.filename, line, col)

    def describe(self) -> str:
        if self.k == EOF:
            return "end of file"
        v = self.v
        if len(v) > 40:
            v = v[:37] + "..."
        return f"'{v}'"

    def make_error(self, msg: str, offset: int | None = None) -> ParseError:
        if offset is None:
            offset = self.start if self.m is not None else 0
        return ParseError(msg, self.location_at(offset), filename=self.filename)

    def error(self, msg: str, offset: int | None = None, found: bool = True) -> Any:
        """Raise a ParseError. For a wrong token (``found``) the message names it, and, as MLIR
        does, a token that starts a new line is reported at the end of the previous token."""
        if found:
            msg = f"{msg} but found {self.describe()}"
            if offset is None and self.m is not None:
                start = self.start
                if "\n" in self.text[self.prev_end:start]:
                    offset = self.prev_end
        raise self.make_error(msg, offset)

    def expect(self, p: str, what: str | None = None) -> None:
        if self.v != p or self.k == STRING:
            self.error(f"expected '{p}'" + (f" {what}" if what else ""))
        self._advance()

    def accept(self, p: str) -> bool:
        if self.v == p and self.k != STRING:
            self._advance()
            return True
        return False

    def keyword(self, kw: str) -> None:
        if self.v != kw or self.k != BARE:
            self.error(f"expected '{kw}'")
        self._advance()

    def integer(self, hi: int = (1 << 63) - 1) -> int:
        """An integer literal of at most 64 bits (signed; unsigned up to ``hi``), as MLIR's
        custom parsers read one (`parseInteger<int64_t>`)."""
        if self.k != INTEGER:
            self.error("expected integer value")
        v = int_value(self.v)
        if not -(1 << 63) <= v <= hi:
            self.error("integer value too large", found=False)
        self._advance()
        return v

    def bare(self) -> str:
        if self.k != BARE:
            self.error("expected identifier")
        v = self.v
        self._advance()
        return v

    def string(self) -> str:
        if self.k != STRING:
            self.error("expected string")
        try:
            s = unescape_string(self.v)
        except ValueError as e:
            self.error(str(e), found=False)
        self._advance()
        return s

    def next_is_eq(self) -> bool:
        """Raw lookahead: is the token after the current one `=`?"""
        return _NEXT_IS_EQ_RE.match(self.text, self.pos) is not None

    def _capture_opaque(self) -> str:
        """Verbatim text of the current identifier plus a balanced `<...>` body if present."""
        start = self.start
        text = self.text
        i = self.pos
        if i < len(text) and text[i] == "<":
            depth = 0
            n = len(text)
            while i < n:
                c = text[i]
                if c == '"':
                    j = i + 1
                    while j < n and text[j] != '"':
                        j += 2 if text[j] == "\\" else 1
                    i = j + 1
                    continue
                if c in "<([{":
                    depth += 1
                elif c in ")]}":
                    depth -= 1
                elif c == ">":
                    if text[i - 1] != "-":
                        depth -= 1
                if depth == 0:
                    i += 1
                    break
                i += 1
            else:
                self.error("unbalanced '<' in dialect attribute or type", start, found=False)
        self.reset(i)
        return text[start:i]

    # --- SSA scopes ---------------------------------------------------------------------------

    def push_scope(self) -> None:
        self.scopes.append({})

    def pop_scope(self) -> None:
        scope = self.scopes.pop()
        values = self.values
        for name, old in scope.items():
            if old is UNBOUND:
                del values[name]
            else:
                values[name] = old

    def define(self, name: str, value: Any, offset: int | None = None) -> None:
        """Bind SSA name ``name`` (without `%`) in the innermost scope."""
        scope = self.scopes[-1]
        if name in scope:
            self.error(f"redefinition of SSA value '%{name}'", offset, found=False)
        scope[name] = self.values.get(name, UNBOUND)
        self.values[name] = value
