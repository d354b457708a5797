"""Comparison and selection: clamp, compare, is_finite, select (spec order)."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from ...attributes import enum_attr
from ...errors import Diagnostics, ExecutionError
from ...ir import Operation
from ...registry import (
    DOQ, ELEMENTWISE, QUANTIZED_AWARE, Kernel, define, inference, kernel, verifier,
)
from ...syntax.directives import (
    ATTRDICT, COMMA, OPERAND, OPERANDS, attr, declarative, opt, types,
)
from ...types import TensorType, Type, element_type
from .. import _constraints as _c, _half
from .._numeric import F32, F64, float_info, int_info, total_order_key
from ._common import Fn, most_specific, one, operand_et, unsupported
from ._tables import compare_form, tabled_binary
from .arithmetic import max_fn, min_fn

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__: list[str] = []

_I1 = element_type("i1")

# --- clamp (spec "clamp") -------------------------------------------------------------------------

define("stablehlo.clamp", spec="clamp", traits={ELEMENTWISE, DOQ},
       syntax=declarative(OPERAND, COMMA, OPERAND, COMMA, OPERAND, ATTRDICT, types("same")))


@kernel("stablehlo.clamp")
def clamp(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: clamp: minimum(maximum(operand, min), max); 0-d `min`/`max` broadcast."""
    et = operand_et(op, 1)
    mx, mn = max_fn(op, et), min_fn(op, et)
    if et.is_integer and int_info(et).native:
        return one(lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi))
    if et.is_float and et.dtype in (F32, F64):
        return one(_float_clamp(et.dtype, mx, mn))
    return one(lambda lo, x, hi: mn(mx(x, lo), hi))


def _float_clamp(dt: np.dtype, mx: Fn, mn: Fn) -> Fn:
    """IEEE clamp, ``mn(mx(x, lo), hi)``, as numpy's maximum and minimum when the result holds
    no zero: numpy's may pick the wrong zero of a (-0, +0) pair, and such a pick reaches the
    result only as a zero (``min(±0, hi)`` is that zero for hi > 0 or zero, hi for hi < 0 or
    NaN). A small result is searched for both zeros' bytes (one search each, ~0.1 us on 64
    bytes; a match at an unaligned offset only takes the exact path)."""
    zeros = (np.zeros((), dt).tobytes(), np.array(-0.0, dt).tobytes())

    def run(lo: Any, x: Any, hi: Any) -> Any:
        m = np.minimum(np.maximum(x, lo), hi)
        if m.nbytes <= 2048:
            b = m.tobytes()
            if b.find(zeros[0]) < 0 and b.find(zeros[1]) < 0:
                return m
        return mn(mx(x, lo), hi)

    return run


@inference("stablehlo.clamp")
def _infer_clamp(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """The operand's type, after (C1) `rank(min) = 0 or shape(min) = shape(operand)`, (C2) the
    same for max and (C3) the three baseline element types agree."""
    mn, operand, mx = (v.type for v in op.operands)
    if not all(isinstance(t, TensorType) for t in (mn, operand, mx)):
        return None
    ok = True
    for name, t, label in (("min", mn, "C1"), ("max", mx, "C2")):
        if t.shape != () and not _c.compatible_shapes(t.shape, operand.shape):
            diag.error(op, label, f"{name} shape {_c.dims_str(t.shape)} is not scalar and is "
                                  f"not compatible to operand shape {_c.dims_str(operand.shape)}")
            ok = False
    for t in (mn, mx):
        if not _c.compatible_element_types(t.element_type, operand.element_type):
            diag.error(op, "C3", "requires compatible element types for min, operand and max: "
                                 + _c.types_str([mn, operand, mx]))
            ok = False
            break
    return [operand] if ok else None


@verifier("stablehlo.clamp")
def _verify_clamp(op: Operation, diag: Diagnostics) -> None:
    """(C1-C3) see the inference; (C4) `baseline_type(operand) = baseline_type(result)`."""
    if not _c.signature(op, diag, [_c.TENSOR] * 3, [_c.TENSOR]):
        return
    inferred = _infer_clamp(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C4", inferred)


# --- compare (spec "compare") ---------------------------------------------------------------------

define("stablehlo.compare", spec="compare", traits={ELEMENTWISE, DOQ},
       syntax=declarative(attr("comparison_direction", "enum:comparison_direction"), COMMA,
                          OPERAND, COMMA, OPERAND,
                          opt("compare_type", COMMA,
                              attr("compare_type", "enum:comparison_type")),
                          ATTRDICT, types("functional")))

_DIRECTIONS: dict[str, np.ufunc] = {
    "EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
    "LE": np.less_equal, "LT": np.less,
}
_OPERATOR_DIRECTIONS = {"EQ": operator.eq, "NE": operator.ne, "GE": operator.ge,
                        "GT": operator.gt, "LE": operator.le, "LT": operator.lt}


def _complex_compare(direction: str) -> Fn:
    """Lexicographic comparison of (real, imag) pairs."""
    strict = _DIRECTIONS[direction]

    def eq(x: Any, y: Any) -> Any:
        return np.logical_and(np.equal(np.real(x), np.real(y)), np.equal(np.imag(x), np.imag(y)))

    if direction == "EQ":
        return eq
    if direction == "NE":
        return lambda x, y: np.logical_not(eq(x, y))
    first = np.greater if direction in ("GT", "GE") else np.less

    def cmp(x: Any, y: Any) -> Any:
        xr, yr = np.real(x), np.real(y)
        return np.logical_or(first(xr, yr),
                             np.logical_and(np.equal(xr, yr), strict(np.imag(x), np.imag(y))))

    return cmp


@kernel("stablehlo.compare")
def compare(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: compare. FLOAT: IEEE quiet comparisons; TOTALORDER: every direction compares
    IEEE totalOrder keys (so -0 < +0 and NaNs with equal bits are equal, as XLA); complex:
    lexicographic on (real, imag)."""
    direction = enum_attr(op, "comparison_direction", None)
    if direction not in _DIRECTIONS:
        raise ExecutionError(f"unknown comparison_direction {direction}", op.location)
    compare_type = enum_attr(op, "compare_type", None)
    et = operand_et(op)
    ufunc = _DIRECTIONS[direction]
    if et.is_complex:
        return one(_complex_compare(direction))
    if et.is_float and compare_type == "TOTALORDER":
        info = float_info(et)
        return one(lambda x, y: ufunc(total_order_key(x, info), total_order_key(y, info)))
    if et.is_float and et.dtype.itemsize < 4:
        return one(_narrow_compare(direction, ufunc, et.dtype))
    if et.is_bool or et.is_integer or et.is_float:
        if et.dtype.isbuiltin == 1:  # operators: numpy's scalar fast path (see arithmetic._arith)
            fn = _OPERATOR_DIRECTIONS[direction]
            return one(fn)
        return one(ufunc)
    raise unsupported(op, et)


def _narrow_compare(direction: str, ufunc: Fn, dt: np.dtype) -> Fn:
    """An IEEE comparison of floats of at most 16 bits: widened to float32 (exact; ml_dtypes'
    comparisons also warn on NaN, float32's are quiet). For large arrays, integer keys of the
    bit patterns (``_half.compare``) where ``_tables.compare_form`` has checked them for the
    format, else (f6, f4) a 256 x 256 table of it."""
    def careful(x: Any, y: Any) -> Any:
        return ufunc(np.asarray(x, F32), np.asarray(y, F32))

    spec = compare_form(dt)
    if spec is None:
        return tabled_binary(f"stablehlo.compare {direction}", careful, dt, np.bool_) or careful

    def run(x: Any, y: Any) -> Any:
        fast = _half.compare(spec, direction, x, y)
        return careful(x, y) if fast is None else fast

    return run


@inference("stablehlo.compare")
def _infer_compare(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """A tensor of i1 of the operands' shape, after (C1) `baseline_element_type(lhs) =
    baseline_element_type(rhs)`."""
    lhs, rhs = op.operands[0].type, op.operands[1].type
    if not isinstance(lhs, TensorType) or not isinstance(rhs, TensorType):
        return None
    if not _c.compatible_element_types(lhs.element_type, rhs.element_type):
        diag.error(op, "C1", "requires compatible element types for lhs and rhs: "
                             + _c.types_str([lhs, rhs]))
        return None
    # upstream's inferCompareOp: lhs's shape and encoding (bounds carry over)
    return [TensorType(lhs.shape, _I1, lhs.encoding)]


_COMPARISON_DIRECTIONS = frozenset(_DIRECTIONS)
_COMPARISON_TYPES = frozenset({"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"})


@verifier("stablehlo.compare")
def _verify_compare(op: Operation, diag: Diagnostics) -> None:
    """(C2) `shape(lhs) = shape(rhs) = shape(result)`, the result is a tensor of i1; (C1) see
    the inference.

    (C3), the compare_type implied by the element type, is not enforced: upstream accepts any
    compare_type and programs in the wild rely on it."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR], [_c.PRED_TENSOR],
                        attrs={"comparison_direction": "any"},
                        optional_attrs={"compare_type": "any"}):
        return
    d = enum_attr(op, "comparison_direction", None)
    if d is not None and d not in _COMPARISON_DIRECTIONS:
        diag.error(op, "I3", f"comparison_direction must be one of EQ, NE, GE, GT, LE, LT, "
                             f"got {d}")
    ct = enum_attr(op, "compare_type", None)
    if ct is not None and ct not in _COMPARISON_TYPES:
        diag.error(op, "I4", f"compare_type must be one of FLOAT, TOTALORDER, SIGNED, UNSIGNED,"
                             f" got {ct}")
    if not _c.same_shapes(op, diag, "C2"):
        return
    _infer_compare(op, diag)  # (C1); the result type is i1 (signature) of that shape (C2)


# --- is_finite (spec "is_finite") -----------------------------------------------------------------

define("stablehlo.is_finite", spec="is_finite", traits={ELEMENTWISE, QUANTIZED_AWARE},
       syntax=declarative(OPERANDS, ATTRDICT, types("functional")))


@kernel("stablehlo.is_finite")
def is_finite(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: is_finite. Always true for quantized tensors."""
    et = operand_et(op)
    if et.is_quantized:
        return one(lambda x: np.ones(np.shape(x), np.bool_))
    if et.is_float:
        return one(np.isfinite)
    raise unsupported(op, et)


@inference("stablehlo.is_finite")
def _infer_is_finite(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """A tensor of i1 of the operand's shape."""
    t = op.operands[0].type
    return [TensorType(t.shape, _I1, t.encoding)] if isinstance(t, TensorType) else None


@verifier("stablehlo.is_finite")
def _verify_is_finite(op: Operation, diag: Diagnostics) -> None:
    """(C1) `shape(x) = shape(y)`; `y` is a tensor of i1 (the inferred type)."""
    if not _c.signature(op, diag, [_c.FP_Q_TENSOR], [_c.PRED_TENSOR]):
        return
    _c.same_shapes(op, diag, "C1", message="all non-scalar operands/results must have the "
                                           "same shape and base type")


# --- select (spec "select") -----------------------------------------------------------------------

define("stablehlo.select", spec="select", traits={ELEMENTWISE, DOQ},
       syntax=declarative(OPERANDS, ATTRDICT, types("select")))


@kernel("stablehlo.select")
def select(op: Operation, ctx: PrepareContext) -> Kernel:
    """spec: select: pred ? on_true : on_false; a 0-d `pred` selects a whole tensor."""

    def run(pred: Any, on_true: Any, on_false: Any) -> tuple[Any]:
        if pred.ndim == 0 and on_true.shape == on_false.shape:
            return (on_true if pred else on_false,)
        fast = _half.select(pred, on_true, on_false)  # compiled: numpy's where branches
        return (np.where(pred, on_true, on_false) if fast is None else fast,)

    return run


@inference("stablehlo.select")
def _infer_select(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """The most specific of `on_true` and `on_false`'s types, after (C2) `baseline_type(on_true)
    = baseline_type(on_false)` and (C1) `rank(pred) = 0 or shape(pred) = shape(on_true)` (in
    upstream's order)."""
    pred, on_true, on_false = (v.type for v in op.operands)
    if not all(isinstance(t, TensorType) for t in (pred, on_true, on_false)):
        return None
    if not _c.compatible(on_true, on_false):
        diag.error(op, "C2", "requires compatible types for non-predicate operands: "
                             + _c.types_str([on_true, on_false]))
        return None
    if pred.shape is not None and pred.shape != () and \
            not _c.same_shapes(op, diag, "C1", [pred, on_true],
                               message="requires the same shape for all operands"):
        return None
    return [most_specific([on_true, on_false])]  # inferMostSpecificTypeComponents


@verifier("stablehlo.select")
def _verify_select(op: Operation, diag: Diagnostics) -> None:
    """(C1, C2) see the inference; (C2) `baseline_type(on_true) = baseline_type(result)`."""
    if not _c.signature(op, diag, [_c.PRED_TENSOR, _c.TENSOR, _c.TENSOR], [_c.TENSOR]):
        return
    inferred = _infer_select(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C2", inferred)
