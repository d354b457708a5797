"""`canonicalize` patterns of the `shape` dialect ops that chlo-legalize-to-stablehlo emits for
dynamic broadcasts (MLIR's Shape.cpp folders and canonicalization patterns), so that the
guide's pipeline `chlo-legalize-to-stablehlo, canonicalize, shape-legalize-to-stablehlo` finds
no constraint left where the shapes are known to broadcast, as upstream's:

* `shape_of` of a static tensor -> `const_shape` (ShapeOfOp::fold);
* `cstr_broadcastable` of shapes statically known to broadcast -> `const_witness true`
  (CstrBroadcastableOp::fold);
* `assuming_all` of constant witnesses -> their conjunction, of one witness -> it;
* `assuming` on `const_witness true` -> its body, inlined (AssumingWithTrue).
"""

from __future__ import annotations

import numpy as np

from ..attributes import BoolAttr, DenseElementsAttr
from ..ir import Operation
from ..types import IndexType, OpaqueType, TensorType
from ._patterns import PatternRewriter, pattern
from .chlo.broadcast import _known_extents, statically_broadcastable

CANONICAL = "canonical"  # canonicalize's pattern set (canonicalize.py imports this module)
_WITNESS = OpaqueType("!shape.witness")


def _witness(rw: PatternRewriter, passing: bool) -> Operation:
    return rw.create("shape.const_witness", [], [_WITNESS], {"passing": BoolAttr(passing)})


def _const_witness(v) -> bool | None:  # type: ignore[no-untyped-def]
    o = v.owner
    if isinstance(o, Operation) and o.name == "shape.const_witness":
        return bool(o.attr("passing").value)
    return None


@pattern(CANONICAL, "shape.shape_of")
def fold_static_shape_of(op: Operation, rw: PatternRewriter) -> bool:
    """shape_of(X : static) -> const_shape [X's extents] (an extent-tensor result only)."""
    t, r = op.operands[0].type, op.results[0].type
    if not (isinstance(t, TensorType) and t.is_static and isinstance(r, TensorType)
            and isinstance(r.element_type, IndexType)):
        return False
    extents = np.asarray(t.shape, np.int64).reshape(len(t.shape))  # type: ignore[arg-type]
    attr = DenseElementsAttr(TensorType((len(extents),), IndexType()), extents)
    rw.replace_op(op, rw.create("shape.const_shape", [], [r], {"shape": attr}).results)
    return True


@pattern(CANONICAL, "shape.cstr_broadcastable")
def fold_cstr_broadcastable(op: Operation, rw: PatternRewriter) -> bool:
    """cstr_broadcastable(shapes) -> const_witness true when at most one shape is not a
    scalar, or their extents are statically known to broadcast."""
    known = [_known_extents(v) for v in op.operands]
    if any(k is None for k in known):
        return False
    if sum(1 for k in known if k) > 1 and not statically_broadcastable(known):  # type: ignore
        return False
    rw.replace_op(op, _witness(rw, True).results)
    return True


@pattern(CANONICAL, "shape.assuming_all")
def fold_assuming_all(op: Operation, rw: PatternRewriter) -> bool:
    """assuming_all(constant witnesses) -> their conjunction; assuming_all(w) -> w."""
    if len(op.operands) == 1:
        rw.replace_op(op, [op.operands[0]])
        return True
    consts = [_const_witness(v) for v in op.operands]
    if not op.operands or any(c is None for c in consts):
        return False
    rw.replace_op(op, _witness(rw, all(consts)).results)  # type: ignore[arg-type]
    return True


@pattern(CANONICAL, "shape.assuming")
def inline_assuming_true(op: Operation, rw: PatternRewriter) -> bool:
    """assuming(const_witness true) { body; assuming_yield X } -> body, X."""
    if _const_witness(op.operands[0]) is not True or len(op.regions[0].blocks) != 1:
        return False
    block = op.regions[0].blocks[0]
    yield_op = block.operations[-1]
    values = list(yield_op.operands)
    rw.erase_op(yield_op)
    rw.inline_block_before(block, op)
    rw.replace_op(op, values)
    return True
