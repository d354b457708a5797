"""How the debugging tools name where an op is: `file:line:col`, the name location, the
enclosing function."""

from __future__ import annotations

from typing import Any

from ..ir import CallSiteLoc, FusedLoc, Location, NameLoc, Operation

__all__ = ["enclosing_function", "location_name", "op_location"]


def op_location(op: Operation) -> str:
    """`file:line:col` of ``op`` ("" when its location has none)."""
    flc = op.location.file_line_col()
    return f"{flc[0]}:{flc[1]}:{flc[2]}" if flc else ""


def location_name(loc: Location) -> str | None:
    """The name part of a location (`loc("name"(...))`, also inside callsite/fused)."""
    if isinstance(loc, NameLoc):
        return loc.name
    if isinstance(loc, CallSiteLoc):
        return location_name(loc.callee) or location_name(loc.caller)
    if isinstance(loc, FusedLoc):
        for x in loc.locations:
            n = location_name(x)
            if n:
                return n
    return None


def enclosing_function(op: Operation) -> str:
    """The name of the `func.func` ``op`` is in ("" at module level)."""
    cur: Any = op
    while cur is not None:
        if isinstance(cur, Operation) and cur.name == "func.func" and cur is not op:
            a = cur.attr("sym_name")
            return str(a.value) if a is not None else ""
        cur = cur.parent
    return ""
