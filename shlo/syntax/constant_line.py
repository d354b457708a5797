"""The parser's constant lines: `%c = stablehlo.constant dense<...> : tensor<...>` read at once.

Test and model files write most of their data as one-off constant lines (`%cst =
stablehlo.constant dense<"0x3F80..."> : tensor<20x20xf32>`, `%c = stablehlo.constant
dense<[1, 2]> : tensor<2xi64>`), whose literal differs from line to line, so the line memo
(:mod:`shlo.syntax.memo`) never sees one twice. :func:`constant_line` reads such a line (one
the memo does not know), ending its line and optionally in `loc(#alias)`, with one regular
expression (the literal's end found by `str.find`, as the general path does); the literal is
decoded by the same functions the general path uses (``dense.classify_literal``,
``dense.literal_to_array``) and the type by the parser's own ``parse_type``, so the op is the one
the general path builds (spec "constant": one property `value`, the result of its type, the
location of the line or the alias); a short literal's line is learned by the memo, which
reads its repetitions. Any line that does not fit (an attribute dictionary, another
location, a bad literal, a redefined name) is left to the general path, which reports errors.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..attributes import DenseElementsAttr
from ..errors import ParseError
from ..ir import Block, Operation, Value
from ..types import OpaqueType, TensorType
from .cursor import UNBOUND
from .dense import DenseLiteralError, classify_literal, literal_to_array
from .memo import learn
from .parse_locations import LocRef

if TYPE_CHECKING:  # pragma: no cover
    from .parser import Parser

__all__ = ["constant_line", "MAX_CACHED"]

MAX_CACHED = 256
"""Literals up to this many characters share one attribute per (literal, type) in a parse."""

_HEAD = " = stablehlo.constant dense<"
# the rest of the line after the literal's `>` (the first one, as the general path finds it):
# `> : TYPE [loc(#alias)]` (the type is read by parse_type)
_TAIL = re.compile(r"> : (tensor<[^\n]*?>)(?: loc\((#[\w$.\-]+)\))?[ \t\r]*(?=\n|\Z)")

_op_new = Operation.__new__
_val_new = Value.__new__


def constant_line(p: "Parser", block: Block) -> bool:
    """Read the constant line starting at the current (SSA value) token and append its op to
    ``block``; False (nothing consumed) when the line is not one this reads exactly as
    the general path would."""
    text = p.text
    start = p.start
    v = p.v
    q = start + len(v)
    if not text.startswith(_HEAD, q) or "#" in v:
        return False
    q += len(_HEAD)
    close = text.find(">", q)
    m = _TAIL.match(text, close) if close >= 0 else None
    if m is None:
        return False
    res = v[1:]
    body = text[q:close]
    ttext, alias = m.group(1, 2)
    scope = p.scopes[-1]
    if res in scope:
        return False  # (a redefinition: the general path reports it)
    cache = p.const_cache
    key = (body, ttext)
    attr = cache.get(key)
    if attr is None:
        t = p.type_cache.get(ttext)
        if t is None:
            t = _read_type(p, m.start(1), m.end(1))
        if type(t) is not TensorType or isinstance(t.element_type, OpaqueType):
            return False
        kind, payload = classify_literal(body)
        try:
            arr = literal_to_array(kind, payload, t)  # type: ignore[arg-type]
        except (DenseLiteralError, ValueError, OverflowError, TypeError):
            return False
        attr = DenseElementsAttr(t, arr, hex=(kind == "hex"))  # type: ignore[arg-type]
        if len(body) <= MAX_CACHED:
            cache[key] = attr
    op = _op_new(Operation)
    op.name = "stablehlo.constant"
    op.operands = []
    op.properties = {"value": attr}
    op.attributes = {}
    op.successors = []
    op.regions = []
    op.parent = block
    r = _val_new(Value)
    r.type = attr.type
    r.owner = op
    r.index = 0
    r.name = res
    op.results = [r]
    values = p.values
    scope[res] = values.get(res, UNBOUND)
    values[res] = r
    if alias is None:
        op.location = p.location_at(start)
    else:
        loc = p.locrefs.get(alias)
        if loc is None:
            loc = p.locrefs[alias] = LocRef(alias)
            p.has_loc_refs = True
        op.location = loc
    block.operations.append(op)
    p.reset(m.end(2) + 1 if alias is not None else m.end(1))  # (prev_end: the last token's)
    if len(body) <= MAX_CACHED:  # (short literals repeat, as JAX's `dense<0.000000e+00>`: the
        learn(p, op, start, [])  # memo reads their next lines in its loop)
    return True


def _read_type(p: "Parser", at: int, end: int) -> object:
    """The type spelled at ``text[at:end]`` read by the parser (None when it does not read as
    exactly that text); the parser's position is kept."""
    state = p.save()
    prev = p.prev_end
    try:
        p.reset(at)
        t = p.parse_type()
        ok = p.prev_end == end
    except ParseError:
        ok = False
    p.restore(state)
    p.prev_end = prev
    return t if ok else None

