"""shape-legalize-to-stablehlo and stablehlo-canonicalize-dynamism."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..attributes import DenseElementsAttr
from ..ir import Module, Operation, Value
from ..types import TensorType, element_type
from . import register_pass
from ._rewrite import Rewriter, dead_code_elimination, i64_array

_I64, _I32 = element_type("i64"), element_type("i32")


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
