"""Ops of other dialects that StableHLO files contain and shlo parses and prints, but does not
run: `arith.constant`, `tensor.cast` and `builtin.unrealized_conversion_cast` (exporters and
upstream's tests leave them behind)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..attributes import DenseElementsAttr, FloatAttr, IntegerAttr
from ..ir import Operation
from ..registry import define
from ..syntax.directives import Format, parse_attrdict

if TYPE_CHECKING:  # pragma: no cover
    from ..syntax.parser import Parser
    from ..syntax.printer import Printer


# --- arith.constant -------------------------------------------------------------------------


def parse_typed_constant(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`{attrs} value`: a constant whose value attribute carries its type (`dense<1> :
    tensor<i32>`, `1 : i32`); the result has that type."""
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    value = p.parse_attribute()
    t = getattr(value, "type", None)
    if t is None:
        p.error("expected a typed constant value", found=False)
    props["value"] = value
    return Operation(name, [], [t], props, attrs)


def print_typed_constant(pr: Printer, op: Operation) -> str | None:
    v = op.attr("value")
    if op.operands or len(op.results) != 1 or getattr(v, "type", None) != op.results[0].type \
            or type(v) not in (DenseElementsAttr, IntegerAttr, FloatAttr):
        return None
    return f"{pr.attr_dict(op, {'value'})} {pr.attr(v)}"


TYPED_CONSTANT = Format(parse_typed_constant, print_typed_constant, frozenset({"value"}))
"""The pretty form of constants spelled `op {attrs} typed-value` (arith.constant; chlo.constant
has the same form)."""

define("arith.constant", summary="MLIR's arith constant", inherent="value",
       syntax=TYPED_CONSTANT)


# --- tensor.cast, builtin.unrealized_conversion_cast ----------------------------------------


def _parse_cast_to(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`%x {attrs} : T to R`."""
    operand = p.operand()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    p.check_types([operand], [t], off)
    p.keyword("to")
    return Operation(name, [operand], [p.parse_type()], props, attrs)


def _print_cast_to(pr: Printer, op: Operation) -> str | None:
    if len(op.operands) != 1 or len(op.results) != 1 or op.regions:
        return None
    return (f" {pr.val(op.operands[0])}{pr.attr_dict(op, set())} : "
            f"{pr.type(op.operands[0].type)} to {pr.type(op.results[0].type)}")


_CAST_TO = Format(_parse_cast_to, _print_cast_to, frozenset())

define("tensor.cast", summary="MLIR's tensor cast (to a more or less static type)", inherent="",
       syntax=_CAST_TO)
define("builtin.unrealized_conversion_cast", summary="MLIR's placeholder conversion",
       inherent="", syntax=_CAST_TO)
