"""What the two expander passes share (`stablehlo-compatibility-expander`,
`stablehlo-complex-math-expander`): upstream writes their rewrites as DRR patterns, here they are
result DAGs in the s-expression form of :mod:`.chlo.dag`, built *in place* by the greedy driver's
rewriter (:class:`._patterns.PatternRewriter`) with the chlo decompositions' builder (ops typed
by their own type inference).

Constants follow upstream's ``getConstantLike`` (stablehlo/transforms/PassUtils.cpp): a
`stablehlo.constant` splat for a static shape, a `chlo.constant_like` of the scalar otherwise.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..attributes import FloatAttr, IntegerAttr, StructAttr
from ..ir import Operation, Value
from ..types import ComplexType, TensorType
from ._patterns import Pattern, PatternRewriter
from .chlo._builder import Builder, tensor
from .chlo.dag import Node, evaluate, parse

__all__ = ["InPlaceBuilder", "default_accuracy", "dag_pattern", "is_complex"]


class _Here:
    """The two members of :class:`._rewrite.Rewriter` the chlo builder uses (``emit`` and
    ``loc``), over a :class:`PatternRewriter`: ops are inserted before the op being rewritten,
    with its location."""

    def __init__(self, rw: PatternRewriter) -> None:
        self.rw = rw

    @property
    def loc(self) -> Any:
        assert self.rw.anchor is not None
        return self.rw.anchor.location

    def emit(self, name: str, operands: Sequence[Value], result_types: Sequence[Any],
             properties: dict[str, Any] | None = None, attributes: dict[str, Any] | None = None,
             regions: Sequence[Any] | None = None) -> Operation:
        return self.rw.create(name, operands, result_types, properties, attributes, regions)


class InPlaceBuilder(Builder):
    """The chlo builder writing through a :class:`PatternRewriter`; ``like`` is upstream's
    getConstantLike (`chlo.constant_like` for a shape that is not static)."""

    def __init__(self, rw: PatternRewriter) -> None:
        super().__init__(_Here(rw))  # type: ignore[arg-type]

    def like(self, value: Any, v: Value) -> Value:
        t = tensor(v)
        if t.is_static or isinstance(t.element_type, ComplexType):
            return super().like(value, v)
        et = t.element_type
        if et.is_float:
            with np.errstate(over="ignore", invalid="ignore"):
                attr: Any = FloatAttr(float(np.asarray(np.float64(value)).astype(et.dtype)), et)
        else:
            attr = IntegerAttr(int(value), et)
        return self.op("chlo.constant_like", v, value=attr)


def is_complex(v: Value) -> bool:
    t = v.type
    return isinstance(t, TensorType) and isinstance(t.element_type, ComplexType)


def default_accuracy(op: Operation) -> bool:
    """`result_accuracy` absent or the default (mode DEFAULT, zero tolerances): DRR's
    ``ConstDefaultResultAccuracyAttr`` match."""
    a = op.attr("result_accuracy")
    if a is None:
        return True
    if not isinstance(a, StructAttr):
        return False
    mode = a.get("mode")
    mode = getattr(mode, "value", mode)
    tolerances = [getattr(a.get(k, 0), "value", a.get(k, 0)) for k in ("atol", "rtol", "ulps")]
    return (mode is None or mode == "DEFAULT") and all(float(x) == 0 for x in tolerances)


def dag_pattern(root: str, var: str, text: str,
                when: Callable[[Operation], bool] = lambda op: True,
                name: str = "") -> Pattern:
    """A pattern replacing a one-operand op ``root`` whose `result_accuracy` is the default
    (and ``when(op)`` holds) by the result DAG ``text``, the operand bound to ``$var``."""
    dag: Node = parse(text)

    def fn(op: Operation, rw: PatternRewriter) -> bool:
        if len(op.operands) != 1 or not default_accuracy(op) or not when(op):
            return False
        out = evaluate(InPlaceBuilder(rw), dag, {var: op.operands[0]}, op)
        rw.replace_op(op, [out])
        return True

    fn.__name__ = name or f"{root}_expander"
    return Pattern(root, fn, 1, fn.__name__)
