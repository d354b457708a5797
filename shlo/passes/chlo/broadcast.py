"""The broadcasting chlo ops, `chlo.constant` and `chlo.constant_like`.

`chlo.broadcast_<op>` (upstream's three patterns, tried in this order):

1. operands of one static or bounded shape: the op itself;
2. static or bounded operands and result (numpy broadcast: `broadcast_dimensions` absent or a
   prefix padding): `broadcast_in_dim` each operand that needs it (bounded result dimensions
   through the padded size and `set_dimension_size`), then the op;
3. ranked dynamic operands: `shape.shape_of` both, `shape.cstr_broadcastable`, and in a
   `shape.assuming` region the broadcast extents, `dynamic_broadcast_in_dim` of both and the op.
   A `broadcast_dimensions` that is not a prefix padding is refused with upstream's warning.

`chlo.broadcast_select` always takes the dynamic path (folding what is static, as upstream's
createOrFold does): shapes of static operands become `shape.const_shape`.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...attributes import BoolAttr, DenseElementsAttr, EnumAttr
from ...ir import Block, Operation, Region, Value
from ...ops._type_constraints import bounds_of
from ...types import ComplexType, TensorType, Type
from .._rewrite import i64_array
from ._builder import INDEX, Builder, NotLowered, lowering, tensor

def _witness_type() -> Type:
    from ...types import OpaqueType

    return OpaqueType("!shape.witness")


def _targets() -> dict[str, str]:
    from ...ops.chlo import BROADCAST_TARGETS

    return dict(BROADCAST_TARGETS)


# --- dimensions: static sizes, or bounded ones that remember where their size comes from ---------

Dim = tuple  # (size, bound_op or None, dim)


def _dims(v: Value) -> list[Dim]:
    t = tensor(v)
    bounds = bounds_of(t)
    out = []
    for d, s in enumerate(t.shape):
        if s is None:
            if bounds is None or bounds[d] is None:
                raise NotLowered("dynamic dimension without a bound")
            out.append((bounds[d], v, d))
        else:
            out.append((s, None, d))
    return out


def _numpy_shape(values: Sequence[Value]) -> list[Dim]:
    shape = _dims(values[0])
    for v in values[1:]:
        a, b = shape, _dims(v)
        rank = max(len(a), len(b))
        res: list[Dim] = [(1, None, 0)] * rank
        for i in range(1, rank + 1):
            da = a[len(a) - i] if i <= len(a) else (1, None, 0)
            db = b[len(b) - i] if i <= len(b) else (1, None, 0)
            if da[0] == 1:
                res[rank - i] = db
            elif db[0] == 1:
                res[rank - i] = da
            elif da[0] != db[0] or (da[1] is None) != (db[1] is None):
                raise NotLowered("incompatible shapes for broadcasting")
            else:
                res[rank - i] = da
        shape = res
    return shape


def _type_of(dims: Sequence[Dim], et: Any) -> TensorType:
    shape = tuple(None if b is not None else s for s, b, _ in dims)
    bounds = tuple(s if b is not None else None for s, b, _ in dims)
    if all(x is None for x in bounds):
        return TensorType(shape, et)
    from ...attributes import StructAttr

    return TensorType(shape, et, StructAttr("stablehlo.bounds", (("bounds", bounds),)))


def numpy_broadcast(b: Builder, v: Value, shape: Sequence[Dim]) -> Value:
    """upstream's numpyBroadcastIfNeeded(input, shape)."""
    t = tensor(v)
    out_t = _type_of(shape, t.element_type)
    if t == out_t:
        return v
    rank, out_rank = t.rank, len(shape)
    if rank > out_rank:
        raise NotLowered("input rank must be <= output rank")
    diff = out_rank - rank
    inp = _dims(v)
    padded = list(shape)
    for i in range(rank):
        if inp[i][0] != 1 and inp[i][0] != shape[i + diff][0]:
            raise NotLowered("cannot broadcast input")
        if inp[i][1] is None and shape[i + diff][1] is not None:
            padded[i + diff] = (shape[i + diff][0], None, 0)
    for i in range(diff):
        padded[i] = (shape[i][0], None, 0)
    out = b.op("broadcast_in_dim", v, result=_type_of(padded, t.element_type),
               broadcast_dimensions=i64_array(range(diff, out_rank)))
    if out.type == out_t:
        return out
    for i, (s, bound, d) in enumerate(shape):
        if padded[i][1] is None and bound is not None:
            out = b.set_dim_size(out, b.dim_size(bound, d), i)
    return out


# --- chlo.broadcast_<op> --------------------------------------------------------------------------


def _static_or_bounded(t: TensorType) -> bool:
    if t.shape is None:
        return False
    if t.is_static:
        return True
    bounds = bounds_of(t)
    return bounds is not None and all(s is not None or bd is not None
                                      for s, bd in zip(t.shape, bounds))


def _legal_numpy(lhs: TensorType, rhs: TensorType, dims: Sequence[int]) -> bool:
    if lhs.rank == rhs.rank:
        return True
    small, large = min(lhs.rank, rhs.rank), max(lhs.rank, rhs.rank)
    return list(dims) == list(range(large - small, large))


def _final(b: Builder, op: Operation, target: str, operands: Sequence[Value],
           result: Type) -> Value:
    props: dict[str, Any] = {}
    if target == "stablehlo.compare":
        d = op.attr("comparison_direction")
        props["comparison_direction"] = EnumAttr("stablehlo", "comparison_direction", d.value)
        ct = op.attr("compare_type")
        if ct is not None:
            props["compare_type"] = EnumAttr("stablehlo", "comparison_type", ct.value)
    if target.startswith("chlo."):
        return b.chlo(target, *operands, props=props)[0]
    return b.emit(target, operands, props, [result]).results[0]


def _broadcast_binary(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    target = _targets()[op.name]
    lhs, rhs = operands
    lt, rt = lhs.type, rhs.type
    res = op.results[0].type
    if not (isinstance(lt, TensorType) and isinstance(rt, TensorType)
            and lt.shape is not None and rt.shape is not None and isinstance(res, TensorType)):
        raise NotLowered("unranked operands")
    attr = op.attr("broadcast_dimensions")
    dims = None if attr is None else tuple(int(x) for x in attr.values)
    if _static_or_bounded(lt) and _static_or_bounded(rt):
        if lt.shape == rt.shape and lt.encoding == rt.encoding:
            return [_final(b, op, target, [lhs, rhs], res)]
        if _static_or_bounded(res) and (dims is None or _legal_numpy(lt, rt, dims)):
            shape = _numpy_shape([lhs, rhs])
            ops = [numpy_broadcast(b, v, shape) for v in (lhs, rhs)]
            return [_final(b, op, target, ops, res)]
        explicit = _explicit_broadcast(b, [lhs, rhs], res, dims)
        if explicit is not None:
            return [_final(b, op, target, explicit, res)]
    if dims is not None and not _legal_numpy(lt, rt, dims):
        warning = ("unsupported non prefix-padded dynamic rank broadcast_dimensions = "
                   f"array<i64: {', '.join(map(str, dims))}>")
        raise NotLowered("unsupported broadcast_dimensions", [warning])
    lhs_s, rhs_s = b.shape_of(lhs), b.shape_of(rhs)
    cstr = b.op("shape.cstr_broadcastable", lhs_s, rhs_s, result=_witness_type())
    rank = max(lt.rank, rt.rank)

    def body() -> Value:
        shapes = [shape_of_folded(b, v) for v in (lhs, rhs)]
        extents = b.op("shape.broadcast", *shapes, result=TensorType((rank,), INDEX))
        ops = [b.op("dynamic_broadcast_in_dim", v, extents,
                    result=TensorType(res.shape, tensor(v).element_type),
                    broadcast_dimensions=i64_array(range(rank - tensor(v).rank, rank)))
               for v in (lhs, rhs)]
        return _final(b, op, target, ops, res)

    return [assuming(b, cstr, res, body)]


def _explicit_broadcast(b: Builder, operands: Sequence[Value], res: TensorType,
                        dims: Sequence[int] | None) -> list[Value] | None:
    """shlo's extension: static operands with an explicit, valid, non-prefix
    `broadcast_dimensions` (XLA's rule; upstream's pass refuses them, shlo's own
    stablehlo-legalize-quant-to-math emits them for per-axis scales) become `broadcast_in_dim`
    with those dimensions. None when this does not apply (then upstream's diagnostics follow)."""
    if dims is None or not res.is_static or not all(tensor(v).is_static for v in operands):
        return None
    rank = res.rank
    small = min(tensor(v).rank for v in operands)
    if len(dims) != small or list(dims) != sorted(set(dims)) or \
            any(not 0 <= d < rank for d in dims):
        return None
    out = []
    for v in operands:
        t = tensor(v)
        plan = list(range(rank)) if t.rank == rank else list(dims)
        if t.rank not in (rank, small) or any(s not in (1, res.shape[d])
                                             for s, d in zip(t.shape, plan)):
            return None
        if t.shape == res.shape:
            out.append(v)
            continue
        out.append(b.op("broadcast_in_dim", v, result=TensorType(res.shape, t.element_type),
                        broadcast_dimensions=i64_array(plan)))
    return out


def assuming(b: Builder, witness: Value, result: Type, body: Callable[[], Value]) -> Value:
    """`shape.assuming %witness -> (result) { body(); shape.assuming_yield }`."""
    block = Block([])
    rw = b.rw
    saved = rw.block
    rw.block = block
    try:
        out = body()
        rw.emit("shape.assuming_yield", [out], [])
    finally:
        rw.block = saved
    return b.emit("shape.assuming", [witness], {}, [result], regions=[Region([block])]).results[0]


def shape_of_folded(b: Builder, v: Value) -> Value:
    """createOrFold<shape::ShapeOfOp>: a `shape.const_shape` for a static operand."""
    t = tensor(v)
    if t.is_static:
        attr = DenseElementsAttr(TensorType((t.rank,), INDEX), np.asarray(t.shape, np.int64))
        return b.emit("shape.const_shape", [], {"shape": attr},
                      [TensorType((t.rank,), INDEX)]).results[0]
    return b.shape_of(v)


def _known_extents(v: Value) -> list[int | None] | None:
    """The extents a shape value is known to have (getShapeVec)."""
    o = v.owner
    if isinstance(o, Operation) and o.name == "shape.shape_of":
        t = o.operands[0].type
        return list(t.shape) if isinstance(t, TensorType) and t.shape is not None else None
    if isinstance(o, Operation) and o.name == "shape.const_shape":
        return [int(x) for x in np.asarray(o.attr("shape").array).reshape(-1)]
    return None


def statically_broadcastable(shapes: Sequence[Sequence[int | None]]) -> bool:
    """OpTrait::util::staticallyKnownBroadcastable."""
    rank = max((len(s) for s in shapes), default=0)
    for i in range(rank):
        seen_dynamic, non_one = False, None
        for s in shapes:
            d = 1 if i >= len(s) else s[len(s) - i - 1]
            d = -1 if d is None else d  # (kDynamic)
            if d == 1:
                continue
            if d == -1:
                if seen_dynamic or non_one is not None:
                    return False
                seen_dynamic = True
            if non_one is not None and d != non_one:
                return False
            non_one = d
    return True


@lowering("chlo.broadcast_select")
def _broadcast_select(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    pred, on_true, on_false = operands
    types = [tensor(v) for v in operands]
    res = op.results[0].type
    assert isinstance(res, TensorType)
    shapes = [shape_of_folded(b, v) for v in operands]
    rank = max(t.rank for t in types)
    known = [_known_extents(s) for s in shapes]
    if all(k is not None for k in known) and statically_broadcastable(known):  # type: ignore
        cstr = b.emit("shape.const_witness", [], {"passing": BoolAttr(True)},
                      [_witness_type()]).results[0]
    else:
        cstr = b.op("shape.cstr_broadcastable", *shapes, result=_witness_type())

    def body() -> Value:
        consts = [s.owner for s in shapes if isinstance(s.owner, Operation)
                  and s.owner.name == "shape.const_shape"]
        if len(consts) == len(shapes):  # createOrFold<shape::BroadcastOp> of constants
            from ...ops.foreign.shape import broadcast_shapes

            ext = broadcast_shapes([tuple(int(x) for x in np.asarray(c.attr("shape").array))
                                    for c in consts])
            attr = DenseElementsAttr(TensorType((rank,), INDEX), np.asarray(ext, np.int64))
            extents = b.emit("shape.const_shape", [], {"shape": attr},
                             [TensorType((None,), INDEX)]).results[0]
        else:
            extents = b.op("shape.broadcast", *shapes, result=TensorType((None,), INDEX))
        extents = b.op("tensor.cast", extents, result=TensorType((rank,), INDEX))

        def bcast(v: Value) -> Value:
            t = tensor(v)
            return b.op("dynamic_broadcast_in_dim", v, extents,
                        result=TensorType(res.shape, t.element_type),
                        broadcast_dimensions=i64_array(range(rank - t.rank, rank)))

        p = pred if types[0].rank == 0 else bcast(pred)
        return b.emit("select", [p, bcast(on_true), bcast(on_false)], {}, [res]).results[0]

    return [assuming(b, cstr, res, body)]


lowering(*(n for n in _targets() if n != "chlo.broadcast_select"))(_broadcast_binary)


# --- constant, constant_like ----------------------------------------------------------------------


@lowering("chlo.constant")
def _constant(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    attr = op.attr("value")
    return [b.emit("constant", [], {"value": attr}, [attr.type]).results[0]]


@lowering("chlo.constant_like")
def _constant_like(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    from ...ops.chlo.constant import _scalar_value

    res = tensor(op.results[0])
    value = _scalar_value(op.attr("value"))
    if isinstance(res.element_type, ComplexType):
        value = complex(value)
    return [b.splat_like(np.asarray(value).astype(res.element_type.dtype)
                         if not isinstance(value, bool) else np.asarray(value),
                         res.element_type, operands[0])]
