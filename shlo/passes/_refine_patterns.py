"""The op patterns of `stablehlo-refine-shapes` (upstream's populateStablehloRefineShapesPatterns
and the shape folder it adds), on the pattern rewriter of ``_patterns.py``: results re-inferred
with the ops' own type inference (registry), dedicated patterns for the ops whose result shape
is a constant operand, while/case/if regions, `func.return` updating the function type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attributes import DenseElementsAttr, ints
from ..errors import Diagnostics
from ..ir import Operation
from ..ops._constraints import constant_ints
from ..registry import ELEMENTWISE, lookup
from ..types import TensorType, Type, element_type
from . import _fold_elementwise, _fold_shape  # noqa: F401  (register the folds)
from ._fold_shape import fold_concat_adjacent_splats
from ._patterns import FoldContext, Pattern, PatternRewriter, constant_of, fold_pattern
from ._refine import (
    OPERAND_WRAPPER, Errors, Refinement, flatten, function_type_of, most_specific_type,
    refine_return_components, refine_return_shape, refine_return_types, refine_values,
    set_function_type,
)
from .canonicalize import fold_cast_chain

__all__ = ["shape_refinement_patterns", "shape_folder_patterns", "SHAPE_FOLDS"]

_I64 = element_type("i64")

SHAPE_FOLDS = frozenset("stablehlo." + n for n in (
    "add", "and", "broadcast_in_dim", "clamp", "compare", "concatenate", "convert", "divide",
    "dynamic_slice", "get_dimension_size", "maximum", "minimum", "multiply", "or", "remainder",
    "reshape", "select", "set_dimension_size", "sign", "slice", "subtract"))
"""The ops of upstream's populateStablehloShapeFolderPatterns."""

_DEDICATED = frozenset({"stablehlo.all_gather", "stablehlo.reduce_scatter", "stablehlo.rng",
                        "stablehlo.custom_call", "stablehlo.dynamic_conv"})
"""Ops with a dedicated pattern that upstream's InferTypeOpInterface pattern does not see."""


# --- op patterns ----------------------------------------------------------------------------------


def _tensor(t: Type) -> TensorType | None:
    return t if isinstance(t, TensorType) else None


def _shard_count(op: Operation) -> int | None:
    if op.attr("channel_handle") is not None and op.attr("use_global_device_ids") is None:
        return None  # cross_replica_and_partition: needs num_partitions
    groups = op.attr("replica_groups")
    if not isinstance(groups, DenseElementsAttr) or len(groups.type.shape or ()) != 2:
        return None
    return int(groups.type.shape[1])  # type: ignore[index]


def refine_all_gather(op: Operation, rw: PatternRewriter) -> bool:
    """The gathered dimension times the replica group size."""
    shards = _shard_count(op)
    t = _tensor(op.operands[0].type) if len(op.operands) == 1 else None
    if shards is None or t is None or t.shape is None:
        return False
    dim = int(op.attr("all_gather_dim").value)
    shape = list(t.shape)
    if shape[dim] is not None:
        shape[dim] *= shards  # type: ignore[operator]
    return refine_return_shape(rw, op, shape)


def refine_reduce_scatter(op: Operation, rw: PatternRewriter) -> bool:
    """The scattered dimension divided by the replica group size."""
    shards = _shard_count(op)
    t = _tensor(op.operands[0].type) if len(op.operands) == 1 else None
    if not shards or t is None or t.shape is None:
        return False
    dim = int(op.attr("scatter_dimension").value)
    shape = list(t.shape)
    if shape[dim] is not None:
        shape[dim] //= shards  # type: ignore[operator]
    return refine_return_shape(rw, op, shape)


def _bit_width(t: TensorType) -> int | None:
    et = t.element_type
    et = getattr(et, "element", et) if et.is_complex else et
    return getattr(et, "width", None)


def refine_bitcast_convert(op: Operation, rw: PatternRewriter) -> bool:
    """The operand's shape, when the bit widths agree (else the ranks differ: not refined)."""
    a, r = _tensor(op.operands[0].type), _tensor(op.results[0].type)
    if a is None or r is None or _bit_width(a) != _bit_width(r):
        return False
    return refine_return_components(rw, op, [Refinement(a.shape)])


def refine_same_shape(op: Operation, rw: PatternRewriter) -> bool:
    """convert, uniform_quantize: the operand's shape (inferConvertOp)."""
    a = _tensor(op.operands[0].type)
    if a is None:
        return False
    return refine_return_components(rw, op, [Refinement(a.shape)])


def refine_shape_operand(index: int) -> Any:
    def fn(op: Operation, rw: PatternRewriter) -> bool:
        return refine_return_shape(rw, op, constant_ints(op.operands[index]))

    fn.__name__ = f"refine_shape_operand_{index}"
    fn.__doc__ = f"The result shape is the constant operand #{index}."
    return fn


def _infer(op: Operation) -> list[Type] | None:
    """The op's own type inference (registry), None when it has none or it fails."""
    d = lookup(op.name)
    if d is None or d.infer is None:
        return None
    diag = Diagnostics()
    try:
        types = d.infer(op, diag)
    except Exception:  # noqa: BLE001 - an inference that cannot cope: no refinement
        return None
    if not types or len(diag):
        return None
    return list(types)


def refine_dynamic_conv(op: Operation, rw: PatternRewriter) -> bool:
    """Constant padding: convolution's inference with that padding."""
    pad = constant_of(op.operands[2]) if len(op.operands) == 3 else None
    if pad is None:
        return False
    attr = DenseElementsAttr(TensorType(tuple(pad.type.shape or ()), _I64),
                             np.asarray(pad.array, dtype=np.int64))
    probe = Operation("stablehlo.convolution", list(op.operands[:2]), list(op.result_types),
                      {**op.properties, "padding": attr}, dict(op.attributes), [])
    types = _infer(probe)
    return types is not None and refine_return_types(rw, op, types)


def refine_dynamic_pad(op: Operation, rw: PatternRewriter) -> bool:
    """Constant paddings: pad's inference."""
    t = _tensor(op.operands[0].type)
    pads = [constant_ints(v) for v in op.operands[2:5]]
    if t is None or t.shape is None or any(p is None or len(p) != len(t.shape) for p in pads):
        return False
    lo, hi, interior = pads
    if any(i < 0 for i in interior):  # type: ignore[union-attr]
        return False
    shape = []
    for d, l, h, i in zip(t.shape, lo, hi, interior):  # type: ignore[arg-type]
        if d is None:
            shape.append(None)
            continue
        n = l + h + d + max(d - 1, 0) * i
        if n < 0:
            return False
        shape.append(n)
    return refine_return_types(rw, op, [TensorType(tuple(shape), t.element_type, t.encoding)])


def refine_real_dynamic_slice(op: Operation, rw: PatternRewriter) -> bool:
    """Constant start/limit/strides (slice's inference), or `limit = start + constant` with unit
    strides (dynamic_slice's: the constant is the slice size)."""
    t = _tensor(op.operands[0].type)
    if t is None or t.shape is None:
        return False
    start, limit, strides = (constant_ints(v) for v in op.operands[1:4])
    rank = len(t.shape)
    if start is not None and limit is not None and strides is not None:
        if not len(start) == len(limit) == len(strides) == rank:
            return False
        shape: list[int | None] = []
        for d, s, e, k in zip(t.shape, start, limit, strides):
            if k <= 0 or s < 0 or e < s or (d is not None and e > d):
                return False
            shape.append(-(-(e - s) // k))
        return refine_return_types(rw, op, [TensorType(tuple(shape), t.element_type)])
    add = rw.defining(op.operands[2], "stablehlo.add")
    if add is None:
        return False
    a, b = add.operands
    sizes = None
    if a is op.operands[1] and constant_of(b) is not None:
        sizes = constant_ints(b)
    elif b is op.operands[1] and constant_of(a) is not None:
        sizes = constant_ints(a)
    if sizes is None or strides is None or any(k != 1 for k in strides):
        return False
    if len(sizes) != rank or any(s < 0 or (d is not None and s > d)
                                 for s, d in zip(sizes, t.shape)):
        return False
    return refine_return_components(rw, op, [Refinement(tuple(sizes))])


def _dims_attr(op: Operation, key: str) -> tuple[int, ...]:
    attr = op.attr("ragged_dot_dimension_numbers")
    v = attr.get(key, ()) if hasattr(attr, "get") else getattr(attr, key, ())
    return tuple(ints(v, ())) if not isinstance(v, tuple) else v


def refine_ragged_dot(op: Operation, rw: PatternRewriter) -> bool:
    """chlo.ragged_dot: batch, lhs free and rhs free dimensions (rhs group dimensions left
    out); a ragged contracting dimension adds the group dimension in front."""
    lhs, rhs, groups = (_tensor(v.type) for v in op.operands)
    if lhs is None or rhs is None or groups is None or None in (lhs.shape, rhs.shape,
                                                                 groups.shape):
        return False
    lb, rb = _dims_attr(op, "lhs_batching_dimensions"), _dims_attr(op, "rhs_batching_dimensions")
    lc = _dims_attr(op, "lhs_contracting_dimensions")
    rc = _dims_attr(op, "rhs_contracting_dimensions")
    lr = _dims_attr(op, "lhs_ragged_dimensions")
    rg = _dims_attr(op, "rhs_group_dimensions")
    if len(lr) != 1:
        return False
    shape = [lhs.shape[d] for d in lb]  # type: ignore[index]
    shape += [d for i, d in enumerate(lhs.shape) if i not in lb and i not in lc]  # type: ignore
    shape += [d for i, d in enumerate(rhs.shape)  # type: ignore[arg-type]
              if i not in rb and i not in rc and i not in rg]
    if lr[0] in lc:
        shape = [groups.shape[-1] if groups.shape else None] + shape  # type: ignore[index]
    return refine_return_components(rw, op, [Refinement(tuple(shape))])


def _custom_call_refinements(op: Operation, errors: Errors) -> list[Refinement] | None:
    """hlo::getShapeRefinements: one constant shape operand per (flattened) result."""
    attr = op.attr("indices_of_shape_operands")
    if not isinstance(attr, DenseElementsAttr):
        return None
    flat = flatten(op.result_types)
    suffix = ", with tuples flattened" if len(flat) != len(op.results) else ""
    idx = [int(x) for x in np.asarray(attr.array).reshape(-1)]
    if len(idx) != len(flat):
        errors.error(op.location, f"indices_of_shape_operands: number of elements ({len(idx)}) "
                     f"must be equal to the number of operation results ({len(flat)}){suffix}")
        return None
    out = []
    for k, (i, t) in enumerate(zip(idx, flat)):
        if i < 0 or i >= len(op.operands):
            errors.error(op.location, f"indices_of_shape_operands: index #{k} ({i}) must be "
                         f"within bounds for operation operands (from 0 to {len(op.operands)})")
            return None
        shape = constant_ints(op.operands[i])
        if shape is None:
            return None
        if any(d < 0 for d in shape) or (isinstance(t, TensorType) and t.shape is not None and (
                len(t.shape) != len(shape) or
                any(a is not None and a != b for a, b in zip(t.shape, shape)))):
            errors.error(op.location, f"indices_of_shape_operands: refinement #{k} "
                         f"([{', '.join(map(str, shape))}]) must be compatible with operation "
                         f"result #{k} ('{t}'){suffix}")
            return None
        out.append(Refinement(tuple(shape)))
    return out


def refine_custom_call(errors: Errors) -> Any:
    def refine_custom_call(op: Operation, rw: PatternRewriter) -> bool:
        """Result shapes from the constant operands `indices_of_shape_operands` names; the
        operand wrapper is then replaced by its operand."""
        refs = _custom_call_refinements(op, errors)
        if refs is None or not refine_return_components(rw, op, refs):
            return False
        if getattr(op.attr("call_target_name"), "value", None) == OPERAND_WRAPPER:
            operand = op.operands[0]
            if operand.type == op.results[0].type:
                rw.replace_all_uses(op.results[0], operand)
            if rw.use_empty(op.results[0]):
                rw.erase_op(op)
        return True

    return refine_custom_call


def refine_while(op: Operation, rw: PatternRewriter) -> bool:
    """The operand types go to the cond and body arguments (the result types follow through
    the while's own type inference)."""
    types = [v.type for v in op.operands]
    changed = False
    for region in op.regions[:2]:
        if region.blocks and refine_values(rw, op, region.blocks[0].arguments, types):
            changed = True
    if changed:
        rw.modified(op)
    return changed


def update_function_type(op: Operation, rw: PatternRewriter) -> bool:
    """`func.return` of casts from a more specific type: the casts go, the function type
    takes the specific types (UpdateFunctionTypePattern)."""
    func = op.parent.parent.parent if op.parent is not None and op.parent.parent else None
    if func is None or func.name != "func.func":
        return False
    new_types = [v.type for v in op.operands]
    casts: dict[int, Operation] = {}
    operands = list(op.operands)
    for i, v in enumerate(op.operands):
        cast = rw.defining(v, "builtin.unrealized_conversion_cast")
        if cast is None or len(cast.operands) != 1 or len(cast.results) != 1:
            continue
        src, dst = cast.operands[0].type, cast.results[0].type
        ms = most_specific_type(src, dst)
        if ms is None or ms == dst:
            continue
        new_types[i] = src
        operands[i] = cast.operands[0]
        casts[id(cast)] = cast
    if not casts:
        return False
    for cast in casts.values():
        rw.replace_op(cast, list(cast.operands))
    ft = function_type_of(func)
    set_function_type(func, ft.inputs, new_types)
    return True


def update_region_type(op: Operation, rw: PatternRewriter) -> bool:
    """A case/if branch returning more specific types: revisit the case/if."""
    parent = op.parent.parent.parent if op.parent is not None and op.parent.parent else None
    if parent is None or parent.name not in ("stablehlo.case", "stablehlo.if"):
        return False
    for rt, vt in zip(parent.result_types, (v.type for v in op.operands)):
        ms = most_specific_type(rt, vt)
        if ms is not None and ms != rt:
            rw.modified(parent)
            return True
    return False


def _elementwise_compatible(op: Operation) -> bool:
    """The operands' shapes agree (scalars aside: select's pred, clamp's bounds)."""
    t: Type | None = None
    for v in op.operands:
        if isinstance(v.type, TensorType) and v.type.shape == ():
            continue
        t = v.type if t is None else most_specific_type(t, v.type)
        if t is None:
            return False
    return True


def refine_infer_type(op: Operation, rw: PatternRewriter) -> bool:
    """Any StableHLO/CHLO op with type inference: its results re-inferred (benefit 0)."""
    if op.dialect not in ("stablehlo", "chlo") or op.name in _DEDICATED:
        return False
    d = lookup(op.name)
    if d is None or d.infer is None:
        return False
    if d.has(ELEMENTWISE) and not _elementwise_compatible(op):
        return False  # upstream's inference fails on conflicting operand shapes
    types = _infer(op)
    if types is None or len(types) != len(op.results):
        return False
    return refine_return_types(rw, op, types)


def shape_refinement_patterns(errors: Errors) -> list[Pattern]:
    """populateStablehloRefineShapesPatterns (without the call pattern)."""
    fixed: list[tuple[str | None, Any, int]] = [
        ("stablehlo.all_gather", refine_all_gather, 1),
        ("stablehlo.bitcast_convert", refine_bitcast_convert, 1),
        ("stablehlo.convert", refine_same_shape, 1),
        ("stablehlo.custom_call", refine_custom_call(errors), 1),
        ("chlo.ragged_dot", refine_ragged_dot, 1),
        ("stablehlo.dynamic_broadcast_in_dim", refine_shape_operand(1), 1),
        ("stablehlo.dynamic_conv", refine_dynamic_conv, 1),
        ("stablehlo.dynamic_iota", refine_shape_operand(0), 1),
        ("stablehlo.dynamic_pad", refine_dynamic_pad, 1),
        ("stablehlo.dynamic_reshape", refine_shape_operand(1), 1),
        (None, refine_infer_type, 0),
        ("stablehlo.real_dynamic_slice", refine_real_dynamic_slice, 1),
        ("stablehlo.reduce_scatter", refine_reduce_scatter, 1),
        ("stablehlo.rng", refine_shape_operand(2), 1),
        ("stablehlo.uniform_quantize", refine_same_shape, 1),
        ("stablehlo.while", refine_while, 1),
        ("func.return", update_function_type, 1),
        ("stablehlo.return", update_region_type, 1),
    ]
    return [Pattern(root, fn, benefit, fn.__name__) for root, fn, benefit in fixed]


def shape_folder_patterns() -> list[Pattern]:
    """populateStablehloShapeFolderPatterns with `optimize-float=false` and no element limit,
    plus MLIR's fold of `unrealized_conversion_cast` (the greedy driver folds ops)."""
    ctx = FoldContext(element_limit=np.iinfo(np.int64).max, optimize_float=False)
    pats = [p for p in fold_pattern(ctx) if p.root in SHAPE_FOLDS]
    pats.append(Pattern("stablehlo.concatenate", fold_concat_adjacent_splats, 1,
                        "fold_concat_adjacent_splats"))
    pats.append(Pattern("builtin.unrealized_conversion_cast", fold_cast_chain, 1,
                        "fold_cast_chain"))
    return pats
