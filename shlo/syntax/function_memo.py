"""The parser's function memo: a `func.func` read again from the IR its first reading built.

Modules of many functions repeat whole functions: a JAX export keeps a private function per
use of a helper (`@_where`, `@_where_0`, ... with one body), and generated modules define
thousands alike. A function is isolated from above (nothing defined outside is visible in it), so
its reading depends only on its text, the default dialect around it and the file's name; its
name is only its `sym_name`. After the general path has read a function written from
`func.func` at the start of its line up to a `}` alone on a line at the same indent,
:func:`learn_function` keeps the op under the function's text with its name taken out, and
:func:`memo_function` builds each later function of that text by copying it: new blocks, values
and ops, every location moved to the copy's lines (columns stay: all but the name, which is on
the first line, is the same text).

A function is learned only when that is exact: the parse ended at the closing `}`; no location
is written as a literal (`loc("f.mlir":1:2)` would not move with the copy; `loc(#alias)` and
`loc(unknown)` are fine); it reads no `dense_resource` (whose uses are checked at the end of the
file, at their offsets); no op has successors or an operand defined outside the function; the
func op itself has no attribute locations (they would be on the name's line). Errors are never
memoised: a function that does not parse raises from the general path.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..attributes import StringAttr
from ..ir import Block, FileLineColLoc, Location, Operation, Value
from .lexer import BARE
from .memo import copy_op, position

if TYPE_CHECKING:  # pragma: no cover
    from .parser import Parser

__all__ = ["memo_function", "learn_function", "MAX_FUNCTION", "MAX_KEPT"]

MAX_FUNCTION = 1 << 16
"""Longer functions (in characters) are not learned: copying saves little on them."""
MAX_KEPT = 1 << 24
"""The memo starts afresh when the texts it keeps reach this many characters."""

_HEADER = re.compile(r"func\.func (?:(?:public|private|nested) )?@([A-Za-z_][\w$.\-]*)\(")
_LITERAL_LOC = re.compile(r"loc\((?!#|unknown\))")


def memo_function(p: "Parser", block: Block) -> bool:
    """Read the function starting at the current token (`func.func`) from the memo and append
    it to ``block``; False (nothing consumed) when the memo does not know its text."""
    text = p.text
    pos = p.start
    ls = text.rfind("\n", 0, pos) + 1
    indent = text[ls:pos]
    if indent and not indent.isspace():
        return False
    m = _HEADER.match(text, pos)
    if m is None:
        return False
    eol = text.find("\n", m.end())
    if eol < 0 or not text[m.end():eol].rstrip().endswith("{"):
        return False  # (a declaration, or a body that starts on another line)
    close = "\n" + indent + "}"
    end = text.find(close, eol, pos + MAX_FUNCTION)
    if end < 0:
        return False
    stop = end + len(close)
    if stop < len(text) and text[stop] not in "\r\n":
        return False
    key = text[pos:m.start(1)] + "\x01" + text[m.end(1):stop]
    memo = p.function_memo.get(p.default_dialect[-1])
    entry = memo.get(key) if memo else None
    if entry is None:
        p.function_miss = (pos, stop, key, len(p.resource_uses))
        return False
    learned, line0, exact = entry
    if exact is None:  # (checked at the first repeat: most functions never repeat)
        exact = entry[2] = _LITERAL_LOC.search(text, pos, stop) is None and _copyable(learned)
    if not exact:
        return False
    shift = p.lines.line_col(pos)[0] - line0

    def moved(loc: Location) -> Location:  # (to the copy's lines; columns stay)
        return position(loc.file, loc.line + shift, loc.col) \
            if type(loc) is FileLineColLoc else loc

    op = copy_op(learned, {}, moved, block)
    op.properties["sym_name"] = StringAttr(m.group(1))
    block.operations.append(op)
    p.reset(stop)
    if p.k == BARE and p.v == "loc":  # (a location on the next line is the function's)
        op.location = p.parse_location()
    return True


def learn_function(p: "Parser", op: Operation, start: int) -> None:
    """Keep ``op``, read by the general path from ``start`` after :func:`memo_function` missed
    there, under its text when its reading is a pure function of that text (module docstring;
    the costlier conditions are checked when the text first repeats)."""
    miss = p.function_miss
    if miss is None or miss[0] != start:
        return  # (an op inside the function, read while its miss waits)
    p.function_miss = None
    pos, stop, key, uses = miss
    loc = op.location
    if p.prev_end != stop or op.name != "func.func" or len(p.resource_uses) != uses or \
            getattr(op, "attr_locations", None) or type(loc) is not FileLineColLoc:
        return
    dialect = p.default_dialect[-1]
    kept = p.function_memo_size + len(key)
    if kept > MAX_KEPT:
        p.function_memo.clear()
        kept = len(key)
    p.function_memo_size = kept
    p.function_memo.setdefault(dialect, {})[key] = [op, loc.line, None]


def _copyable(op: Operation) -> bool:
    """No successors, and every operand defined before its use inside ``op``."""
    inside: set[Value] = set()
    stack = [op]
    while stack:
        x = stack.pop()
        if x.successors or any(v not in inside for v in x.operands):
            return False
        inside.update(x.results)
        for region in x.regions:
            for b in region.blocks:
                inside.update(b.arguments)
        for region in reversed(x.regions):
            for b in reversed(region.blocks):
                stack.extend(reversed(b.operations))
    return True
