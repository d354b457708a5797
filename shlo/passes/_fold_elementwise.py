"""Constant folding of the element-wise ops (`stablehlo-aggressive-folder`), registered on the
op definitions with ``registry.folder``. Every fold runs the op's own kernel on its constant
operands (:meth:`FoldContext.evaluate`); what is op-specific here is *when* upstream folds
(element types, `optimize-float`, division by zero, the operands a math function refuses) and,
for the math functions upstream evaluates in double precision, that the kernel runs on f64 and
the result is rounded to the op's type.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..attributes import DenseElementsAttr, EnumAttr
from ..ir import Operation
from ..registry import folder
from ..types import ElementType, FloatType, TensorType, Type, element_type
from ._patterns import FoldContext, dense

__all__ = ["shape_fold_dtype", "is_int"]


def is_int(et: ElementType) -> bool:
    """Integers and booleans (MLIR's IntegerType)."""
    return bool(et.is_integer or et.is_bool)


def shape_fold_dtype(t: Type, ctx: FoldContext, allow_complex: bool = False) -> bool:
    """Upstream's validateShapeFoldDtype: integers always, floats (and complex numbers when
    allowed) only with `optimize-float`."""
    if not isinstance(t, TensorType) or t.element_type.is_quantized:
        return False
    et = t.element_type
    if is_int(et):
        return True
    return ctx.optimize_float and (et.is_float or (allow_complex and et.is_complex))


def _result(op: Operation, arr: Any) -> DenseElementsAttr:
    return dense(arr, op.results[0].type)


def _binary(op: Operation, ctx: FoldContext) -> list[DenseElementsAttr] | None:
    cs = ctx.constants(op)
    if cs is None:
        return None
    return [_result(op, ctx.evaluate(op, [c.array for c in cs])[0])]


@folder("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.maximum",
        "stablehlo.minimum", "stablehlo.clamp")
def _fold_arith(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    if not shape_fold_dtype(op.results[0].type, ctx):
        return None
    return _binary(op, ctx)


@folder("stablehlo.divide", "stablehlo.remainder")
def _fold_div(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    if not shape_fold_dtype(t, ctx):
        return None
    rhs = ctx.constant(op.operands[1])
    if rhs is not None and is_int(t.element_type) and not np.all(rhs.array):
        return None  # integer division by zero is not folded
    return _binary(op, ctx)


@folder("stablehlo.and", "stablehlo.or", "stablehlo.xor")
def _fold_bitwise(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    if not isinstance(t, TensorType) or not is_int(t.element_type):
        return None
    return _binary(op, ctx)


@folder("stablehlo.compare")
def _fold_compare(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    cs = ctx.constants(op)
    if cs is None:
        return None
    et = op.operands[0].type.element_type
    if not (is_int(et) or et.is_float):
        return None
    props = dict(op.properties)
    ct = props.get("compare_type")
    if isinstance(ct, EnumAttr) and ct.value == "TOTALORDER":
        del props["compare_type"]  # upstream compares TOTALORDER floats as FLOAT
    return [_result(op, ctx.evaluate(op, [c.array for c in cs], properties=props)[0])]


@folder("stablehlo.select")
def _fold_select(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    if not (isinstance(t, TensorType) and t.is_static and shape_fold_dtype(t, ctx)):
        return None
    cs = ctx.constants(op)
    if cs is None:
        return None
    pred, on_true, on_false = cs
    if pred.is_splat or pred.array.size == 1:
        return [on_true if bool(pred.array.reshape(-1)[0]) else on_false]
    if t.element_type.is_float or not ctx.within_limit(t):
        return None
    return [_result(op, ctx.evaluate(op, [c.array for c in cs])[0])]


@folder("stablehlo.convert")
def _fold_convert(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    src = op.operands[0].type
    if not (isinstance(t, TensorType) and t.is_static and shape_fold_dtype(t, ctx)
            and ctx.within_limit(t) and isinstance(src, TensorType)):
        return None
    old, new = src.element_type, t.element_type
    if not ctx.optimize_float and (old.is_float or new.is_float):
        return None
    c = ctx.constant(op.operands[0])
    if c is None or not (is_int(old) or old.is_float):
        return None
    if old.is_float and is_int(new) and not new.is_bool:
        x = c.array.astype(np.float64)
        if not np.all(np.isfinite(x)) or np.any((x == 0) & np.signbit(x)):
            return None  # infinities, NaN and -0.0 are not folded
        tr = np.trunc(x)
        if np.any(tr < new.min) or np.any(tr > new.max):
            return None  # out of range
    return [_result(op, ctx.evaluate(op, [c.array])[0])]


@folder("stablehlo.abs", "stablehlo.negate", "stablehlo.not", "stablehlo.sign",
        "stablehlo.round_nearest_afz", "stablehlo.round_nearest_even")
def _fold_exact_unary(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    """Upstream computes these exactly in the element type (APInt/APFloat)."""
    t = op.results[0].type
    if not isinstance(t, TensorType) or t.element_type.is_quantized:
        return None
    et = t.element_type
    c = ctx.constant(op.operands[0])
    if c is None or not (is_int(et) or et.is_float):
        return None
    if op.name == "stablehlo.not" and not is_int(et):
        return None
    if op.name.startswith("stablehlo.round") and not et.is_float:
        return None
    if op.name == "stablehlo.sign" and (et.is_unsigned or (
            et.is_float and np.any(np.isnan(c.array.astype(np.float64))))):
        return None
    return [_result(op, ctx.evaluate(op, [c.array])[0])]


# refuse(x) -> True for the f64 operands upstream does not fold (any element refuses: no fold)
_REFUSE = {
    "stablehlo.log": lambda x: x <= 0,
    "stablehlo.rsqrt": lambda x: x <= 0,
    "stablehlo.sqrt": lambda x: x < 0,
}


@folder("stablehlo.cosine", "chlo.erf", "stablehlo.exponential", "stablehlo.log",
        "stablehlo.logistic", "stablehlo.rsqrt", "stablehlo.sine", "stablehlo.sqrt",
        "stablehlo.tan", "stablehlo.tanh")
def _fold_math(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    """Upstream evaluates these in double precision and rounds to the element type: so does
    this fold (the op's kernel runs on f64)."""
    t = op.results[0].type
    if not isinstance(t, TensorType) or not t.element_type.is_float:
        return None
    c = ctx.constant(op.operands[0])
    if c is None:
        return None
    x = c.array.astype(np.float64)
    refuse = _REFUSE.get(op.name)
    if refuse is not None and np.any(refuse(x)):
        return None
    f64: FloatType = element_type("f64")  # type: ignore[assignment]
    t64 = TensorType(t.shape, f64)
    src = op.operands[0].type
    s64 = TensorType(src.shape, f64)
    out = ctx.evaluate(op, [x], operand_types=[s64], result_types=[t64])[0]
    return [_result(op, np.asarray(out, np.float64).astype(t.element_type.dtype))]
