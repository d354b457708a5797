"""chlo-legalize-to-stablehlo: CHLO ops to StableHLO ops."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..attributes import EnumAttr, ints
from ..ir import Module, Operation, Value
from ..types import TensorType, element_type
from . import register_pass
from ._rewrite import Rewriter, i64_array

_I64, _I32 = element_type("i64"), element_type("i32")


def _targets() -> dict[str, str]:
    from ..ops.chlo import BROADCAST_TARGETS

    return dict(BROADCAST_TARGETS, **{"chlo.broadcast_select": "stablehlo.select"})


def _plan(rank: int, result_rank: int, dims: Sequence[int] | None) -> tuple[int, ...]:
    if rank == result_rank:
        return tuple(range(rank))
    if dims is not None and len(dims) == rank:
        return tuple(dims)
    return tuple(range(result_rank - rank, result_rank))


def _shape_value(rw: Rewriter, v: Value) -> Value:
    """``tensor<R x i64>`` holding the run-time shape of ``v``."""
    t = v.type
    assert isinstance(t, TensorType)
    parts = []
    for d, s in enumerate(t.shape):
        if s is not None:
            parts.append(rw.constant(np.array([s], np.int64), _I64))
            continue
        size = rw.emit1("stablehlo.get_dimension_size", [v], TensorType((), _I32),
                        {"dimension": _int_attr(d)})
        size = rw.convert(size, _I64)
        parts.append(rw.emit1("stablehlo.reshape", [size], TensorType((1,), _I64)))
    if len(parts) == 1:
        return parts[0]
    return rw.emit1("stablehlo.concatenate", parts, TensorType((len(parts),), _I64),
                    {"dimension": _int_attr(0)})


def _int_attr(v: int) -> Any:
    from ..attributes import IntegerAttr

    return IntegerAttr(v, _I64)


def _broadcast_to(rw: Rewriter, v: Value, result: TensorType, plan: tuple[int, ...],
                  shape: Value | None) -> Value:
    t = v.type
    assert isinstance(t, TensorType)
    if t.shape == result.shape and plan == tuple(range(len(plan))):
        return v
    out_t = TensorType(result.shape, t.element_type, result.encoding)
    if result.is_static:
        return rw.emit1("stablehlo.broadcast_in_dim", [v], out_t,
                        {"broadcast_dimensions": i64_array(plan)})
    assert shape is not None
    return rw.emit1("stablehlo.dynamic_broadcast_in_dim", [v, shape], out_t,
                    {"broadcast_dimensions": i64_array(plan)})


def _chlo_pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    target = _targets().get(op.name)
    if target is None or target.startswith("chlo."):
        return None
    result = op.results[0].type
    if not isinstance(result, TensorType) or result.shape is None:
        return None
    operands = [rw.get(v) for v in op.operands]
    types = [v.type for v in operands]
    if not all(isinstance(t, TensorType) and t.shape is not None for t in types):
        return None
    rank = len(result.shape)
    dims = ints(op.attr("broadcast_dimensions"), None)
    shape = None
    if not result.is_static:
        full = [v for v in operands if len(v.type.shape) == rank]
        shapes = [_shape_value(rw, v) for v in full]
        shape = shapes[0]
        for s in shapes[1:]:
            shape = rw.binary("stablehlo.maximum", shape, s)
    operands = [_broadcast_to(rw, v, result, _plan(len(v.type.shape), rank, dims), shape)
                for v in operands]
    props: dict[str, Any] = {}
    for key in ("comparison_direction", "compare_type"):
        a = op.attr(key)
        if isinstance(a, EnumAttr):
            props[key] = EnumAttr("stablehlo", a.enum, a.value)
        elif a is not None:
            props[key] = a
    return rw.emit(target, operands, [result], props).results


@register_pass("chlo-legalize-to-stablehlo")
def chlo_legalize_to_stablehlo(module: Module, options: dict[str, str] | None = None) -> Module:
    """``chlo.broadcast_<op>`` and ``chlo.broadcast_select`` to explicit ``broadcast_in_dim``
    (``dynamic_broadcast_in_dim`` with a shape computed by ``get_dimension_size`` for dynamic
    results) and the StableHLO op.

    Other chlo ops (erf, lgamma, top_k, ...) are left as they are: shlo interprets them natively
    (shlo/ops/chlo.py), so decomposing them would only slow programs down.
    """
    return Rewriter(_chlo_pattern).module(module)


