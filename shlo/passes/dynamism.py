"""stablehlo-canonicalize-dynamism: dynamic ops whose shape operands are constants become their
static forms (upstream's StablehloCanonicalizeDynamism.cpp).

The patterns, upstream's order, on the greedy driver (top-down, at most 2 iterations):

* custom_call with `indices_of_shape_operands` -> custom_call without the shape operands (and
  their `operand_layouts`), when they are constants compatible with the static result types;
* dynamic_broadcast_in_dim -> broadcast_in_dim (static operand and result, constant shape);
* dynamic_conv -> convolution (constant padding); dynamic_gather -> gather (constant
  slice_sizes); dynamic_iota -> iota and dynamic_reshape -> reshape (constant shape, static
  result); dynamic_pad -> pad (constant paddings);
* real_dynamic_slice -> dynamic_slice (unit strides, limit = start + constant) or slice
  (constant start/limit/strides); both keep the op's discardable attributes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attributes import ArrayAttr, DenseElementsAttr
from ..ir import Module, Operation, Value
from ..registry import lookup
from ..types import TensorType, TupleType, Type, element_type, format_type
from . import register_pass
from ._driver import GreedyConfig, apply_to_module
from ._patterns import Pattern, PatternRewriter, constant_of, pattern, patterns
from ._rewrite import PassError, i64_array

DYNAMISM = "canonicalize-dynamism"
_I64 = element_type("i64")


def match_ints(v: Value) -> list[int] | None:
    """The integers of the constant defining ``v`` (upstream's hlo::matchInts)."""
    c = constant_of(v)
    if c is None:
        return None
    et = c.type.element_type
    if not (et.is_integer or et.is_bool or et.name == "index"):
        return None
    return [int(x) for x in np.asarray(c.array).reshape(-1)]


def _static(t: Type) -> bool:
    return isinstance(t, TensorType) and t.is_static


def _discardable(op: Operation) -> dict[str, Any]:
    """The op's attributes that are not inherent (MLIR's discardable attribute dictionary)."""
    d = lookup(op.name)
    inherent = d.inherent if d is not None and d.inherent is not None else frozenset()
    return {k: v for k, v in op.attributes.items() if k not in inherent}


def _replace(op: Operation, rw: PatternRewriter, name: str, operands: list[Value],
             properties: dict[str, Any], attributes: dict[str, Any] | None = None) -> bool:
    new = rw.create(name, operands, [r.type for r in op.results], properties, attributes or {})
    rw.replace_op(op, new.results)
    return True


def _flat_types(types: list[Type]) -> list[Type]:
    out: list[Type] = []
    for t in types:
        if isinstance(t, TupleType):
            out.extend(_flat_types(list(t.types)))
        else:
            out.append(t)
    return out


def shape_refinements(op: Operation) -> list[list[int]] | None:
    """The refinements `indices_of_shape_operands` gives ``op``'s results (hlo's
    getShapeRefinements): None when the attribute is absent or a shape operand is not constant;
    a malformed attribute or a refinement incompatible with its result is an error."""
    attr = op.attr("indices_of_shape_operands")
    if not isinstance(attr, DenseElementsAttr) or not (
            attr.type.element_type.is_integer or attr.type.element_type.name == "index"):
        return None
    flat = _flat_types([r.type for r in op.results])
    suffix = ", with tuples flattened" if len(flat) != len(op.results) else ""
    n = int(np.asarray(attr.array).size)
    if n != len(flat):
        raise PassError(f"indices_of_shape_operands: number of elements ({n}) must be equal to "
                        f"the number of operation results ({len(flat)}){suffix}", op.location)
    if len(attr.type.shape) != 1:
        raise PassError("indices_of_shape_operands: must have rank = 1", op.location)
    if attr.type.element_type != _I64:
        raise PassError("indices_of_shape_operands: must have i64 element type", op.location)
    out: list[list[int]] = []
    for k, (idx, rt) in enumerate(zip(np.asarray(attr.array).reshape(-1), flat)):
        idx = int(idx)
        if idx < 0 or idx >= len(op.operands):
            raise PassError(f"indices_of_shape_operands: index #{k} ({idx}) must be within "
                            f"bounds for operation operands (from 0 to {len(op.operands)})",
                            op.location)
        ref = match_ints(op.operands[idx])
        if ref is None:
            return None
        ok = isinstance(rt, TensorType) and (rt.shape is None or (
            len(rt.shape) == len(ref) and all(d is None or d < 0 or d == r
                                               for d, r in zip(rt.shape, ref))))
        if not ok:
            raise PassError(f"indices_of_shape_operands: refinement #{k} "
                            f"([{', '.join(map(str, ref))}]) must be compatible with operation "
                            f"result #{k} ('{format_type(rt)}'){suffix}", op.location)
        out.append(ref)
    return out


@pattern(DYNAMISM, "stablehlo.custom_call")
def canonicalize_custom_call(op: Operation, rw: PatternRewriter) -> bool:
    """custom_call(..., shape operands) {indices_of_shape_operands} -> custom_call(...)."""
    if shape_refinements(op) is None:
        return False
    indices = {int(i) for i in np.asarray(op.attr("indices_of_shape_operands").array).ravel()}
    if len(indices) > len(op.results) or not all(_static(r.type) for r in
                                                 op.results[:len(indices)]):
        return False
    props = dict(op.properties)
    attrs = {k: v for k, v in op.attributes.items() if k != "indices_of_shape_operands"}
    for store in (props, attrs):
        layouts = store.get("operand_layouts")
        if isinstance(layouts, ArrayAttr):
            store["operand_layouts"] = ArrayAttr(tuple(
                x for i, x in enumerate(layouts.values) if i not in indices))
    operands = [v for i, v in enumerate(op.operands) if i not in indices]
    return _replace(op, rw, op.name, operands, props, attrs)


@pattern(DYNAMISM, "stablehlo.dynamic_broadcast_in_dim")
def canonicalize_dynamic_broadcast_in_dim(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_broadcast_in_dim(X, constant) -> broadcast_in_dim(X) (static X and result)."""
    if not _static(op.operands[0].type) or match_ints(op.operands[1]) is None \
            or not _static(op.results[0].type):
        return False
    return _replace(op, rw, "stablehlo.broadcast_in_dim", [op.operands[0]],
                    {"broadcast_dimensions": op.attr("broadcast_dimensions")})


_CONV_PROPS = ("window_strides", "lhs_dilation", "rhs_dilation", "window_reversal",
               "dimension_numbers", "feature_group_count", "batch_group_count",
               "precision_config")


@pattern(DYNAMISM, "stablehlo.dynamic_conv")
def canonicalize_dynamic_conv(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_conv(lhs, rhs, constant padding) -> convolution(lhs, rhs)."""
    pad = match_ints(op.operands[2])
    if pad is None:
        return False
    props = {k: op.attr(k) for k in _CONV_PROPS if op.attr(k) is not None}
    arr = np.asarray(pad, np.int64).reshape(len(pad) // 2, 2)
    props["padding"] = DenseElementsAttr(TensorType(arr.shape, _I64), arr)
    return _replace(op, rw, "stablehlo.convolution", list(op.operands[:2]), props)


@pattern(DYNAMISM, "stablehlo.dynamic_gather")
def canonicalize_dynamic_gather(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_gather(X, indices, constant slice_sizes) -> gather(X, indices)."""
    sizes = match_ints(op.operands[2])
    if sizes is None:
        return False
    props = {"dimension_numbers": op.attr("dimension_numbers"),
             "slice_sizes": i64_array(sizes)}
    if op.attr("indices_are_sorted") is not None:
        props["indices_are_sorted"] = op.attr("indices_are_sorted")
    return _replace(op, rw, "stablehlo.gather", list(op.operands[:2]), props)


@pattern(DYNAMISM, "stablehlo.dynamic_iota")
def canonicalize_dynamic_iota(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_iota(constant shape) -> iota (static result)."""
    if match_ints(op.operands[0]) is None or not _static(op.results[0].type):
        return False
    return _replace(op, rw, "stablehlo.iota", [], {"iota_dimension": op.attr("iota_dimension")})


@pattern(DYNAMISM, "stablehlo.dynamic_pad")
def canonicalize_dynamic_pad(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_pad(X, pad, constant low, high, interior) -> pad(X, pad)."""
    vals = [match_ints(v) for v in op.operands[2:5]]
    if any(v is None for v in vals):
        return False
    props = {k: i64_array(v) for k, v in zip(  # type: ignore[arg-type]
        ("edge_padding_low", "edge_padding_high", "interior_padding"), vals)}
    return _replace(op, rw, "stablehlo.pad", list(op.operands[:2]), props)


@pattern(DYNAMISM, "stablehlo.dynamic_reshape")
def canonicalize_dynamic_reshape(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_reshape(X, constant shape) -> reshape(X) (static result)."""
    if match_ints(op.operands[1]) is None or not _static(op.results[0].type):
        return False
    return _replace(op, rw, "stablehlo.reshape", [op.operands[0]], {})


def _sizes_from_limit(op: Operation) -> list[int] | None:
    """C when the limit indices are `add(start, C)` or `add(C, start)`."""
    start = op.operands[1]
    add = PatternRewriter.defining(op.operands[2], "stablehlo.add")
    if add is None:
        return None
    a, b = add.operands
    if a is start and constant_of(b) is not None:
        return match_ints(b)
    if b is start and constant_of(a) is not None:
        return match_ints(a)
    return None


@pattern(DYNAMISM, "stablehlo.real_dynamic_slice")
def canonicalize_real_dynamic_slice_to_dynamic_slice(op: Operation, rw: PatternRewriter
                                                     ) -> bool:
    """real_dynamic_slice(X, start, start + C, ones) -> dynamic_slice(X, start[0], ..., C)."""
    strides = match_ints(op.operands[3])
    if strides is None or any(s != 1 for s in strides):
        return False
    sizes = _sizes_from_limit(op)
    if sizes is None:
        return False
    starts = rw.scalars_of(op.operands[1], len(sizes))
    return _replace(op, rw, "stablehlo.dynamic_slice", [op.operands[0], *starts],
                    {"slice_sizes": i64_array(sizes)}, _discardable(op))


@pattern(DYNAMISM, "stablehlo.real_dynamic_slice")
def canonicalize_real_dynamic_slice_to_slice(op: Operation, rw: PatternRewriter) -> bool:
    """real_dynamic_slice(X, constant start, limit, strides) -> slice(X)."""
    vals = [match_ints(v) for v in op.operands[1:4]]
    if any(v is None for v in vals):
        return False
    props = {k: i64_array(v) for k, v in zip(  # type: ignore[arg-type]
        ("start_indices", "limit_indices", "strides"), vals)}
    return _replace(op, rw, "stablehlo.slice", [op.operands[0]], props, _discardable(op))


@register_pass("stablehlo-canonicalize-dynamism")
def canonicalize_dynamism(module: Module, options: dict[str, str] | None = None) -> Module:
    """Canonicalizes dynamic operations into static operations.

    Dynamic ops whose shape operands are constants become their static forms (see
    :mod:`shlo.passes.dynamism`); the greedy driver top-down, at most 2 iterations (which also
    folds `unrealized_conversion_cast` chains, as MLIR's driver folds ops)."""
    from .canonicalize import fold_cast_chain

    config = GreedyConfig(max_iterations=2, top_down=True)
    # the greedy driver also folds ops: of those shlo knows, only cast chains have a folder
    folds = [Pattern("builtin.unrealized_conversion_cast", fold_cast_chain, 1, "fold")]
    return apply_to_module(module, patterns(DYNAMISM) + folds, config,
                           "stablehlo-canonicalize-dynamism")
