"""The parser's fast path: common one-line ops read by one regular expression per line.

JAX prints most ops of a model on one line each in a few shapes: `%3 = stablehlo.add %1, %2 :
tensor<4xf32>`, `%c = stablehlo.constant dense<1.0> : tensor<f32>`, `%5 = stablehlo.compare  LT,
%3, %4,  FLOAT : (...) -> ...`, `%6 = stablehlo.broadcast_in_dim %5, dims = [0] : (...) -> ...`,
optionally followed by `loc(#alias)`. :func:`fast_ops` reads runs of such lines with one match of
:data:`_FAST_LINE` each, building exactly the IR the general path builds (and the same
locations); hex constants are located with `str.find` and decoded with `bytes.fromhex`. Any line
that does not fit (an attribute dict, a region, an unusual type or spelling) ends the run and is
left to the general path, which also reports every error.

Which ops may be read so, and how, is derived from each op's pretty form
(``registry.lookup(name).syntax``, :func:`shape_of`, cached per op name): a declarative format
says it through its directives (`[OPERAND, ATTRDICT, types("same")]` is "same1",
`[OPERAND, COMMA, *named("dims", "broadcast_dimensions", "i64list"), ATTRDICT,
types("functional")]` is "functional" with the attribute `dims = [...]` in the middle); a
hand-written pair may name its shape (``Format(..., fast=FAST_CONSTANT)``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING, Any

from ..attributes import ENUM_CASES, DenseArrayAttr, DenseElementsAttr, EnumAttr, IntegerAttr
from ..errors import ParseError
from ..ir import Block, FileLineColLoc, Operation, Value
from ..registry import lookup
from ..types import _ELEMENT_TYPES, FunctionType, TensorType, Type
from .cursor import UNBOUND
from .dense import DenseLiteralError, classify_literal, literal_to_array
from .directives import ATTRDICT, COMMA, FAST_CONSTANT, OPERAND, OPERANDS, OPERANDS_COMMA
from .lexer import VALUE
from .parse_locations import LocRef

if TYPE_CHECKING:  # pragma: no cover
    from .parser import Parser

__all__ = ["fast_ops", "shape_of", "derive_shape", "FAST_CONSTANT"]

I64 = _ELEMENT_TYPES["i64"]
_MISSING = object()

# --- the line ------------------------------------------------------------------------------------

_ID = r"%[\w$.\-]+"
_OPND = _ID + r"(?:#\d+)?"
_SIG = r" : ([^\n\"{}@#]*?)"
_LOC_EOL = r"(?: loc\((#[\w$.\-]+)\))?[ \t\r]*(?=\n|\Z)\s*"
# One line holding one op: `%r = name <tail>`, where the tail is that of a constant
# (`dense<...> : type`), of an enum-first op (`LT, %a, %b[, FLOAT] : signature`) or the common
# `operands [, kw = value] : signature` shape, optionally followed by a location alias reference
# `loc(#loc3)` (JAX's debug-info output); the whitespace up to the *next* line's first token is
# consumed too, so that consecutive lines chain without the lexer.
_FAST_LINE = re.compile(
    r"%([\w$.\-]+) = ([a-z_]+\.[a-z_0-9]+) "
    r"(?:"
    r'dense<(?:("0x)|([^>"\n]*)> : (tensor<[0-9x?]*[a-z0-9]+>)' + _LOC_EOL + ")"
    r"| ?([A-Z]+), (" + _OPND + r"), (" + _OPND + r")(?:,  ?([A-Z]+))?" + _SIG +
    _LOC_EOL +
    r"|(" + _OPND + r"(?:, " + _OPND + r")*)?((?:,? ?[a-z_]+ = [^:\n\"{}]*?)?)" + _SIG +
    _LOC_EOL + r")")
_FAST_CONST_TYPE = re.compile(r"> : (tensor<[0-9x?]*[a-z0-9]+>)" + _LOC_EOL)

# --- the shapes, derived from the ops' formats --------------------------------------------------

# (at most 18 digits: always an i64; longer numbers take the general path, which checks them)
_INTS = r"(\[(?:-?\d{1,18}(?:, -?\d{1,18})*)?\])"


def _i64_list(text: str) -> Any:
    body = text.strip()[1:-1].strip()
    return DenseArrayAttr(I64, tuple(int(x) for x in body.split(",")) if body else ())


def _i64(text: str) -> Any:
    return IntegerAttr(int(text), I64)


# attribute kinds of the directive engine (directives.parse_attr_kind) the middle may spell
_MID_VALUES = {"i64list": (_INTS, _i64_list), "i64": (r"(\d{1,18})", _i64)}
_SAME_KINDS = {"same1": 1, "same2": 2, "same3": 3}
_OPERAND_COUNT = {"same1": 1, "same2": 2, "same3": 3, "select": 3, "results0": 0, "compare": 2}
_SHAPES: dict[str, tuple | None] = {}


def shape_of(name: str) -> tuple | None:
    """The fast-path shape of op ``name`` (None: the general path only), cached."""
    shape = _SHAPES.get(name, _MISSING)
    if shape is _MISSING:
        d = lookup(name)
        shape = derive_shape(d.syntax, name) if d is not None and d.syntax is not None else None
        _SHAPES[name] = shape  # type: ignore[assignment]
    return shape  # type: ignore[return-value]


def derive_shape(fmt: Any, name: str) -> tuple | None:
    """``(kind, extra)`` for the pretty form ``fmt`` of op ``name`` when the fast path can read
    it, else None.

    Kinds: `constant` (``fmt.fast``); `same1`..`same3` (n operands, `types("same")`);
    `functional` (operands, `(types) -> type`); `select` (`types("select")`); `results0` (no
    operands, `types("results")`); `compare` (an enum, two operands, an optional second enum:
    ``extra`` is the op's dialect and the attributes). For the operand shapes, ``extra`` is None
    or the attribute spelled between the operands and the signature: (regex, ((name,
    converter),))."""
    if getattr(fmt, "fast", None) == FAST_CONSTANT:
        return (FAST_CONSTANT, None)
    ds = getattr(fmt, "directives", None)
    if not ds or len(ds) < 2 or tuple(ds[-2]) != ATTRDICT or ds[-1][0] != "types":
        return None
    tkind = ds[-1][1]
    head = [tuple(d) for d in ds[:-2]]
    compare = _compare_shape(head, tkind, name.partition(".")[0])
    if compare is not None:
        return compare
    n = 0
    variadic = False
    mid = None
    i = 0
    while i < len(head):
        d = head[i]
        if d == OPERAND:
            n += 1
            i += 1
            if i < len(head):
                if head[i] != COMMA or i + 1 == len(head):
                    return None
                i += 1
        elif d == OPERANDS:
            if i + 1 != len(head):
                return None
            variadic = True
            i += 1
        elif d == OPERANDS_COMMA:
            if i + 1 == len(head) or head[i + 1][0] != "kw":
                return None
            variadic = True
            i += 1
        elif d[0] == "kw" and i + 3 == len(head) and head[i + 1] == ("p", "=") and \
                head[i + 2][0] == "attr" and head[i + 2][2] in _MID_VALUES:
            value_re, conv = _MID_VALUES[head[i + 2][2]]
            prefix = ", " if n or variadic else ""
            mid = (re.compile(prefix + re.escape(d[1]) + " = " + value_re),
                   ((head[i + 2][1], conv),))
            i += 3
        else:
            return None
    if tkind == "same" and not variadic and 1 <= n <= 3:
        return (f"same{n}", mid)
    if tkind == "functional" and (n or variadic):
        return ("functional", mid)
    if tkind == "select" and variadic and n == 0 and mid is None:
        return ("select", None)
    if tkind == "results" and not n and not variadic:
        return ("results0", mid)
    return None


def _compare_shape(head: list[tuple], tkind: str, dialect: str) -> tuple | None:
    """`[attr(a, "enum:e"), COMMA, OPERAND, COMMA, OPERAND, opt(b, COMMA, attr(b, "enum:f"))]`
    with a functional signature: ("compare", (dialect, a, e, b, f)); the enums are the op's
    dialect's (as ``directives.parse_attr_kind`` makes them)."""
    if tkind != "functional" or len(head) != 6 or head[1:5] != [COMMA, OPERAND, COMMA, OPERAND]:
        return None
    first, last = head[0], head[5]
    if first[0] != "attr" or not first[2].startswith("enum:") or last[0] != "opt":
        return None
    inner = [tuple(d) for d in last[2]]
    if len(inner) != 2 or inner[0] != COMMA or inner[1][0] != "attr" or \
            inner[1][1] != last[1] or not inner[1][2].startswith("enum:"):
        return None
    return ("compare", (dialect, first[1], first[2][5:], last[1], inner[1][2][5:]))


_ENUM_CACHE: dict[tuple[str, str, str], EnumAttr] = {}


def _enum_attr(dialect: str, enum: str, value: str) -> EnumAttr | None:
    """The enum attribute (interned), or None for a case the enum does not have."""
    key = (dialect, enum, value)
    a = _ENUM_CACHE.get(key)
    if a is None:
        cases = ENUM_CASES.get(enum)
        if cases is not None and value not in cases:
            return None
        a = _ENUM_CACHE[key] = EnumAttr(dialect, enum, value)
    return a


# --- reading the lines ---------------------------------------------------------------------------

_op_new = Operation.__new__
_new_loc = object.__new__
_val_new = Value.__new__


def fast_ops(p: "Parser", block: Block) -> int:
    """Read as many consecutive one-line ops of a fast shape as possible, starting at the
    current (VALUE) token, appending them to ``block``; returns how many were read (0: nothing
    consumed). Builds exactly the IR the general path builds; any line that does not fit is left
    to the general path."""
    text = p.text
    pos = p.m.start(VALUE)
    values = p.values
    scope = p.scopes[-1]
    sig_cache = p.sig_cache
    fname = p.filename
    ops = block.operations
    match = _FAST_LINE.match
    shapes = _SHAPES
    starts = p.lines.starts()
    if starts[-1] != len(text) + 1:
        starts.append(len(text) + 1)  # sentinel: the loop below needs no bounds check
    line_i = bisect_right(starts, pos) - 1
    n = 0
    while True:
        m = match(text, pos)
        if m is None:
            break
        res, name = m.group(1, 2)
        shape = shapes.get(name, _MISSING)
        if shape is _MISSING:
            shape = shape_of(name)
        if shape is None:
            break
        kind, extra = shape
        props: dict[str, Any] = {}
        alias = None
        if kind == FAST_CONSTANT:
            got = _fast_constant(p, m)
            if got is None:
                break
            attr, end, alias = got
            props["value"] = attr
            operands: list[Value] = []
            rtypes = [attr.type]
        else:
            if kind == "compare":
                direction, a, b, ctype, sig = m.group(7, 8, 9, 10, 11)
                if direction is None:
                    break
                dialect, dir_name, dir_enum, type_name, type_enum = extra
                da = _enum_attr(dialect, dir_enum, direction)
                if da is None:
                    break
                props[dir_name] = da
                if ctype is not None:
                    ta = _enum_attr(dialect, type_enum, ctype)
                    if ta is None:
                        break
                    props[type_name] = ta
                args = (a, b)
                sig_off = m.start(11)
                alias = m.group(12)
            else:
                args_text, mid, sig = m.group(13, 14, 15)
                if sig is None:
                    break
                args = args_text.split(", ") if args_text else ()
                if mid:
                    if extra is None:
                        break
                    mm = extra[0].fullmatch(mid)
                    if mm is None:
                        break
                    for (attr_name, conv), g in zip(extra[1], mm.groups()):
                        props[attr_name] = conv(g)
                elif extra is not None:
                    break
                sig_off = m.start(15)
                alias = m.group(16)
            operands = []
            for a in args:
                v = values.get(a[1:])
                if v is None or type(v) is list:
                    operands = None  # type: ignore[assignment]
                    break
                operands.append(v)
            if operands is None:
                break
            parsed = sig_cache.get(sig)
            if parsed is None:
                parsed = _parse_signature(p, sig, sig_off)
                if parsed is None:
                    break
            rtypes = None
            if type(parsed) is FunctionType:  # `(operand types) -> result`
                ins = parsed.inputs
                if len(ins) == len(operands) and len(parsed.results) == 1 and \
                        kind != "results0":
                    for v, t in zip(operands, ins):
                        if v.type is not t and v.type != t:
                            break
                    else:
                        rtypes = parsed.results
            elif type(parsed) is TensorType and kind in _SAME_KINDS and \
                    len(operands) == _SAME_KINDS[kind]:
                for v in operands:
                    if v.type is not parsed and v.type != parsed:
                        break
                else:
                    rtypes = (parsed,)
            else:
                rtypes = _fast_result_types(kind, parsed, operands)  # type: ignore
            if rtypes is None:
                break
            end = m.end()
        if res in scope:
            break
        start = m.start(1) - 1
        # the Operation and its result, built without the constructors' generality
        op = _op_new(Operation)
        r = _val_new(Value)
        r.type = rtypes[0]  # type: ignore[index]
        r.owner = op
        r.index = 0
        r.name = res
        op.name = name
        op.operands = operands
        op.results = [r]
        op.properties = props
        op.attributes = {}
        op.regions = []
        op.successors = []
        op.parent = block
        while starts[line_i + 1] <= start:
            line_i += 1
        if alias is None:
            loc = _new_loc(FileLineColLoc)
            loc.__dict__.update(file=fname, line=line_i + 1, col=start - starts[line_i] + 1,
                                end_line=None, end_col=None)
            op.location = loc
        else:
            op.location = LocRef(alias)
            p.has_loc_refs = True
        ops.append(op)
        scope[res] = values.get(res, UNBOUND)
        values[res] = r
        n += 1
        pos = end
    if n:
        p.reset(pos)
    return n


def _fast_constant(p: "Parser", m: Any) -> tuple[DenseElementsAttr, int, str | None] | None:
    """The value of a fast-path `dense<...> : tensor<...>` line, where the line ends, and its
    location alias (None when the line does not fit)."""
    text = p.text
    if m.group(3) is not None:  # a hex string: find its end without a regex scan
        hs = m.end(3)
        he = text.find('"', hs)
        if he < 0:
            return None
        tm = _FAST_CONST_TYPE.match(text, he + 1)
        if tm is None:
            return None
        t = p.type_cache.get(tm.group(1))
        if t is None:
            return None
        kind, payload = classify_literal(text[hs - 3:he + 1])
        if kind != "hex":
            return None
        try:
            arr = literal_to_array(kind, payload, t)  # type: ignore[arg-type]
        except (DenseLiteralError, ValueError):
            return None
        return DenseElementsAttr(t, arr, hex=True), tm.end(), tm.group(2)  # type: ignore
    body, ttext, alias = m.group(4, 5, 6)
    if body is None:
        return None
    end = m.end()
    key = (body, ttext)
    attr = p.const_cache.get(key)
    if attr is not None:
        return attr, end, alias
    t = p.type_cache.get(ttext)
    if t is None:
        return None
    try:
        arr = literal_to_array(*classify_literal(body), t)  # type: ignore[arg-type]
    except (DenseLiteralError, ValueError, OverflowError, TypeError):
        return None
    attr = DenseElementsAttr(t, arr)  # type: ignore[arg-type]
    if len(body) < 256:
        p.const_cache[key] = attr
    return attr, end, alias


def _parse_signature(p: "Parser", sig: str, offset: int) -> Any:
    """Parse the type signature text of a fast-path op (cached by its text)."""
    st = p.save()
    try:
        p.reset(offset)
        types = p.type_list()
        ok = p.prev_end == offset + len(sig)
    except ParseError:
        ok = False
    p.restore(st)
    if not ok:
        return None
    parsed = types[0] if len(types) == 1 else tuple(types)
    p.sig_cache[sig] = parsed
    return parsed


def _fast_result_types(kind: str, parsed: Any, operands: list[Value]) -> list[Type] | None:
    n = _OPERAND_COUNT.get(kind)
    if n is not None and len(operands) != n:
        return None
    if kind == "results0":
        return [parsed] if isinstance(parsed, TensorType) else None
    if kind == "select":
        if type(parsed) is not tuple or len(parsed) != 2:
            if isinstance(parsed, FunctionType):
                return _fn_results(parsed, operands)
            return None
        want = (parsed[0], parsed[1], parsed[1])
        for v, t in zip(operands, want):
            if v.type is not t and v.type != t:
                return None
        return [parsed[1]]
    if isinstance(parsed, FunctionType):
        return _fn_results(parsed, operands)
    if kind == "functional" or kind == "compare" or type(parsed) is tuple:
        return None
    for v in operands:
        if v.type is not parsed and v.type != parsed:
            return None
    return [parsed]


def _fn_results(ft: FunctionType, operands: list[Value]) -> list[Type] | None:
    ins = ft.inputs
    if len(ins) != len(operands) or len(ft.results) != 1:
        return None
    for v, t in zip(operands, ins):
        if v.type is not t and v.type != t:
            return None
    return list(ft.results)
