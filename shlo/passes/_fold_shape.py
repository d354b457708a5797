"""Constant folding of the shape and data-movement ops (`stablehlo-aggressive-folder`):
reshape, broadcast_in_dim, transpose, reverse, slice, dynamic_slice, concatenate, iota,
get_dimension_size, set_dimension_size. Folds registered on the op definitions
(``registry.folder``) run the op's own kernel; ``fold_concat_adjacent_splats`` is a pattern.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..attributes import DenseElementsAttr, int_attr, ints
from ..ir import Operation
from ..registry import folder
from ..types import TensorType
from ._fold_elementwise import is_int, shape_fold_dtype
from ._patterns import FoldContext, PatternRewriter, constant_of, dense, pattern

FOLDER = "folder"


def _static(t: Any) -> bool:
    return isinstance(t, TensorType) and t.is_static


def _splat(c: DenseElementsAttr, t: TensorType) -> DenseElementsAttr:
    return dense(c.array.reshape(-1)[0], t)


def _kernel(op: Operation, ctx: FoldContext, cs: Sequence[DenseElementsAttr]
            ) -> list[DenseElementsAttr]:
    return [dense(ctx.evaluate(op, [c.array for c in cs])[0], op.results[0].type)]


@folder("stablehlo.reshape")
def _fold_reshape(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    c = ctx.constant(op.operands[0])
    if c is None or not _static(t) or not shape_fold_dtype(t, ctx, allow_complex=True):
        return None
    return [dense(c.array.reshape(t.shape), t)]


@folder("stablehlo.broadcast_in_dim")
def _fold_broadcast(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    c = ctx.constant(op.operands[0])
    if c is None or not c.is_splat or not _static(t) or \
            not shape_fold_dtype(t, ctx, allow_complex=True):
        return None
    return [_splat(c, t)]


@folder("stablehlo.transpose")
def _fold_transpose(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    c = ctx.constant(op.operands[0])
    if c is None or not _static(t):
        return None
    if c.is_splat:
        return [_splat(c, t)]
    et = t.element_type
    if not (is_int(et) or et.is_float) and c.array.size:
        return None
    return _kernel(op, ctx, [c])


@folder("stablehlo.reverse")
def _fold_reverse(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.operands[0].type
    if not _static(t) or not ctx.within_limit(t):
        return None
    c = ctx.constant(op.operands[0])
    if c is None:
        return None
    dims = ints(op.attr("dimensions"), ())
    if not dims or t.num_elements <= 1 or c.is_splat or all(t.shape[d] == 1 for d in dims):
        return None  # trivial: the simplification handles it
    et = t.element_type
    if not (is_int(et) or et.is_float):
        return None
    return _kernel(op, ctx, [c])


@folder("stablehlo.slice")
def _fold_slice(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    if not _static(t) or not shape_fold_dtype(t, ctx) or not _static(op.operands[0].type):
        return None
    c = ctx.constant(op.operands[0])
    if c is None:
        return None
    if c.is_splat:
        return [_splat(c, t)]
    return _kernel(op, ctx, [c])


@folder("stablehlo.dynamic_slice")
def _fold_dynamic_slice(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    c = ctx.constant(op.operands[0])
    if c is None or not c.is_splat or not _static(t):
        return None
    return [_splat(c, t)]


@folder("stablehlo.concatenate")
def _fold_concatenate(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    if not _static(t) or not shape_fold_dtype(t, ctx) or not ctx.within_limit(t):
        return None
    cs = ctx.constants(op)
    if cs is None:
        return None
    return _kernel(op, ctx, cs)


@folder("stablehlo.iota")
def _fold_iota(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    if not _static(t) or not ctx.within_limit(t) or not is_int(t.element_type):
        return None
    if t.num_elements > 1:
        return None  # upstream folds only the empty and one-element iotas
    return [dense(np.zeros(t.shape, t.element_type.dtype), t)]


@folder("stablehlo.get_dimension_size")
def _fold_get_dimension_size(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    src = op.operands[0].type
    if not _static(t) or not shape_fold_dtype(t, ctx) or not isinstance(src, TensorType):
        return None
    d = src.shape[int_attr(op, "dimension")]
    if d is None:
        return None
    return [dense(d, t)]


@folder("stablehlo.set_dimension_size")
def _fold_set_dimension_size(op: Operation, ctx: FoldContext) -> Sequence[Any] | None:
    t = op.results[0].type
    if op.operands[0].type != t:
        return None
    c = ctx.constant(op.operands[1])
    if c is None or not c.is_splat:
        return None
    if int(c.array.reshape(-1)[0]) != t.shape[int_attr(op, "dimension")]:
        return None
    return [op.operands[0]]


@pattern(FOLDER, "stablehlo.concatenate")
def fold_concat_adjacent_splats(op: Operation, rw: PatternRewriter) -> bool:
    """concat(splat_a, splat_a, X) -> concat(splat_a_resized, X)."""
    dim = int_attr(op, "dimension")
    new_ops = []
    i, n = 0, len(op.operands)
    while i < n:
        v = op.operands[i]
        c = constant_of(v)
        if c is not None and c.is_splat:
            j = i + 1
            while j < n:
                c2 = constant_of(op.operands[j])
                if c2 is None or not c2.is_splat or c2 != c:
                    break
                j += 1
            if j - i > 1:
                shape = list(c.type.shape)
                shape[dim] *= j - i
                new_ops.append(rw.constant(_splat(c, TensorType(tuple(shape),
                                                                 c.type.element_type))))
                i = j
                continue
        new_ops.append(v)
        i += 1
    if len(new_ops) == n:
        return False
    new = rw.create("stablehlo.concatenate", new_ops, [op.results[0].type],
                    dict(op.properties), dict(op.attributes))
    rw.replace_op(op, new.results)
    return True
