"""The parser's line memo: one-line ops read again from the IR their first reading built.

Programs repeat themselves. A JAX export of a model has thousands of lines such as `%7 =
stablehlo.add %5, %6 : tensor<32x64xf32>` or `%9 = stablehlo.dot_general %8, %arg4,
contracting_dims = [1] x [0] : (...) -> ...` that differ from an earlier line only in their SSA
names. Such a line's *template* is its text with the names of its result and operands taken
out (and a trailing `loc(#alias)`, JAX's debug info); how the general recursive-descent parser
reads a line depends only on that template, the default dialect of the enclosing region and the
types of the operands. So after the general parser has read a line alone on its own line,
:func:`learn` keeps what it built (op name, properties, attributes, operand and result types)
under the line's template; :func:`memo_ops` then reads each following line whose template is
known and whose operands have those types by looking the names up and building the op, without
the lexer.

A line is learned only when the reading is checked to be a pure function of the template: the
op has no regions and no successors, at most one result, the parse ended at the end of the line,
every SSA name the template took out is an operand token the parser read, in order, and the op's
location is its line and column (or the alias that was taken out). Attributes are immutable and
shared by the ops built from one template; each op gets its own dicts and lists. Anything else
(the first line of each template, region ops, errors) is read by the general path, which
reports every error.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..ir import Block, FileLineColLoc, Operation, Value
from .cursor import UNBOUND
from .parse_locations import LocRef

if TYPE_CHECKING:  # pragma: no cover
    from .parser import Parser

__all__ = ["memo_ops", "learn", "template", "MAX_LINE", "MAX_TEMPLATES"]

MAX_LINE = 1000
"""Longer lines (large literals) are not learned: their reading is dominated by the literal."""
MAX_TEMPLATES = 4096
"""The memo starts afresh when it holds this many templates (a module of many distinct lines,
such as one `call @f_i` per function, gains nothing from keeping them)."""

_SPLIT = re.compile(r"%([\w$.\-]+)").split
_ALIAS = re.compile(r"#[\w$.\-]+").fullmatch

_op_new = Operation.__new__
_val_new = Value.__new__
_loc_new = object.__new__
# (the slots of a FileLineColLoc, set without its frozen dataclass's __init__)
_set_file, _set_line, _set_col, _set_end_line, _set_end_col = (
    FileLineColLoc.__dict__[f].__set__ for f in ("file", "line", "col", "end_line", "end_col"))


def template(body: str) -> tuple[str, str | None, list[str], str | None] | None:
    """``(key, result name, operand names, location alias)`` of the one-line op ``body`` (its
    text from its first token to its last, on one line), or None when it cannot be one.

    The key is the text around the SSA names, pieces joined by newlines (no piece holds one);
    for an op with a result it starts with ` = `. A `%` the split does not take (a `%0#1`'s
    `#1`, a `%` in a string) stays in the key, and :func:`learn` refuses such lines."""
    alias = None
    if body[-1] == ")":
        j = body.rfind(" loc(#")
        if j > 0:
            alias = body[j + 5:-1]
            if not alias[1:].isalnum() and _ALIAS(alias) is None:
                return None
            body = body[:j]
    parts = _SPLIT(body)
    if parts[0]:  # `name operands...`: no result
        return "\n".join(parts[0::2]), None, parts[1::2], alias
    if len(parts) < 3:
        return None
    return "\n".join(parts[2::2]), parts[1], parts[3::2], alias


def memo_ops(p: "Parser", block: Block) -> int:
    """Read the lines from the current token on whose templates are known, appending their ops
    to ``block``; returns how many were read (0: nothing consumed, the current token starts a
    line the general path reads)."""
    memo = p.memo
    if not memo:
        return 0
    text = p.text
    pos = p.start
    ls = text.rfind("\n", 0, pos) + 1
    if ls != pos and not text[ls:pos].isspace():
        return 0
    key_prefix = p.default_dialect[-1] + "\n"
    values = p.values
    scope = p.scopes[-1]
    fname = p.filename
    ops = block.operations
    line = 0  # (found at the first op built: nothing to count when the first line misses)
    end = len(text)
    n = 0
    while True:
        eol = text.find("\n", ls)
        if eol < 0:
            eol = end
        body = text[ls:eol].lstrip(" \t")
        pos = eol - len(body)
        body = body.rstrip()
        if not body:  # a blank line
            if eol == end:
                ls = end
                break
            ls = eol + 1
            if line:
                line += 1
            continue
        if len(body) > MAX_LINE:
            break
        t = template(body)
        if t is None:
            break
        key, res, names, alias = t
        entry = memo.get(key_prefix + key)
        if entry is None:
            if not n:
                p.memo_miss = (pos, t)  # (for learn, which reads the same line next)
            break
        name, props, attrs, in_types, out_type = entry
        if len(names) != len(in_types):
            break
        operands = []
        for nm, ty in zip(names, in_types):
            v = values.get(nm)
            if v is None or type(v) is list or (v.type is not ty and v.type != ty):
                operands = None
                break
            operands.append(v)
        if operands is None or res is not None and res in scope:
            break  # (an unknown name, a type mismatch, a redefinition: the general path)
        op = _op_new(Operation)
        op.name = name
        op.operands = operands
        op.properties = dict(props) if props else {}
        op.attributes = dict(attrs) if attrs else {}
        op.regions = []
        op.successors = []
        op.parent = block
        if res is None:
            op.results = []
        else:
            r = _val_new(Value)
            r.type = out_type
            r.owner = op
            r.index = 0
            r.name = res
            op.results = [r]
            scope[res] = values.get(res, UNBOUND)
            values[res] = r
        if not line:
            line = p.lines.line_col(pos)[0]
        if alias is None:
            loc = _loc_new(FileLineColLoc)
            _set_file(loc, fname)
            _set_line(loc, line)
            _set_col(loc, pos - ls + 1)
            _set_end_line(loc, None)
            _set_end_col(loc, None)
            op.location = loc
        else:
            op.location = LocRef(alias)
            p.has_loc_refs = True
        ops.append(op)
        n += 1
        if eol == end:
            ls = end
            break
        ls = eol + 1
        line += 1
    if n:
        p.reset(ls)
    return n


def learn(p: "Parser", op: Operation, start: int, read: list[tuple[int, str, Value]]) -> None:
    """Keep the reading of ``op`` (parsed by the general path from offset ``start``; ``read``
    the operand tokens it read: offset, text, value) under its line's template, when it is a
    pure function of the template (see the module docstring)."""
    if op.regions or op.successors or len(op.results) > 1:
        return
    text = p.text
    ls = text.rfind("\n", 0, start) + 1
    if ls != start and not text[ls:start].isspace():
        return
    eol = text.find("\n", start)
    body = text[start:eol if eol >= 0 else len(text)].rstrip()
    if p.prev_end != start + len(body) or len(body) > MAX_LINE:
        return
    miss = p.memo_miss
    t = miss[1] if miss is not None and miss[0] == start else template(body)
    if t is None:
        return
    key, res, names, alias = t
    if (res is None) != (not op.results) or (res is not None and not key.startswith(" = ")):
        return
    if len(names) != len(read) or len(read) != len(op.operands):
        return
    # the names taken out are exactly the operand tokens read, in order, and the op's operands
    at = start
    parts = key.split("\n")
    if res is not None:
        at += 1 + len(res)
    for i, (nm, (off, tok, v)) in enumerate(zip(names, read)):
        at += len(parts[i])
        if off != at or tok != "%" + nm or op.operands[i] is not v:
            return
        at += 1 + len(nm)
    loc = op.location
    if alias is not None:
        if type(loc) is not LocRef or loc.name != alias:
            return
    elif "loc(" in body or type(loc) is not FileLineColLoc or loc.file != p.filename or \
            (loc.line, loc.col) != p.lines.line_col(start) or loc.end_line is not None or \
            loc.end_col is not None:
        return
    memo = p.memo
    if len(memo) >= MAX_TEMPLATES:
        memo.clear()
    memo[p.default_dialect[-1] + "\n" + key] = (
        op.name, op.properties or None, op.attributes or None,
        tuple(v.type for v in op.operands), op.results[0].type if op.results else None)
