"""The rest of the quantization guide's pipeline (docs/quantization.md of openxla/stablehlo,
"Evaluating Quantized Programs")::

    stablehlo-legalize-quant-to-math, chlo-legalize-to-stablehlo, canonicalize,
    shape-legalize-to-stablehlo, stablehlo-canonicalize-dynamism

Upstream needs the four later steps because its interpreter runs neither chlo nor shape-dialect
ops. shlo interprets chlo ops and dynamic shapes natively, so the steps are optional here; each
does what means something for a shlo program (see each pass's docstring).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..attributes import DenseElementsAttr, EnumAttr, ints
from ..ir import Module, Operation, Value
from ..types import TensorType, element_type
from . import register_pass
from ._rewrite import Rewriter, dead_code_elimination, i64_array

__all__ = ["chlo_legalize_to_stablehlo", "canonicalize", "shape_legalize_to_stablehlo",
           "canonicalize_dynamism"]

_I64, _I32 = element_type("i64"), element_type("i32")


# --- chlo-legalize-to-stablehlo ------------------------------------------------------------------


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


# --- canonicalize --------------------------------------------------------------------------------

_IDENTITIES = frozenset({"stablehlo.convert", "stablehlo.bitcast_convert", "stablehlo.reshape"})


def _canon_pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    if op.name in _IDENTITIES and len(op.operands) == 1 and len(op.results) == 1:
        src = rw.get(op.operands[0])
        if src.type == op.results[0].type:
            return [src]
    if op.name == "stablehlo.broadcast_in_dim" and op.operands[0].type == op.results[0].type:
        dims = ints(op.attr("broadcast_dimensions"), ())
        if tuple(dims) == tuple(range(len(dims))):
            return [rw.get(op.operands[0])]
    if op.name == "stablehlo.transpose" and op.operands[0].type == op.results[0].type:
        perm = ints(op.attr("permutation"), ())
        if tuple(perm) == tuple(range(len(perm))):
            return [rw.get(op.operands[0])]
    return None


@register_pass("canonicalize")
def canonicalize(module: Module, options: dict[str, str] | None = None) -> Module:
    """A small part of MLIR's canonicalization: identity ``convert``/``bitcast_convert``/
    ``reshape``/``broadcast_in_dim``/``transpose`` ops are removed, then side-effect-free ops
    whose results are unused.

    No constant folding and none of the other MLIR patterns: shlo's interpreter does not need
    them, and the programs stay recognisable.
    """
    return dead_code_elimination(Rewriter(_canon_pattern).module(module))


# --- shape-legalize-to-stablehlo ------------------------------------------------------------------


@register_pass("shape-legalize-to-stablehlo", noop=True)
def shape_legalize_to_stablehlo(module: Module, options: dict[str, str] | None = None) -> Module:
    """No-op in shlo: it lowers shape-dialect ops (``shape.shape_of``, ``shape.broadcast``, ...),
    which upstream's chlo-legalize-to-stablehlo emits for dynamic broadcasts; shlo's
    chlo-legalize-to-stablehlo computes shapes with StableHLO ops directly, so there is never
    anything to lower. The module is returned unchanged."""
    return module


# --- stablehlo-canonicalize-dynamism --------------------------------------------------------------


def _const(rw: Rewriter, v: Value) -> np.ndarray | None:
    src = rw.get(v)
    owner = src.owner
    if isinstance(owner, Operation) and owner.name == "stablehlo.constant":
        attr = owner.attr("value")
        if isinstance(attr, DenseElementsAttr):
            return np.asarray(attr.array)
    return None


def _static_result(op: Operation) -> TensorType | None:
    t = op.results[0].type if len(op.results) == 1 else None
    return t if isinstance(t, TensorType) and t.is_static else None


def _dynamism_pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    result = _static_result(op)
    if result is None:
        return None
    name = op.name
    args = [rw.get(v) for v in op.operands]
    attrs = dict(op.properties)
    attrs.update(op.attributes)
    if name == "stablehlo.dynamic_broadcast_in_dim" and _const(rw, op.operands[1]) is not None:
        props = {"broadcast_dimensions": op.attr("broadcast_dimensions")}
        return [rw.emit1("stablehlo.broadcast_in_dim", [args[0]], result, props)]
    if name == "stablehlo.dynamic_reshape" and _const(rw, op.operands[1]) is not None:
        return [rw.emit1("stablehlo.reshape", [args[0]], result)]
    if name == "stablehlo.dynamic_iota" and _const(rw, op.operands[0]) is not None:
        return [rw.emit1("stablehlo.iota", [], result,
                         {"iota_dimension": op.attr("iota_dimension")})]
    if name == "stablehlo.dynamic_pad":
        vals = [_const(rw, v) for v in op.operands[2:5]]
        if all(v is not None for v in vals):
            props = {k: i64_array(v.reshape(-1)) for k, v in zip(
                ("edge_padding_low", "edge_padding_high", "interior_padding"), vals)}
            return [rw.emit1("stablehlo.pad", args[:2], result, props)]
    if name == "stablehlo.real_dynamic_slice":
        vals = [_const(rw, v) for v in op.operands[1:4]]
        if all(v is not None for v in vals):
            props = {k: i64_array(v.reshape(-1)) for k, v in zip(
                ("start_indices", "limit_indices", "strides"), vals)}
            return [rw.emit1("stablehlo.slice", args[:1], result, props)]
    if name == "stablehlo.dynamic_conv":
        pad = _const(rw, op.operands[2])
        if pad is not None:
            props = {k: v for k, v in attrs.items()}
            props["padding"] = DenseElementsAttr(TensorType(tuple(pad.shape), _I64),
                                                 pad.astype(np.int64))
            return [rw.emit1("stablehlo.convolution", args[:2], result, props)]
    return None


@register_pass("stablehlo-canonicalize-dynamism")
def canonicalize_dynamism(module: Module, options: dict[str, str] | None = None) -> Module:
    """Dynamic ops whose shape operands are constants and whose result type is static become
    their static forms: dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota, dynamic_pad,
    real_dynamic_slice, dynamic_conv. Other ops (and dynamic result types, which would need shape
    refinement) are left as they are: shlo interprets dynamic ops directly."""
    return dead_code_elimination(Rewriter(_dynamism_pattern).module(module))
