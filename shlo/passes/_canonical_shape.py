"""`canonicalize` patterns of the `shape` dialect ops that chlo-legalize-to-stablehlo emits for
dynamic broadcasts (MLIR's Shape.cpp folders and canonicalization patterns), so that the
guide's pipeline `chlo-legalize-to-stablehlo, canonicalize, shape-legalize-to-stablehlo` finds
no constraint left where the shapes are known to broadcast, as upstream's:

* `shape_of` of a static tensor -> `const_shape` (ShapeOfOp::fold);
* `cstr_broadcastable` of shapes statically known to broadcast -> `const_witness true`
  (CstrBroadcastableOp::fold);
* `assuming_all` of constant witnesses -> their conjunction, of one witness -> it;
* `assuming` on `const_witness true` -> its body, inlined (AssumingWithTrue);
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

from ..attributes import BoolAttr, DenseElementsAttr
from ..ir import Operation, Value
from ..ops.foreign.shape import broadcast_shapes
from ..types import IndexType, OpaqueType, TensorType
from ._patterns import PatternRewriter, is_constant_op, pattern
from .chlo.broadcast import _known_extents, statically_broadcastable

_WITNESS = OpaqueType("!shape.witness")


CANONICAL = "canonical"  # canonicalize's pattern set (canonicalize.py runs it)
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
