"""Parsing locations: `loc("file":1:2)`, `loc("name"(...))`, `callsite`, `fused`, `loc(#alias)`.

:class:`LocationParser` is one part of the parser (:class:`shlo.syntax.parser.Parser` combines
the parts). A reference to a location alias (`loc(#loc3)`, JAX's debug info, whose definitions
come at the end of the file) is a :class:`LocRef` until the whole file is read; then
:meth:`LocationParser.resolve_location` replaces it.
"""

from __future__ import annotations

from ..ir import CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc, OpaqueLoc, UNKNOWN_LOC
from .lexer import BARE, EOF, HASH, PUNCT, STRING
from .parse_attributes import AttributeParser

__all__ = ["LocationParser", "LocRef"]


class LocRef(Location):
    """A reference to a location alias (`loc(#loc3)`), resolved when the whole file is read."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"LocRef({self.name})"


class LocationParser(AttributeParser):
    """Locations, from the current token. Uses the parser's ``loc_aliases`` (`#loc = loc(...)`)
    and sets ``has_loc_refs`` when it meets an alias reference."""

    loc_aliases: dict[str, Location]
    has_loc_refs: bool

    def parse_location(self) -> Location:
        """`loc(...)` (current token is `loc`)."""
        self._advance()
        self.expect("(")
        loc = self._loc_inner()
        self.expect(")")
        return loc

    def _position(self, what: str) -> int:
        """A line or column number: MLIR keeps them as unsigned 32-bit integers."""
        at = self.start
        v = self.integer()
        if not 0 <= v < 2 ** 32:
            self.error(f"expected integer {what} number in FileLineColRange", at, found=False)
        return v

    def _loc_inner(self) -> Location:
        k, v = self.k, self.v
        if k == STRING:
            s = self.string()
            if self.v == ":":
                self._advance()
                line = self._position("line")
                col = 0
                if self.accept(":"):
                    col = self._position("column")
                end_line = end_col = None
                if self.v == "to" and self.k == BARE:
                    self._advance()
                    if self.accept(":"):
                        end_col = self._position("column")
                    else:
                        end_line = self._position("line")
                        if self.accept(":"):
                            end_col = self._position("column")
                return FileLineColLoc(s, line, col, end_line, end_col)
            if self.v == "(":
                self._advance()
                child = self._loc_inner()
                self.expect(")")
                return NameLoc(s, child)
            return NameLoc(s)
        if k == BARE:
            if v == "unknown":
                self._advance()
                return UNKNOWN_LOC
            if v == "callsite":
                self._advance()
                self.expect("(")
                callee = self._loc_inner()
                self.keyword("at")
                caller = self._loc_inner()
                self.expect(")")
                return CallSiteLoc(callee, caller)
            if v == "fused":
                self._advance()
                meta = None
                if self.accept("<"):
                    meta = self.parse_attribute()
                    self.expect(">")
                self.expect("[")
                locs: list[Location] = []
                if self.v != "]":
                    locs.append(self._loc_inner())
                    while self.accept(","):
                        locs.append(self._loc_inner())
                self.expect("]")
                return FusedLoc(tuple(locs), meta)
        if k == HASH:
            self._advance()
            self.has_loc_refs = True
            return LocRef(v)
        # anything else: keep verbatim up to the closing paren
        start = self.start
        depth = 0
        while not (depth == 0 and self.v == ")") and self.k != EOF:
            if self.v in "([{<" and self.k == PUNCT:
                depth += 1
            elif self.v in ")]}>" and self.k == PUNCT:
                depth -= 1
            self._advance()
        return OpaqueLoc(self.text[start:self.start].strip())

    def optional_location(self) -> Location | None:
        if self.v == "loc" and self.k == BARE:
            return self.parse_location()
        return None

    def resolve_location(self, loc: Location, memo: dict[str, Location],
                         active: set[str] | None = None) -> Location:
        """Replace alias references in ``loc`` by their definitions."""
        if isinstance(loc, LocRef):
            got = memo.get(loc.name)
            if got is not None:
                return got
            target = self.loc_aliases.get(loc.name)
            if target is None:
                return OpaqueLoc(loc.name)
            active = active or set()
            if loc.name in active:
                return OpaqueLoc(loc.name)
            active.add(loc.name)
            got = self.resolve_location(target, memo, active)
            active.discard(loc.name)
            memo[loc.name] = got
            return got
        if isinstance(loc, CallSiteLoc):
            return CallSiteLoc(self.resolve_location(loc.callee, memo, active),
                               self.resolve_location(loc.caller, memo, active))
        if isinstance(loc, NameLoc) and loc.child is not None:
            return NameLoc(loc.name, self.resolve_location(loc.child, memo, active))
        if isinstance(loc, FusedLoc):
            return FusedLoc(tuple(self.resolve_location(x, memo, active) for x in loc.locations),
                            loc.metadata)
        return loc

