"""Pretty forms shared by the foreign dialects' ops (upstream's assembly formats), and the small
checks their verifiers share."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...attributes import DenseElementsAttr, FloatAttr, IntegerAttr, OpaqueAttr
from ...errors import Diagnostics
from ...ir import Operation
from ...syntax.directives import Format, parse_attrdict
from ...syntax.lexer import BARE
from ...types import ElementType, TensorType, Type

if TYPE_CHECKING:  # pragma: no cover
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = [
    "CAST_TO",
    "FLAG_ATTRS",
    "SAME_TYPE",
    "TYPED_CONSTANT",
    "check_counts",
    "check_same_types",
    "dtype_of",
    "element_of",
    "scalar_or_array",
]

FLAG_ATTRS = {"overflow": "overflowFlags", "fastmath": "fastmath"}
"""The optional keyword attributes of arith/math ops: `overflow<nsw>`, `fastmath<fast>`, kept
verbatim (`#arith.overflow<nsw>`) under their property names."""


def element_of(t: Type) -> Any:
    """The element type of a tensor type, or the type itself for a scalar."""
    return t.element_type if isinstance(t, TensorType) else t


def dtype_of(t: Type) -> np.dtype:
    return element_of(t).dtype


def scalar_or_array(a: Any, t: Type) -> Any:
    """``a`` as the run-time value of type ``t``: a numpy scalar for a scalar type."""
    if isinstance(t, TensorType):
        return np.asarray(a, dtype=t.dtype)
    return np.asarray(a, dtype=dtype_of(t))[()]


# --- `{attrs} typed-value` (arith.constant) --------------------------------------------------------


def _parse_typed_constant(p: Parser, name: str, nres: int, start: int) -> Operation:
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


def _print_typed_constant(pr: Printer, op: Operation) -> str | None:
    v = op.attr("value")
    if op.operands or len(op.results) != 1 or getattr(v, "type", None) != op.results[0].type \
            or not isinstance(v, (DenseElementsAttr, IntegerAttr, FloatAttr)):
        return None
    return f"{pr.attr_dict(op, {'value'})} {pr.attr(v)}"


TYPED_CONSTANT = Format(_parse_typed_constant, _print_typed_constant, frozenset({"value"}))


# --- `%x {attrs} : T to R` (casts) -------------------------------------------------------------


def _parse_cast_to(p: Parser, name: str, nres: int, start: int) -> Operation:
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


CAST_TO = Format(_parse_cast_to, _print_cast_to, frozenset())


# --- `%a, %b [overflow<..>|fastmath<..>] {attrs} : T` (SameOperandsAndResultType) ------------------


def _parse_same(p: Parser, name: str, nres: int, start: int) -> Operation:
    operands = p.operand_list()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.k == BARE and p.v in FLAG_ATTRS:
        kw = p.v
        props[FLAG_ATTRS[kw]] = _flag_attr(p, kw)
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    p.check_types(operands, [t] * len(operands), off)
    return Operation(name, operands, [t], props, attrs)


def _flag_attr(p: Parser, kw: str) -> Any:
    return OpaqueAttr("#arith." + p._capture_opaque())  # `overflow<nsw, nuw>`


def _print_same(pr: Printer, op: Operation) -> str | None:
    if len(op.results) != 1 or op.regions or not op.operands:
        return None
    t = op.results[0].type
    if any(v.type != t for v in op.operands):
        return None
    flags = ""
    elided: set[str] = set()
    for kw, prop in FLAG_ATTRS.items():
        a = op.attr(prop)
        if a is not None:
            text = getattr(a, "text", "")
            if not text.startswith(f"#arith.{kw}<"):
                return None
            flags += " " + text[len("#arith."):]
            elided.add(prop)
    return (" " + ", ".join(pr.val(v) for v in op.operands) + flags
            + pr.attr_dict(op, elided) + " : " + pr.type(t))


SAME_TYPE = Format(_parse_same, _print_same, frozenset(FLAG_ATTRS.values()))


# --- verifier helpers ----------------------------------------------------------------------------


def check_counts(op: Operation, diag: Diagnostics, operands: int | None, results: int) -> bool:
    ok = True
    if operands is not None and len(op.operands) != operands:
        diag.error(op, "", f"expected {operands} operands, but found {len(op.operands)}")
        ok = False
    if len(op.results) != results:
        diag.error(op, "", f"expected {results} results, but found {len(op.results)}")
        ok = False
    return ok


def check_same_types(op: Operation, diag: Diagnostics,
                     element_ok: Callable[[ElementType], bool], what: str) -> bool:
    """All operands and the result have one type, whose elements satisfy ``element_ok``."""
    if not check_counts(op, diag, None, 1):
        return False
    t = op.results[0].type
    if any(v.type != t for v in op.operands):
        diag.error(op, "", "requires the same type for all operands and results")
        return False
    if not element_ok(element_of(t)):
        diag.error(op, "", f"operand #0 must be {what}, but got '{t}'")
        return False
    return True
