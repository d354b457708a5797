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
from typing import TYPE_CHECKING, Any, Callable

from ..attributes import SymbolRefAttr
from ..ir import Block, FileLineColLoc, Location, Operation, Region, Value
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
_SYMBOL = re.compile(r"@([A-Za-z_][\w$.\-]*)(?![\w$.\-:\"])")
_SYM = "@\x01"
"""What stands for the symbol in a template with one (its name is the op's `SymbolRefAttr`)."""
_ALIAS = re.compile(r"#[\w$.\-]+").fullmatch

_op_new = Operation.__new__
_val_new = Value.__new__
_loc_new = object.__new__
# (the slots of a FileLineColLoc, set without its frozen dataclass's __init__)
_set_file, _set_line, _set_col, _set_end_line, _set_end_col = (
    FileLineColLoc.__dict__[f].__set__ for f in ("file", "line", "col", "end_line", "end_col"))


def position(file: str | None, line: int, col: int) -> FileLineColLoc:
    """``FileLineColLoc(file, line, col)``, built without the frozen dataclass's slow
    ``__init__`` (the memos build one per op)."""
    loc = _loc_new(FileLineColLoc)
    _set_file(loc, file)
    _set_line(loc, line)
    _set_col(loc, col)
    _set_end_line(loc, None)
    _set_end_col(loc, None)
    return loc


def template(body: str) -> tuple[str, str | None, list[str], str | None, str | None] | None:
    """``(key, result name, operand names, location alias, symbol)`` of the one-line op
    ``body`` (its text from its first token to its last, on one line), or None when it cannot
    be one. A line with one plain `@symbol` (a call's callee) has it taken out too: ``symbol``
    is its name, and the key holds a stand-in.

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
        key, res, names = "\n".join(parts[0::2]), None, parts[1::2]
    elif len(parts) < 3:
        return None
    else:
        key, res, names = "\n".join(parts[2::2]), parts[1], parts[3::2]
    if "@" in key:  # one plain symbol reference (a call's callee) is taken out too
        syms = _SYMBOL.findall(key)
        if len(syms) == 1:
            return _SYMBOL.sub(_SYM, key, count=1), res, names, alias, syms[0]
    return key, res, names, alias, None


def memo_ops(p: "Parser", block: Block) -> int:
    """Read the lines from the current token on whose templates are known, appending their ops
    to ``block``; returns how many were read (0: nothing consumed, the current token starts a
    line the general path reads)."""
    memo = p.memo.get(p.default_dialect[-1])
    if not memo:
        return 0
    text = p.text
    pos = p.start
    ls = text.rfind("\n", 0, pos) + 1
    if ls != pos and not text[ls:pos].isspace():
        return 0
    # the first line (a miss returns at once)
    eol = text.find("\n", pos)
    body = text[pos:eol if eol >= 0 else len(text)].rstrip()
    if len(body) > MAX_LINE:
        return 0
    t = template(body)
    if t is None:
        return 0
    if t[0] not in memo:
        p.memo_miss = (pos, t)  # (for learn, which reads the same line next)
        return 0
    first = t
    values = p.values
    scope = p.scopes[-1]
    fname = p.filename
    locrefs = p.locrefs
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
        if first is not None:
            t = first
            first = None
        elif len(body) > MAX_LINE:
            break
        else:
            t = template(body)
            if t is None:
                break
        key, res, names, alias, sym = t
        entry = memo.get(key)
        if entry is None:
            break
        name, props, attrs, in_types, out_type, regions, inner_col, attr_at, sym_at = entry
        if len(names) != len(in_types) or regions is not None and \
                (inner_col is None) != (alias is not None):
            break  # (a region's ops are at the line's location alias, or at the op's name)
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
        if sym_at is not None:  # (the symbol the line names, where the learned op had its own)
            (op.properties if sym_at[0] else op.attributes)[sym_at[1]] = SymbolRefAttr(sym)
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
        if alias is None:
            if not line:
                line = p.lines.line_col(pos)[0]
            loc = _loc_new(FileLineColLoc)
            _set_file(loc, fname)
            _set_line(loc, line)
            _set_col(loc, pos - ls + 1)
            _set_end_line(loc, None)
            _set_end_col(loc, None)
        else:
            loc = locrefs.get(alias)
            if loc is None:
                loc = locrefs[alias] = LocRef(alias)
                p.has_loc_refs = True
        op.location = loc
        if attr_at is not None:  # (where a generic op's attributes were written, as the parser
            line = line or p.lines.line_col(pos)[0]  # keeps it: piece i of the template, k on)
            starts = _piece_starts(pos + (1 + len(res) if res is not None else 0), attr_at[0],
                                   names)
            op.attr_locations = {a: FileLineColLoc(fname, line, starts[i] + k - ls + 1)
                                 for a, i, k in attr_at[1]}
        if regions is None:
            op.regions = []
        else:
            if inner_col is not None:  # (the body's ops are at the op's name)
                col = pos - ls + 1 + inner_col + (len(res) + 1 if res is not None else 0)
                loc = FileLineColLoc(fname, line or p.lines.line_col(pos)[0], col)
            op.regions = copy_regions(regions, op, {}, lambda _, at=loc: at)  # (all at loc)
        ops.append(op)
        n += 1
        if eol == end:
            ls = end
            break
        ls = eol + 1
        if line:
            line += 1
    if n:
        p.reset(ls)
    return n


def _piece_starts(at: int, lengths: tuple[int, ...], names: list[str]) -> list[int]:
    """The offsets of a template's pieces in a line whose first piece is at ``at``."""
    out = [at]
    for n, nm in zip(lengths, names):
        at += n + 1 + len(nm)
        out.append(at)
    return out


def _attr_at(p: "Parser", op: Operation, ls: int, starts: list[int], parts: list[str]) -> \
        tuple | None | bool:
    """``op.attr_locations`` as (piece lengths, ((name, piece, offset in piece), ...)); None
    when there are none; False when one is not on the op's line (then the line is not learned)."""
    locs = getattr(op, "attr_locations", None)
    if not locs:
        return None
    line = p.lines.line_col(ls)[0]
    out = []
    for a, loc in locs.items():
        if type(loc) is not FileLineColLoc or loc.file != p.filename or loc.line != line or \
                loc.end_line is not None or loc.end_col is not None:
            return False
        o = ls + loc.col - 1
        for i, (s, piece) in enumerate(zip(starts, parts)):
            if s <= o < s + len(piece):
                out.append((a, i, o - s))
                break
        else:
            return False
    return tuple(len(x) for x in parts), tuple(out)


def copy_op(x: Operation, vmap: dict[Value, Value], relocate: Callable[[Location], Location],
            parent: Block | None) -> Operation:
    """A copy of ``x``, its regions too, in block ``parent``: new values, blocks and ops wired
    alike (``vmap``, old value -> new, is filled as it goes and must hold the operands defined
    outside ``x``), each location and attribute location passed through ``relocate``."""
    y = _op_new(Operation)
    y.name = x.name
    y.operands = [vmap[v] for v in x.operands] if x.operands else []
    results = []
    for r in x.results:
        v = _val_new(Value)
        v.type = r.type
        v.owner = y
        v.index = r.index
        v.name = r.name
        vmap[r] = v
        results.append(v)
    y.results = results
    y.properties = dict(x.properties) if x.properties else {}
    y.attributes = dict(x.attributes) if x.attributes else {}
    y.successors = []
    y.location = relocate(x.location)
    y.parent = parent
    locs = getattr(x, "attr_locations", None)
    y.attr_locations = {a: relocate(loc) for a, loc in locs.items()} if locs else None
    y.regions = copy_regions(x.regions, y, vmap, relocate) if x.regions else []
    return y


def copy_regions(regions: list[Region], owner: Operation, vmap: dict[Value, Value],
                 relocate: Callable[[Location], Location]) -> list[Region]:
    """Copies of ``regions`` for op ``owner`` (:func:`copy_op`)."""
    out = []
    for region in regions:
        nr = Region()
        nr.parent = owner
        for b in region.blocks:
            nb = Block(label=b.label)
            for a in b.arguments:
                vmap[a] = nb.add_argument(a.type, a.name)
            ops = nb.operations
            for z in b.operations:
                ops.append(copy_op(z, vmap, relocate, nb))
            nb.parent = nr
            nr.blocks.append(nb)
        out.append(nr)
    return out


def _clonable(op: Operation, loc: Location, inside: set[Value]) -> bool:
    """Whether the regions of ``op`` can be copied for a later line (:func:`copy_regions`): no
    successors, every op at ``loc``, every operand defined inside."""
    for region in op.regions:
        for block in region.blocks:
            inside.update(block.arguments)
            for x in block.operations:
                if x.successors or x.location != loc or getattr(x, "attr_locations", None) or \
                        any(v not in inside for v in x.operands):
                    return False
                inside.update(x.results)
                if x.regions and not _clonable(x, loc, inside):
                    return False
    return True


def _inner_location(op: Operation, res: str | None, first_piece: str) -> tuple[bool, int | None]:
    """Where the ops in the regions of ``op`` are: (True, None) at the op's location, (True,
    k) at its line, ``k`` columns after the result's name (within the template's first piece,
    so on every line of the template), else (False, None)."""
    inner = op.regions[0].blocks[0].operations[0].location \
        if op.regions[0].blocks and op.regions[0].blocks[0].operations else op.location
    loc = op.location
    if inner == loc:
        return True, None
    if type(inner) is not FileLineColLoc or type(loc) is not FileLineColLoc or \
            inner.file != loc.file or inner.line != loc.line or inner.end_line is not None or \
            inner.end_col is not None:
        return False, None
    k = inner.col - loc.col - (len(res) + 1 if res is not None else 0)
    return (0 <= k < len(first_piece)), k


def learn(p: "Parser", op: Operation, start: int, read: list[tuple[int, str, Value]]) -> None:
    """Keep the reading of ``op`` (parsed by the general path from offset ``start``; ``read``
    the operand tokens it read: offset, text, value) under its line's template, when it is a
    pure function of the template (see the module docstring)."""
    text = p.text
    end = p.prev_end
    if text.find("\n", start, end) >= 0 or end - start > MAX_LINE or op.successors or \
            len(op.results) > 1:
        return  # (not on one line: a function, a region)
    ls = text.rfind("\n", 0, start) + 1
    if ls != start and not text[ls:start].isspace():
        return
    eol = text.find("\n", end)
    body = text[start:eol if eol >= 0 else len(text)].rstrip()
    if end != start + len(body):
        return
    miss = p.memo_miss
    t = miss[1] if miss is not None and miss[0] == start else template(body)
    if t is None:
        return
    key, res, names, alias, sym = t
    if (res is None) != (not op.results) or (res is not None and not key.startswith(" = ")):
        return
    sym_at = None
    if sym is not None:  # the symbol must be the one SymbolRefAttr of the op, at its top level
        ref = SymbolRefAttr(sym)
        found = [(True, k) for k, v in op.properties.items() if v == ref] + \
            [(False, k) for k, v in op.attributes.items() if v == ref]
        if len(found) != 1 or op.regions or getattr(op, "attr_locations", None):
            return
        sym_at = found[0]
    if len(names) != len(read) or len(read) != len(op.operands):
        return
    # the names taken out are exactly the operand tokens read, in order, and the op's operands
    at = start
    parts = (key.replace(_SYM, "@" + sym, 1) if sym is not None else key).split("\n")
    if res is not None:
        at += 1 + len(res)
    starts = []
    for i, (nm, (off, tok, v)) in enumerate(zip(names, read)):
        starts.append(at)
        at += len(parts[i])
        if off != at or tok != "%" + nm or op.operands[i] is not v:
            return
        at += 1 + len(nm)
    starts.append(at)
    attr_at = _attr_at(p, op, ls, starts, parts)
    if attr_at is False:
        return
    loc = op.location
    if alias is not None:
        if type(loc) is not LocRef or loc.name != alias:
            return
    elif "loc(" in body or type(loc) is not FileLineColLoc or loc.file != p.filename or \
            (loc.line, loc.col) != p.lines.line_col(start) or loc.end_line is not None or \
            loc.end_col is not None:
        return
    inner_col = None
    if op.regions:
        ok, inner_col = _inner_location(op, res, parts[0])
        if not ok or (inner_col is None) != (alias is not None) or \
                not _clonable(op, op.regions[0].blocks[0].operations[0].location
                              if inner_col is not None else loc, set()):
            return
    dialect = p.default_dialect[-1]
    memo = p.memo.get(dialect)
    if memo is None:
        memo = p.memo[dialect] = {}
    elif len(memo) >= MAX_TEMPLATES:
        memo.clear()
    memo[key] = (op.name, op.properties or None, op.attributes or None,
                 tuple(v.type for v in op.operands), op.results[0].type if op.results else None,
                 op.regions or None, inner_col, attr_at, sym_at)
