"""The directive engine of declarative op formats (upstream's `assemblyFormat`), knowing no op.

An op declares its pretty form next to its kernel, either as directives::

    define("stablehlo.cbrt", syntax=declarative(OPERAND, ATTRDICT, types("same")))

or as a hand-written parse/print pair wrapped in :class:`Format`. The directives mirror the
upstream `assemblyFormat` strings of `StablehloOps.td`, `ChloOps.td` and `CheckOps.td`:

* ``("operand",)`` one SSA operand; ``("operands",)`` a comma separated (possibly empty) list;
  ``("operands_comma",)`` operands each followed by `,` (upstream `VariadicOperandWithAttribute`);
* ``("kw", "dim")`` a keyword, ``("p", ",")`` punctuation;
* ``("attr", name, kind)`` an inherent attribute printed by a custom directive (`kind` names the
  spelling: `i64` bare integer, `i64list` `[1, 2]` as `array<i64>`, `enum:comparison_direction`
  bare enum case, `str`, `bool`, `symbol` ...);
* ``("opt", anchor, directives)`` an optional group, printed when attribute ``anchor`` is set;
* ``("attrdict",)`` the remaining attributes `{...}`;
* ``("types", kind)`` the type signature after `:` (`same` = SameOperandsAndResultType,
  `functional` = `(operands) -> results`, `results`, `select`, `tuple`, `pairwise`, `complex`,
  `variadic_same`, `return`, `chlo_unary`, `chlo_binary`, `operand_types`).

Pretty-parsed attributes that are inherent to the op (its definition's ``inherent``; for ops shlo
does not know, any name without a `.`) go to ``Operation.properties``, the others to
``Operation.attributes``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable


from ..attributes import (
    BoolAttr, DenseArrayAttr, DenseElementsAttr, EnumAttr, FloatAttr, IntegerAttr, StringAttr,
)
from ..ir import Operation, Value
from ..types import (
    ComplexType, FunctionType, TensorType, TupleType, Type, _ELEMENT_TYPES,
)
from ..registry import lookup
from .lexer import BARE, FLOAT, INTEGER, PUNCT, VALUE, int_value

if TYPE_CHECKING:  # pragma: no cover
    from .parser import Parser
    from .printer import Printer

__all__ = [
    "Format", "declarative", "route_attributes", "parse_attrdict", "parse_attrdict_kw",
    "check_attr_kind", "parse_attr_kind", "print_attr_kind", "parse_int_list", "print_types",
    "types_functional", "types_pairwise", "types_same", "make_declarative", "ParseFn", "PrintFn", "OPERAND", "OPERANDS",
    "OPERANDS_COMMA", "ATTRDICT", "COMMA", "COLON", "kw", "p_", "attr", "opt", "types", "named",
]

I64 = _ELEMENT_TYPES["i64"]
I32 = _ELEMENT_TYPES["i32"]
I1 = _ELEMENT_TYPES["i1"]
UI64 = _ELEMENT_TYPES["ui64"]
F32 = _ELEMENT_TYPES["f32"]
F64 = _ELEMENT_TYPES["f64"]

ParseFn = Callable[["Parser", str, int, int], Operation]
PrintFn = Callable[["Printer", Operation], "str | None"]



def route_attributes(p: "Parser", name: str, items: list[tuple[str, Any]],
                     props: dict[str, Any], attrs: dict[str, Any]) -> None:
    """Put attr-dict entries of a pretty op into properties (inherent) or attributes."""
    d = lookup(name)
    inherent = d.inherent if d is not None else None
    for k, v in items:
        if inherent is not None:
            (props if k in inherent else attrs)[k] = v
        else:
            (attrs if "." in k else props)[k] = v


def parse_attrdict(p: "Parser", name: str, props: dict[str, Any], attrs: dict[str, Any]) -> None:
    if p.v == "{" and p.k == PUNCT:
        route_attributes(p, name, p.dict_items(), props, attrs)


def parse_attrdict_kw(p: "Parser", name: str, props: dict[str, Any], attrs: dict[str, Any]) -> None:
    if p.v == "attributes" and p.k == BARE:
        p._advance()
        route_attributes(p, name, p.dict_items(), props, attrs)


# =================================================================================================
# Parsing helpers for type signatures
# =================================================================================================


def _assign_fn_type(p: "Parser", ft: FunctionType, operands: list[Value], off: int) -> list[Type]:
    p.check_types(operands, ft.inputs, off)
    return list(ft.results)


def types_same(p: "Parser", operands: list[Value]) -> list[Type]:
    """custom<SameOperandsAndResultType>: `T` (all the same) or `(T1, T2) -> R`."""
    off = p.start
    t = p.parse_type()
    if isinstance(t, FunctionType):
        res = _assign_fn_type(p, t, operands, off)
        if len(res) != 1:
            p.error("expected single output", off, found=False)
        return res
    for v in operands:
        if v.type is not t and v.type != t:
            p.check_types(operands, [t] * len(operands), off)
    return [t]


def types_functional(p: "Parser", operands: list[Value]) -> list[Type]:
    off = p.start
    t = p.parse_type()
    if not isinstance(t, FunctionType):
        p.error("expected functional type", off, found=False)
    return _assign_fn_type(p, t, operands, off)


def _types_results(p: "Parser", operands: list[Value]) -> list[Type]:
    return p.type_list()


def _types_select(p: "Parser", operands: list[Value]) -> list[Type]:
    off = p.start
    types = p.type_list()
    if len(types) == 1 and isinstance(types[0], FunctionType):
        res = _assign_fn_type(p, types[0], operands, off)
        if len(res) != 1:
            p.error("expected single output", off, found=False)
        return res
    if len(types) != 2:
        p.error("expected functional type or list of two types", off, found=False)
    p.check_types(operands, [types[0], types[1], types[1]], off)
    return [types[1]]


def _types_tuple(p: "Parser", operands: list[Value]) -> list[Type]:
    off = p.start
    t = p.parse_type()
    if not isinstance(t, TupleType):
        p.error("expected tuple type", off, found=False)
    p.check_types(operands, t.types, off)
    return [t]


def types_pairwise(p: "Parser", operands: list[Value]) -> list[Type]:
    off = p.start
    types = p.type_list()
    p.check_types(operands, types, off)
    return types


def _types_complex(p: "Parser", operands: list[Value]) -> list[Type]:
    off = p.start
    t = p.parse_type()
    if isinstance(t, FunctionType):
        res = _assign_fn_type(p, t, operands, off)
        if len(res) != 1:
            p.error("expected single output", off, found=False)
        return res
    if not isinstance(t, TensorType) or not isinstance(t.element_type, ComplexType):
        p.error("expected tensor with complex element type", off, found=False)
    real = TensorType(t.shape, t.element_type.element, t.encoding)  # type: ignore[union-attr]
    p.check_types(operands, [real] * len(operands), off)
    return [t]


def _types_variadic_same(p: "Parser", operands: list[Value]) -> list[Type]:
    return types_same(p, operands)


def _types_chlo_unary(p: "Parser", operands: list[Value]) -> list[Type]:
    """`T -> R` (chlo unary ops print `type($operand) -> type($result)`)."""
    off = p.start
    t = p.parse_type()
    if isinstance(t, FunctionType):
        return _assign_fn_type(p, t, operands, off)
    p.check_types(operands, [t], off)
    p.expect("->")
    return p.result_types()


def _types_chlo_binary(p: "Parser", operands: list[Value]) -> list[Type]:
    """`T1, T2 -> R`."""
    off = p.start
    t = p.parse_type()
    if isinstance(t, FunctionType):
        return _assign_fn_type(p, t, operands, off)
    types = [t]
    while p.accept(","):
        types.append(p.parse_type())
    p.check_types(operands, types, off)
    p.expect("->")
    return p.result_types()


def _types_operand_types(p: "Parser", operands: list[Value]) -> list[Type]:
    off = p.start
    types = p.type_list()
    if len(types) == 1 and len(operands) > 1:
        types = types * len(operands)
    p.check_types(operands, types, off)
    return []


_TYPE_PARSERS = {
    "same": types_same, "functional": types_functional, "results": _types_results,
    "select": _types_select, "tuple": _types_tuple, "pairwise": types_pairwise,
    "complex": _types_complex, "variadic_same": _types_variadic_same,
    "chlo_unary": _types_chlo_unary, "chlo_binary": _types_chlo_binary,
    "operand_types": _types_operand_types, "operand_types_same": _types_operand_types,
}

# =================================================================================================
# Attribute directive kinds: parse -> value, check (printable?) and print
# =================================================================================================


def parse_int_list(p: "Parser") -> tuple[int, ...]:
    p.expect("[")
    vals: list[int] = []
    if p.v != "]":
        vals.append(p.integer())
        while p.accept(","):
            vals.append(p.integer())
    p.expect("]")
    return tuple(vals)


def parse_attr_kind(p: "Parser", kind: str, op_name: str) -> Any:
    if kind == "i64":
        return IntegerAttr(p.integer(), I64)
    if kind in ("i32", "ui64"):  # as MLIR reads `N : i32` (signless: up to 2^32 - 1) / `ui64`
        t = I32 if kind == "i32" else UI64
        if p.k != INTEGER:
            p.error("expected integer value")
        v = p._typed_integer(p.v, t, p.start)
        p._advance()
        return IntegerAttr(v, t)
    if kind == "i64list":
        return DenseArrayAttr(I64, parse_int_list(p))
    if kind.startswith("enum:"):
        enum = kind[5:]
        if p.k != BARE:
            p.error(f"expected {enum} value")
        p.check_enum(enum, p.v)
        return EnumAttr(op_name.split(".", 1)[0], enum, p.bare())
    if kind == "str":
        return StringAttr(p.string())
    if kind == "bool":
        v = p.bare()
        if v not in ("true", "false"):
            p.error("expected 'true' or 'false'", found=False)
        return BoolAttr(v == "true")
    if kind == "f64":
        if p.k == FLOAT:
            v = float(p.v)
        elif p.k == INTEGER:
            v = float(int_value(p.v))
        else:
            p.error("expected floating point value")
        p._advance()
        return FloatAttr(v, F64)
    if kind == "symbol":
        return StringAttr(p.symbol_name())
    if kind == "dense":
        if p.v != "dense":
            return p.parse_attribute()
        return p.dense_attr()
    if kind == "attr":
        return p.parse_attribute()
    raise AssertionError(kind)


def check_attr_kind(a: Any, kind: str) -> bool:
    if kind == "i64":
        return type(a) is IntegerAttr and (a.type is None or a.type == I64)
    if kind == "i32":
        return type(a) is IntegerAttr and a.type == I32
    if kind == "ui64":
        return type(a) is IntegerAttr and a.type == UI64
    if kind == "i64list":
        return type(a) is DenseArrayAttr and a.element_type == I64
    if kind.startswith("enum:"):
        return type(a) is EnumAttr and a.enum == kind[5:] and a.value.isidentifier()
    if kind == "str" or kind == "symbol":
        return type(a) is StringAttr
    if kind == "bool":
        return type(a) is BoolAttr
    if kind == "f64":
        return type(a) is FloatAttr and a.type == F64
    if kind == "dense":
        return isinstance(a, DenseElementsAttr)
    return True


def print_attr_kind(pr: "Printer", a: Any, kind: str) -> str:
    if kind in ("i64", "i32", "ui64"):
        return str(a.value)
    if kind == "i64list":
        return "[" + ", ".join(str(int(x)) for x in a.values) + "]"
    if kind.startswith("enum:"):
        return a.value
    if kind == "str":
        return pr.attr(a)
    if kind == "bool":
        return "true" if a.value else "false"
    if kind == "f64":
        return pr.float(a.value, None)
    if kind == "symbol":
        return pr.symbol(a.value)
    return pr.attr(a)


# =================================================================================================
# The declarative interpreter
# =================================================================================================


def make_declarative(directives: list[tuple]) -> tuple[ParseFn, PrintFn]:
    consumed = set()
    for d in directives:
        if d[0] == "attr":
            consumed.add(d[1])
        elif d[0] == "opt":
            for dd in d[2]:
                if dd[0] == "attr":
                    consumed.add(dd[1])
    tkinds = [d[1] for d in directives if d[0] == "types"]
    tkind = tkinds[0] if tkinds else None

    def parse_fn(p: "Parser", name: str, nres: int, start: int) -> Operation:
        operands: list[Value] = []
        props: dict[str, Any] = {}
        attrs: dict[str, Any] = {}
        res = _run_parse(p, name, directives, operands, props, attrs)
        if tkind == "return":
            if p.v == ":" and p.k == PUNCT:
                p._advance()
                off = p.start
                p.check_types(operands, p.type_list(), off)
            elif operands:
                p.error("expected ':' and the operand types")
        return Operation(name, operands, res or [], props, attrs)

    def print_fn(pr: "Printer", op: Operation) -> str | None:
        if op.regions or op.successors:
            return None
        for d in directives:
            if d[0] == "attr":
                a = op.attr(d[1])
                if a is None or not check_attr_kind(a, d[2]):
                    return None
            elif d[0] == "opt":
                anchor = op.attr(d[1])
                if anchor is not None:
                    for dd in d[2]:
                        if dd[0] == "attr" and not check_attr_kind(op.attr(dd[1]), dd[2]):
                            return None
        out: list[str] = []
        if _run_print(pr, op, directives, out, consumed) is None:
            return None
        return "".join(out)

    return parse_fn, print_fn


def _run_parse(p: "Parser", name: str, directives: list[tuple], operands: list[Value],
               props: dict[str, Any], attrs: dict[str, Any]) -> list[Type] | None:
    res: list[Type] | None = None
    for d in directives:
        kind = d[0]
        if kind == "operand":
            operands.append(p.operand())
        elif kind == "operands":
            operands.extend(p.operand_list())
        elif kind == "operands_comma":
            while p.k == VALUE:
                operands.append(p.operand())
                p.expect(",")
        elif kind == "p":
            p.expect(d[1])
        elif kind == "kw":
            p.keyword(d[1])
        elif kind == "attr":
            props[d[1]] = parse_attr_kind(p, d[2], name)
        elif kind == "opt":
            first = d[2][0]
            present = (first[0] == "p" and p.v == first[1] and p.k == PUNCT) or \
                (first[0] == "kw" and p.v == first[1] and p.k == BARE)
            if present:
                res = _run_parse(p, name, list(d[2]), operands, props, attrs) or res
        elif kind == "attrdict":
            parse_attrdict(p, name, props, attrs)
        elif kind == "attrdict_kw":
            parse_attrdict_kw(p, name, props, attrs)
        elif kind == "types":
            if d[1] == "return":
                continue
            p.expect(":")
            res = _TYPE_PARSERS[d[1]](p, operands)
        else:  # pragma: no cover
            raise AssertionError(kind)
    return res


def _run_print(pr: "Printer", op: Operation, directives: list[tuple], out: list[str],
               consumed: set[str], oi: int = 0, top: bool = True) -> int | None:
    """Append the pretty text of ``directives``; returns the next operand index (None when the
    op does not fit). Spacing follows MLIR: no space before `(`, `[`, `)`, `]`, `,` and none
    after `(` or `[`."""
    n_ops = len(op.operands)
    for d in directives:
        kind = d[0]
        glue = bool(out) and out[-1][-1:] in ("(", "[")
        sp = "" if glue else " "
        if kind == "operand":
            if oi >= n_ops:
                return None
            out.append(sp + pr.val(op.operands[oi]))
            oi += 1
        elif kind == "operands":
            rest = op.operands[oi:]
            out.append(sp + ", ".join(pr.val(v) for v in rest))  # upstream keeps the space
            oi = n_ops
        elif kind == "operands_comma":
            for v in op.operands[oi:]:
                out.append(sp + pr.val(v) + ",")
                sp = " "
            oi = n_ops
        elif kind == "p":
            t = d[1]
            out.append(t if t in (",", ")", "]", "(", "[") or glue else " " + t)
        elif kind == "kw":
            out.append(sp + d[1])
        elif kind == "attr":
            out.append(sp + print_attr_kind(pr, op.attr(d[1]), d[2]))
        elif kind == "opt":
            if op.attr(d[1]) is not None:
                r = _run_print(pr, op, list(d[2]), out, consumed, oi, False)
                if r is None:
                    return None
                oi = r
        elif kind in ("attrdict", "attrdict_kw"):
            s = pr.attr_dict(op, consumed)
            if s:
                out.append((" attributes" if kind == "attrdict_kw" else "") + s)
        elif kind == "types":
            s = print_types(pr, op, d[1])
            if s is None:
                return None
            if s:
                out.append(" : " + s)
    if top and oi != n_ops:
        return None
    return oi


def print_types(pr: "Printer", op: Operation, kind: str) -> str | None:
    ots = [v.type for v in op.operands]
    rts = [v.type for v in op.results]
    if kind == "same" or kind == "variadic_same":
        if len(rts) != 1:
            return None
        r = rts[0]
        if all(t == r for t in ots):
            return pr.type(r)
        return pr.functional(ots, rts)
    if kind == "functional":
        return pr.functional(ots, rts)
    if kind == "results":
        if ots or not rts:
            return None
        return ", ".join(pr.type(t) for t in rts)
    if kind == "select":
        if len(ots) != 3 or len(rts) != 1:
            return None
        if ots[1] != rts[0] or ots[2] != rts[0]:
            return pr.functional(ots, rts)
        return f"{pr.type(ots[0])}, {pr.type(rts[0])}"
    if kind == "tuple":
        if len(rts) != 1 or not isinstance(rts[0], TupleType) or tuple(ots) != rts[0].types:
            return None
        return pr.type(rts[0])
    if kind == "pairwise":
        if ots != rts:
            return None
        return ", ".join(pr.type(t) for t in ots)
    if kind == "complex":
        if len(ots) != 2 or len(rts) != 1:
            return None
        r = rts[0]
        if isinstance(r, TensorType) and isinstance(r.element_type, ComplexType):
            real = TensorType(r.shape, r.element_type.element, r.encoding)
            if ots[0] == real and ots[1] == real:
                return pr.type(r)
        return pr.functional(ots, rts)
    if kind == "return":
        if rts:
            return None
        return ", ".join(pr.type(t) for t in ots)
    if kind == "chlo_unary":
        if len(ots) != 1 or not rts:
            return None
        if len(rts) == 1:
            return f"{pr.type(ots[0])} -> {pr.type(rts[0])}"
        return f"{pr.type(ots[0])} -> ({', '.join(pr.type(t) for t in rts)})"
    if kind == "chlo_binary":
        if len(rts) != 1:
            return None
        return f"{', '.join(pr.type(t) for t in ots)} -> {pr.type(rts[0])}"
    if kind == "operand_types":
        if rts:
            return None
        return ", ".join(pr.type(t) for t in ots)
    if kind == "operand_types_same":
        if rts or not ots or any(t != ots[0] for t in ots):
            return None
        return pr.type(ots[0])
    raise AssertionError(kind)


# =================================================================================================
# Directive shorthands and the table
# =================================================================================================

OPERAND = ("operand",)
OPERANDS = ("operands",)
OPERANDS_COMMA = ("operands_comma",)
ATTRDICT = ("attrdict",)
COMMA = ("p", ",")
COLON = ("p", ":")


def kw(x: str) -> tuple:
    return ("kw", x)


def p_(x: str) -> tuple:
    return ("p", x)


def attr(name: str, kind: str) -> tuple:
    return ("attr", name, kind)


def opt(anchor: str, *items: tuple) -> tuple:
    return ("opt", anchor, items)


def types(kind: str) -> tuple:
    return ("types", kind)


def named(keyword: str, name: str, kind: str) -> list[tuple]:
    return [kw(keyword), p_("="), attr(name, kind)]


class Format:
    """An op's pretty form: a parse/print pair and the attributes it spells (the registry's
    ``Syntax``).

    ``directives`` are the directives a declarative format was made from (None for a
    hand-written pair).
    """

    __slots__ = ("parse", "print", "attrs", "directives")

    def __init__(self, parse: ParseFn, print: PrintFn | None, attrs: frozenset[str],
                 directives: tuple[tuple, ...] | None = None) -> None:
        self.parse = parse
        self.print = print or (lambda pr, op: None)
        self.attrs = attrs
        self.directives = directives


def declarative(*directives: tuple) -> Format:
    """The :class:`Format` described by ``directives`` (see the module docstring)."""
    parse_fn, print_fn = make_declarative(list(directives))
    attrs = set()
    for d in directives:
        if d[0] == "attr":
            attrs.add(d[1])
        elif d[0] == "opt":
            attrs.update(dd[1] for dd in d[2] if dd[0] == "attr")
    return Format(parse_fn, print_fn, frozenset(attrs), directives=tuple(directives))
