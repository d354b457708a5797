"""The shape-dialect canonicalizations `canonicalize` applies to what the chlo lowering leaves
(mlir/lib/Dialect/Shape/IR/Shape.cpp and ShapeCanonicalization.td), in the ``canonical`` set:

* `shape.assuming` on `shape.const_witness true`: its region inlined (AssumingWithTrue);
* `shape.broadcast` / `shape.cstr_broadcastable` / `shape.assuming_all` are commutative:
  constant operands move to the end, in order (MLIR's ``foldCommutative``);
* `shape.broadcast`: two or more constant shapes folded into one
  (BroadcastFoldConstantOperandsPattern), a single operand of the result's type forwarded
  (``BroadcastOp::fold``), a `tensor<?xindex>` result made `tensor<Nxindex>` when every operand
  has a static extent count (BroadcastConcretizeResultTypePattern);
* `tensor.cast` of a `shape.const_shape` to a static type: the constant of that type
  (TensorCastConstShape); `tensor.cast` to its operand's type, and a cast back to the type a
  cast started from: the original value (``CastOp::fold``, ChainedTensorCast).
"""

from __future__ import annotations

import numpy as np

from ...attributes import BoolAttr, DenseElementsAttr
from ...ir import Operation, Value
from ...ops.foreign.shape import broadcast_shapes
from ...types import IndexType, TensorType
from .._patterns import PatternRewriter, is_constant_op, pattern
from ..canonicalize import CANONICAL

_CONSTANT_LIKE = frozenset({"shape.const_shape", "shape.const_witness"})


def _is_constant(v: Value) -> bool:
    """MLIR's ``m_Constant``: defined by a ConstantLike op."""
    o = v.owner
    return isinstance(o, Operation) and (o.name in _CONSTANT_LIKE or is_constant_op(o))


def _const_shape(v: Value) -> tuple[int, ...] | None:
    o = v.owner
    if isinstance(o, Operation) and o.name == "shape.const_shape":
        a = o.attr("shape")
        if isinstance(a, DenseElementsAttr):
            return tuple(int(x) for x in np.asarray(a.array).reshape(-1))
    return None


def _extent_tensor(n: int | None) -> TensorType:
    return TensorType((n,), IndexType())


@pattern(CANONICAL, "shape.assuming")
def assuming_with_true(op: Operation, rw: PatternRewriter) -> bool:
    """assuming(const_witness true) { ops; yield X } -> ops, X (AssumingWithTrue)."""
    w = op.operands[0].owner if op.operands else None
    if not (isinstance(w, Operation) and w.name == "shape.const_witness"
            and isinstance(w.attr("passing"), BoolAttr) and w.attr("passing").value):
        return False
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return False
    block = op.regions[0].blocks[0]
    term = block.terminator
    if term is None or term.name != "shape.assuming_yield":
        return False
    yielded = list(term.operands)
    rw.inline_block_before(block, op)
    rw.erase_op(term)
    rw.replace_op(op, yielded)
    return True


def _move_constants_last(op: Operation, rw: PatternRewriter) -> bool:
    ins = list(op.operands)
    if len(ins) < 2:
        return False
    ordered = [v for v in ins if not _is_constant(v)] + [v for v in ins if _is_constant(v)]
    if all(a is b for a, b in zip(ordered, ins)):
        return False
    rw.set_operands(op, ordered)
    return True


for _name in ("shape.broadcast", "shape.cstr_broadcastable", "shape.assuming_all"):
    pattern(CANONICAL, _name, 2)(_move_constants_last)


@pattern(CANONICAL, "shape.broadcast")
def broadcast_forward_single_operand(op: Operation, rw: PatternRewriter) -> bool:
    """broadcast(X) -> X when X has the result's type (BroadcastOp::fold)."""
    if len(op.operands) != 1 or op.operands[0].type != op.results[0].type:
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


@pattern(CANONICAL, "shape.broadcast")
def broadcast_fold_constant_operands(op: Operation, rw: PatternRewriter) -> bool:
    """broadcast(A, [c1], B, [c2]) -> broadcast(A, B, [broadcast of c1, c2])."""
    folded: tuple[int, ...] = ()
    rest: list[Value] = []
    consts: list[Value] = []
    for v in op.operands:
        s = _const_shape(v)
        if s is not None:
            b = broadcast_shapes([folded, s])
            if b is not None:
                folded = b
                consts.append(v)
                continue
        rest.append(v)
    if len(consts) < 2:
        return False
    t = _extent_tensor(len(folded))
    # an operand that already is the folded constant is reused (the folder would unique it)
    same = next((v for v in consts if _const_shape(v) == folded and v.type == t), None)
    if same is None:
        attr = DenseElementsAttr(t, np.asarray(folded, np.int64))
        same = rw.create1("shape.const_shape", [], t, {"shape": attr})
    new = rw.create1("shape.broadcast", [*rest, same], op.results[0].type,
                     dict(op.properties), attributes=dict(op.attributes))
    rw.replace_op(op, [new])
    return True


@pattern(CANONICAL, "shape.broadcast")
def broadcast_concretize_result_type(op: Operation, rw: PatternRewriter) -> bool:
    """broadcast(...) : tensor<?xindex> -> tensor.cast(broadcast(...) : tensor<Nxindex>) when
    every operand is an extent tensor of static size (N the largest)."""
    res = op.results[0].type
    if not (isinstance(res, TensorType) and res.shape == (None,)):
        return False
    sizes = []
    for v in op.operands:
        t = v.type
        if not (isinstance(t, TensorType) and t.shape is not None and len(t.shape) == 1
                and t.shape[0] is not None):
            return False
        sizes.append(t.shape[0])
    n = max(sizes, default=0)
    new = rw.create1("shape.broadcast", list(op.operands), _extent_tensor(n),
                     dict(op.properties), attributes=dict(op.attributes))
    cast = rw.create1("tensor.cast", [new], res)
    rw.replace_op(op, [cast])
    return True


@pattern(CANONICAL, "tensor.cast")
def tensor_cast_fold(op: Operation, rw: PatternRewriter) -> bool:
    """cast(X : T -> T) -> X; cast(cast(X : A -> B) : B -> A) -> X; cast(const_shape) to a
    static type -> const_shape of that type."""
    src = op.operands[0]
    res = op.results[0].type
    if src.type == res:
        rw.replace_op(op, [src])
        return True
    o = src.owner
    if isinstance(o, Operation) and o.name == "tensor.cast" and o.operands[0].type == res:
        rw.replace_op(op, [o.operands[0]])
        return True
    s = _const_shape(src)
    if s is not None and isinstance(res, TensorType) and res.is_static:
        attr = o.attr("shape")  # type: ignore[union-attr]
        new = rw.create1("shape.const_shape", [], res, {"shape": attr})
        rw.replace_op(op, [new])
        return True
    return False
