"""MLIR's `arith` dialect (mlir/include/mlir/Dialect/Arith/IR/ArithOps.td): constants, integer
and float arithmetic, comparisons, `select` and casts, elementwise on scalars and tensors.

torch-mlir leaves `arith.constant` (scalars, `tensor<1xi64>` / `tensor<1xf64>` splats) in every
export, and, with dynamic shapes, `index_cast` (a `tensor.dim` to i64), `muli`, `divui`.

Integers are two's complement of the type's width: `addi`, `subi`, `muli`, `shli` wrap; the `s`
/`u` ops read the bits as signed / unsigned; `divsi`/`remsi` truncate toward zero (C), `floordivsi`
/`ceildivsi` round down / up. What ArithOps.td calls undefined or poison (division by zero,
`INT_MIN / -1`, shifts by the width or more, float-to-int out of range) gives numpy's answer;
nothing is checked. `i1` is a bool (so `addi` on i1 is xor). Floats: `maximumf`/`minimumf`
propagate NaN, `maxnumf`/`minnumf` prefer the number, `remf` is C's fmod.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...attributes import DenseElementsAttr, FloatAttr, IntegerAttr, StringAttr
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import ELEMENTWISE, Kernel, define, kernel, verifier
from ...syntax.directives import Format, parse_attrdict
from ...types import FloatType, IndexType, IntegerType, TensorType, Type, element_type
from .._arrays import readonly
from ._syntax import (
    CAST_TO,
    SAME_TYPE,
    TYPED_CONSTANT,
    check_counts,
    check_same_types,
    dtype_of,
    element_of,
    scalar_or_array,
)

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["CMPF_PREDICATES", "CMPI_PREDICATES"]

_I1 = element_type("i1")


def _is_int(et: Any) -> bool:
    return isinstance(et, (IntegerType, IndexType))


def _is_float(et: Any) -> bool:
    return isinstance(et, FloatType)


def _unsigned(a: Any) -> Any:
    """The bits of signless integers ``a`` read as unsigned."""
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind == "i" else a


def _signed(a: Any) -> Any:
    a = np.asarray(a)
    if a.dtype == np.bool_:  # i1 read as signed: true is -1
        return -a.astype(np.int8)
    return a.view(np.dtype(f"i{a.dtype.itemsize}")) if a.dtype.kind == "u" else a


def _wrap(r: Any, t: Type) -> Any:
    """``r`` as the value of type ``t`` (integers wrap to the width; i1 keeps the low bit)."""
    r = np.asarray(r)
    dt = dtype_of(t)
    if dt == np.bool_:
        r = (r.astype(np.int64) & 1).astype(np.bool_) if r.dtype != np.bool_ else r
    elif r.dtype != dt:
        r = r.astype(dt) if r.dtype.itemsize != dt.itemsize or r.dtype.kind == "f" \
            else r.view(dt)
    return r if isinstance(t, TensorType) else r[()]


# --- arith.constant ----------------------------------------------------------------------------

define("arith.constant", summary="a scalar or tensor constant (ArithOps.td ConstantOp)",
       inherent="value", syntax=TYPED_CONSTANT)


@kernel("arith.constant")
def _constant(op: Operation, ctx: PrepareContext) -> Kernel:
    """``result = value`` (an integer, float or dense elements attribute of the result type)."""
    v = op.attr("value")
    t = op.results[0].type
    if isinstance(v, DenseElementsAttr):
        out = (readonly(np.asarray(v.array)),)
    elif isinstance(v, (IntegerAttr, FloatAttr)):
        out = (scalar_or_array(v.value, t),)
    else:
        raise TypeError(f"unsupported value attribute {v!r}")

    def run() -> Sequence[Any]:
        return out

    return run


@verifier("arith.constant")
def _verify_constant(op: Operation, diag: Diagnostics) -> None:
    """The value's type is the result's type."""
    if not check_counts(op, diag, 0, 1):
        return
    v = op.attr("value")
    vt = getattr(v, "type", None)
    if vt is None or not isinstance(v, (DenseElementsAttr, IntegerAttr, FloatAttr)):
        diag.error(op, "", "requires attribute 'value' to be an integer, float or dense "
                           "elements attribute")
    elif vt != op.results[0].type:
        diag.error(op, "", f"value type '{vt}' must match the result type "
                           f"'{op.results[0].type}'")


# --- binary and unary arithmetic (SameOperandsAndResultType) ---------------------------------------

_INT_BINARY: dict[str, tuple[Callable[[Any, Any], Any], str]] = {
    "addi": (np.add, "s"), "subi": (np.subtract, "s"), "muli": (np.multiply, "s"),
    "andi": (np.bitwise_and, "u"), "ori": (np.bitwise_or, "u"), "xori": (np.bitwise_xor, "u"),
    "divui": (np.floor_divide, "u"), "remui": (np.remainder, "u"),
    "ceildivui": (lambda a, b: -(-a // b), "u"),
    "maxui": (np.maximum, "u"), "minui": (np.minimum, "u"),
    "maxsi": (np.maximum, "s"), "minsi": (np.minimum, "s"),
    "divsi": (lambda a, b: np.fix(np.true_divide(a, b)).astype(a.dtype)
              if a.dtype.itemsize < 8 else _trunc_div(a, b), "s"),
    "remsi": (np.fmod, "s"),
    "floordivsi": (np.floor_divide, "s"),
    "ceildivsi": (lambda a, b: -np.floor_divide(-a, b), "s"),
    "shli": (lambda a, b: np.left_shift(a, b), "u"),
    "shrui": (lambda a, b: np.right_shift(a, b), "u"),
    "shrsi": (lambda a, b: np.right_shift(a, b), "s"),
}


def _trunc_div(a: Any, b: Any) -> Any:
    """Division rounding toward zero, exact for 64-bit integers (not through floats)."""
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return q + fix


_FLOAT_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
    "remf": np.fmod, "maximumf": np.maximum, "minimumf": np.minimum, "maxnumf": np.fmax,
    "minnumf": np.fmin,
}


def _int_binary(name: str, fn: Callable[[Any, Any], Any], sign: str) -> None:
    full = f"arith.{name}"
    define(full, summary=f"integer {name} (ArithOps.td)", traits={ELEMENTWISE},
           inherent="overflowFlags", syntax=SAME_TYPE)

    @kernel(full)
    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        t = op.results[0].type
        read = _unsigned if sign == "u" else _signed

        def run(a: Any, b: Any) -> Sequence[Any]:
            return (_wrap(fn(read(a), read(b)), t),)

        return run

    verifier(full)(lambda op, diag: check_same_types(op, diag, _is_int,
                                                     "signless-integer-like"))


def _float_binary(name: str, fn: Callable[[Any, Any], Any]) -> None:
    full = f"arith.{name}"
    define(full, summary=f"floating-point {name} (ArithOps.td)", traits={ELEMENTWISE},
           inherent="fastmath", syntax=SAME_TYPE)

    @kernel(full)
    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        t = op.results[0].type

        def run(a: Any, b: Any) -> Sequence[Any]:
            return (_wrap(fn(a, b), t),)

        return run

    verifier(full)(lambda op, diag: check_same_types(op, diag, _is_float, "floating-point-like"))


for _name, (_fn, _sign) in _INT_BINARY.items():
    _int_binary(_name, _fn, _sign)
for _name, _ffn in _FLOAT_BINARY.items():
    _float_binary(_name, _ffn)

define("arith.negf", summary="floating-point negation (ArithOps.td)", traits={ELEMENTWISE},
       inherent="fastmath", syntax=SAME_TYPE)


@kernel("arith.negf")
def _negf(op: Operation, ctx: PrepareContext) -> Kernel:
    def run(a: Any) -> Sequence[Any]:
        return (np.negative(a),)

    return run


verifier("arith.negf")(lambda op, diag: check_same_types(op, diag, _is_float,
                                                         "floating-point-like"))


# --- casts: `%x : T to R` ------------------------------------------------------------------------

def _cast_fn(name: str) -> Callable[[Any, Type], Any]:
    if name in ("index_castui", "extui", "uitofp"):
        return lambda a, t: _wrap(_unsigned(a).astype(dtype_of(t)), t)
    if name in ("index_cast", "extsi", "sitofp", "trunci"):
        return lambda a, t: _wrap(_signed(a).astype(np.int64).astype(dtype_of(t))
                                  if dtype_of(t) == np.bool_ else _signed(a).astype(dtype_of(t)),
                                  t)
    if name in ("fptosi", "fptoui"):
        return lambda a, t: _wrap(np.trunc(np.asarray(a, np.float64)).astype(
            np.int64 if name == "fptosi" else np.uint64), t)
    if name == "bitcast":
        return lambda a, t: _wrap(np.asarray(a).view(dtype_of(t)), t)
    return lambda a, t: _wrap(np.asarray(a).astype(dtype_of(t)), t)  # extf, truncf


_CASTS: dict[str, tuple[Callable[[Any], bool], Callable[[Any], bool], str]] = {
    "index_cast": (_is_int, _is_int, "integer <-> index, sign-extending or truncating"),
    "index_castui": (_is_int, _is_int, "integer <-> index, zero-extending or truncating"),
    "extsi": (_is_int, _is_int, "sign extension to a wider integer"),
    "extui": (_is_int, _is_int, "zero extension to a wider integer"),
    "trunci": (_is_int, _is_int, "truncation to a narrower integer (the low bits)"),
    "sitofp": (_is_int, _is_float, "signed integer to float"),
    "uitofp": (_is_int, _is_float, "unsigned integer to float"),
    "fptosi": (_is_float, _is_int, "float to signed integer (toward zero)"),
    "fptoui": (_is_float, _is_int, "float to unsigned integer (toward zero)"),
    "extf": (_is_float, _is_float, "float to a wider float"),
    "truncf": (_is_float, _is_float, "float to a narrower float (round to nearest even)"),
    "bitcast": (lambda et: True, lambda et: True, "the same bits as another type of the width"),
}


def _cast(name: str, src_ok: Callable[[Any], bool], dst_ok: Callable[[Any], bool],
          what: str) -> None:
    full = f"arith.{name}"
    define(full, summary=f"{what} (ArithOps.td)", traits={ELEMENTWISE}, inherent="",
           syntax=CAST_TO)
    fn = _cast_fn(name)

    @kernel(full)
    def prepare(op: Operation, ctx: PrepareContext) -> Kernel:
        t = op.results[0].type

        def run(a: Any) -> Sequence[Any]:
            return (fn(a, t),)

        return run

    @verifier(full)
    def verify(op: Operation, diag: Diagnostics) -> None:
        if not check_counts(op, diag, 1, 1):
            return
        src, dst = op.operands[0].type, op.results[0].type
        if isinstance(src, TensorType) != isinstance(dst, TensorType) or (
                isinstance(src, TensorType) and src.shape != dst.shape):  # type: ignore[union-attr]
            diag.error(op, "", f"operand '{src}' and result '{dst}' must have the same shape")
        elif not (src_ok(element_of(src)) and dst_ok(element_of(dst))):
            diag.error(op, "", f"operand type '{src}' and result type '{dst}' are cast "
                               f"incompatible ({what})")


for _name, (_s, _d, _what) in _CASTS.items():
    _cast(_name, _s, _d, _what)


# --- comparisons: `arith.cmpi slt, %a, %b : T` ---------------------------------------------------

CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
"""ArithOps.td's CmpIPredicate cases, by their i64 value."""
CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                   "uge", "ult", "ule", "une", "uno", "true")
"""CmpFPredicate cases, by their i64 value (`o`: ordered, false if either is NaN; `u`:
unordered, true if either is NaN)."""

_I64 = element_type("i64")
_RELATION = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
             "gt": np.greater, "ge": np.greater_equal}


def _cmp_parser(cases: tuple[str, ...]) -> Callable[..., Operation]:
    def parse(p: Parser, name: str, nres: int, start: int) -> Operation:
        off = p.start
        pred = p.bare()
        if pred not in cases:
            p.error(f"unknown comparison predicate \"{pred}\"", off, found=False)
        p.expect(",")
        operands = p.operand_list()
        props: dict[str, Any] = {"predicate": IntegerAttr(cases.index(pred), _I64)}
        attrs: dict[str, Any] = {}
        parse_attrdict(p, name, props, attrs)
        p.expect(":")
        off = p.start
        t = p.parse_type()
        p.check_types(operands, [t, t], off)
        rt: Type = TensorType(t.shape, _I1) if isinstance(t, TensorType) else _I1
        return Operation(name, operands, [rt], props, attrs)

    return parse


def _cmp_printer(cases: tuple[str, ...]) -> Callable[..., str | None]:
    def print_(pr: Printer, op: Operation) -> str | None:
        pred = op.attr("predicate")
        if not isinstance(pred, IntegerAttr) or not 0 <= pred.value < len(cases) \
                or len(op.operands) != 2 or op.operands[0].type != op.operands[1].type:
            return None
        return (f" {cases[pred.value]}, {pr.val(op.operands[0])}, {pr.val(op.operands[1])}"
                f"{pr.attr_dict(op, {'predicate'})} : {pr.type(op.operands[0].type)}")

    return print_


def _predicate(op: Operation, cases: tuple[str, ...]) -> str:
    pred = op.attr("predicate")
    if isinstance(pred, StringAttr) and pred.value in cases:
        return pred.value
    if isinstance(pred, IntegerAttr) and 0 <= pred.value < len(cases):
        return cases[pred.value]
    raise ValueError(f"bad predicate {pred!r}")


define("arith.cmpi", summary="integer comparison (ArithOps.td CmpIOp)", traits={ELEMENTWISE},
       inherent="predicate", syntax=Format(_cmp_parser(CMPI_PREDICATES),
                                           _cmp_printer(CMPI_PREDICATES),
                                           frozenset({"predicate"})))
define("arith.cmpf", summary="float comparison (ArithOps.td CmpFOp)", traits={ELEMENTWISE},
       inherent="predicate fastmath", syntax=Format(_cmp_parser(CMPF_PREDICATES),
                                                    _cmp_printer(CMPF_PREDICATES),
                                                    frozenset({"predicate"})))


@kernel("arith.cmpi")
def _cmpi(op: Operation, ctx: PrepareContext) -> Kernel:
    """`eq`/`ne` on the bits, `s..` signed, `u..` unsigned."""
    pred = _predicate(op, CMPI_PREDICATES)
    rel = _RELATION[pred[-2:]]
    read = _unsigned if pred[0] == "u" else _signed

    def run(a: Any, b: Any) -> Sequence[Any]:
        return (rel(read(a), read(b)),)

    return run


@kernel("arith.cmpf")
def _cmpf(op: Operation, ctx: PrepareContext) -> Kernel:
    pred = _predicate(op, CMPF_PREDICATES)

    def run(a: Any, b: Any) -> Sequence[Any]:
        a, b = np.asarray(a), np.asarray(b)
        unordered = np.isnan(a) | np.isnan(b)
        if pred in ("false", "true"):
            r = np.full(np.broadcast(a, b).shape, pred == "true")
        elif pred == "ord":
            r = ~unordered
        elif pred == "uno":
            r = unordered
        else:
            rel = np.not_equal if pred[1:] == "ne" else _RELATION[pred[1:]]
            with np.errstate(invalid="ignore"):
                r = rel(a, b)
            r = (r & ~unordered) if pred[0] == "o" else (r | unordered)
        return (r if r.ndim else r[()],)

    return run


def _verify_cmp(op: Operation, diag: Diagnostics, ok: Callable[[Any], bool], what: str) -> None:
    if not check_counts(op, diag, 2, 1):
        return
    a, b = (v.type for v in op.operands)
    if a != b or not ok(element_of(a)):
        diag.error(op, "", f"operands must be two {what} values of one type, got '{a}', '{b}'")
    elif element_of(op.results[0].type) != _I1:
        diag.error(op, "", "result must be i1 (or a tensor of i1)")


verifier("arith.cmpi")(lambda op, diag: _verify_cmp(op, diag, _is_int, "integer"))
verifier("arith.cmpf")(lambda op, diag: _verify_cmp(op, diag, _is_float, "floating-point"))


# --- arith.select %c, %t, %f : T  (or `: tensor<..xi1>, T`) -----------------------------------------


def _parse_select(p: Parser, name: str, nres: int, start: int) -> Operation:
    operands = p.operand_list()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    cond: Type = _I1
    if p.accept(","):
        cond, t = t, p.parse_type()
    p.check_types(operands, [cond, t, t], off)
    return Operation(name, operands, [t], props, attrs)


def _print_select(pr: Printer, op: Operation) -> str | None:
    if len(op.operands) != 3:
        return None
    c = op.operands[0].type
    types = pr.type(op.results[0].type) if c == _I1 else \
        f"{pr.type(c)}, {pr.type(op.results[0].type)}"
    return " " + ", ".join(pr.val(v) for v in op.operands) + pr.attr_dict(op, set()) + \
        " : " + types


define("arith.select", summary="choose between two values by an i1 (ArithOps.td SelectOp)",
       traits={ELEMENTWISE}, inherent="", syntax=Format(_parse_select, _print_select,
                                                        frozenset()))


@kernel("arith.select")
def _select(op: Operation, ctx: PrepareContext) -> Kernel:
    """``result = condition ? true_value : false_value`` (a scalar i1 picks a whole value, a
    tensor of i1 picks per element)."""
    t = op.results[0].type

    def run(c: Any, a: Any, b: Any) -> Sequence[Any]:
        if np.ndim(c) == 0:
            return (a if bool(c) else b,)
        return (_wrap(np.where(c, a, b), t),)

    return run


@verifier("arith.select")
def _verify_select(op: Operation, diag: Diagnostics) -> None:
    if not check_counts(op, diag, 3, 1):
        return
    c, a, b = (v.type for v in op.operands)
    if a != b or a != op.results[0].type:
        diag.error(op, "", "true and false values and the result must have one type")
    elif element_of(c) != _I1:
        diag.error(op, "", f"condition must be i1 or a tensor of i1, got '{c}'")
    elif isinstance(c, TensorType) and (not isinstance(a, TensorType) or c.shape != a.shape):
        diag.error(op, "", "a tensor condition must have the shape of the values")
