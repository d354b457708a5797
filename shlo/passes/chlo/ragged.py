"""ragged_dot (upstream's three modes: ragged non-contracting dimension -> one masked
dot_general per group, summed; ragged contracting dimension -> one per group, concatenated on a
new leading dimension; ragged batch dimension -> a plain dot_general) and scan (a while loop
over the scanned dimension, the body cloned in)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...attributes import ArrayAttr, EnumAttr, IntegerAttr, StructAttr, ints
from ...ir import Block, Operation, Region, Value
from ...types import ComplexType, TensorType
from .._rewrite import i64_array
from ._builder import I64, Builder, NotLowered, lowering, tensor


def _dn(op: Operation, key: str) -> tuple[int, ...]:
    attr = op.attr("ragged_dot_dimension_numbers")
    return tuple(ints(attr.get(key), ()) or ()) if isinstance(attr, StructAttr) else ()


def _precision(op: Operation) -> ArrayAttr | None:
    pc = op.attr("precision_config")
    if pc is None:
        return None
    out = []
    for p in pc:
        v = p.value if p.value in ("HIGHEST", "HIGH") else "DEFAULT"
        out.append(EnumAttr("stablehlo", "precision", v))
    return ArrayAttr(tuple(out))


def _dot(b: Builder, lhs: Value, rhs: Value, result: Any, dims: Sequence[Sequence[int]],
         precision: ArrayAttr | None) -> Value:
    names = ("lhs_batching_dimensions", "rhs_batching_dimensions",
             "lhs_contracting_dimensions", "rhs_contracting_dimensions")
    params = tuple((n, tuple(d)) for n, d in zip(names, dims) if d)
    props: dict[str, Any] = {"dot_dimension_numbers": StructAttr("stablehlo.dot", params)}
    if precision is not None:
        props["precision_config"] = precision
    return b.emit("dot_general", [lhs, rhs], props, [result]).results[0]


def _i64_1(b: Builder, v: int) -> Value:
    return b.constant(np.asarray([v], np.int64), I64, (1,))


def _dim_i64x1(b: Builder, v: Value, d: int) -> Value:
    return b.reshape(b.convert(b.dim_size(v, d), I64), (1,))


def _start(b: Builder, gs: Value, batch: Sequence[int | None]) -> Value:
    gt = tensor(gs)
    if any(s is None for s in batch):
        shape = b.shape_of(gs)
        batch_shape = b.op("slice", shape, result=TensorType((gt.rank - 1,), tensor(shape)
                                                             .element_type),
                           start_indices=i64_array([0]), limit_indices=i64_array([gt.rank - 1]),
                           strides=i64_array([1]))
        zero = b.scalar(0, I64)
        return b.op("dynamic_broadcast_in_dim", zero, batch_shape,
                    result=TensorType(tuple(batch), I64), broadcast_dimensions=i64_array(()))
    return b.constant(np.zeros(tuple(batch), np.int64), I64, tuple(batch))


def _group_size(b: Builder, gs: Value, index: int, batch: Sequence[int | None]) -> Value:
    gt = tensor(gs)
    rank, g = gt.rank, gt.rank - 1
    start = [0] * rank
    start[g] = index
    strides = [1] * rank
    if gt.is_static:
        limit = list(gt.shape)
        limit[g] = index + 1
        sl = b.op("slice", gs, start_indices=i64_array(start), limit_indices=i64_array(limit),
                  strides=i64_array(strides))
    else:
        start_t = b.constant(np.asarray(start, np.int64), I64, (rank,))
        strides_t = b.constant(np.asarray(strides, np.int64), I64, (rank,))
        limits = []
        for d in range(rank):
            if d == g:
                limits.append(b.scalar(index + 1, I64))
            else:
                limits.append(b.convert(b.dim_size(gs, d), I64))
        parts = [b.reshape(v, (1,)) for v in limits]
        limit_t = b.concat(parts)
        shape = list(gt.shape)
        shape[g] = 1
        sl = b.op("real_dynamic_slice", gs, start_t, limit_t, strides_t,
                  result=TensorType(tuple(shape), gt.element_type))
    size = b.reshape(sl, tuple(batch))
    if tensor(size).element_type != I64:
        size = b.convert(size, I64)
    return size


def _mask(b: Builder, lhs: Value, zero: Value, start: Value, limit: Value, iota: Value,
          gs_rank: int) -> Value:
    lt = tensor(lhs)
    dims = list(range(gs_rank - 1))
    out_t = TensorType(lt.shape, I64)

    def to_lhs(v: Value, bdims: Sequence[int]) -> Value:
        if lt.is_static:
            return b.op("broadcast_in_dim", v, result=out_t, broadcast_dimensions=i64_array(bdims))
        return b.op("dynamic_broadcast_in_dim", v, b.shape_of(lhs), result=out_t,
                    broadcast_dimensions=i64_array(bdims))

    start_b = to_lhs(start, dims)
    limit_b = to_lhs(limit, dims)
    iota_b = to_lhs(iota, range(lt.rank))
    mask = b.op("and", b.cmp("GE", iota_b, start_b), b.cmp("LT", iota_b, limit_b))
    return b.select(mask, lhs, zero)


def _iota(b: Builder, lhs: Value, ragged: int) -> Value:
    lt = tensor(lhs)
    size = lt.shape[ragged]
    shape = [1] * lt.rank
    shape[ragged] = size
    t = TensorType(tuple(shape), I64)
    if size is None:
        parts = [_dim_i64x1(b, lhs, d) if d == ragged else _i64_1(b, 1) for d in range(lt.rank)]
        return b.op("dynamic_iota", b.concat(parts), result=t,
                    iota_dimension=IntegerAttr(ragged, I64))
    return b.op("iota", result=t, iota_dimension=IntegerAttr(ragged, I64))


def _zero_like(b: Builder, lhs: Value) -> Value:
    lt = tensor(lhs)
    if lt.is_static:
        return b.constant(np.zeros(lt.shape, lt.element_type.dtype), lt.element_type, lt.shape)
    z = b.scalar(0, lt.element_type)
    return b.op("dynamic_broadcast_in_dim", z, b.shape_of(lhs), result=lt,
                broadcast_dimensions=i64_array(()))


def _mode1(b: Builder, op: Operation, lhs: Value, rhs: Value, gs: Value) -> Value:
    rt, gt = tensor(rhs), tensor(gs)
    group_dim = _dn(op, "rhs_group_dimensions")[0]
    ragged = _dn(op, "lhs_ragged_dimensions")[0]
    g = rt.shape[group_dim]
    if g is None:
        raise NotLowered("dynamic group count not supported")
    batch = gt.shape[:-1]
    start = _start(b, gs, batch)
    iota = _iota(b, lhs, ragged)
    zero = _zero_like(b, lhs)
    adj = [d - 1 if d > group_dim else d for d in _dn(op, "rhs_batching_dimensions")]
    adjc = [d - 1 if d > group_dim else d for d in _dn(op, "rhs_contracting_dimensions")]
    precision = _precision(op)
    out = None
    for i in range(g):
        size = _group_size(b, gs, i, batch)
        limit = b.add(start, size)
        masked = _mask(b, lhs, zero, start, limit, iota, gt.rank)
        kept = [rt.shape[d] for d in range(rt.rank) if d != group_dim]
        if rt.is_static:
            st = [0] * rt.rank
            st[group_dim] = i
            lim = list(rt.shape)
            lim[group_dim] = i + 1
            sl = b.op("slice", rhs, start_indices=i64_array(st), limit_indices=i64_array(lim),
                      strides=i64_array([1] * rt.rank))
            rhs_i = b.reshape(sl, kept)
        else:
            starts, limits = [], []
            for d in range(rt.rank):
                if d == group_dim:
                    starts.append(_i64_1(b, i))
                    limits.append(_i64_1(b, i + 1))
                else:
                    starts.append(_i64_1(b, 0))
                    limits.append(_dim_i64x1(b, rhs, d))
            start_t, limit_t = b.concat(starts), b.concat(limits)
            strides_t = b.constant(np.ones(rt.rank, np.int64), I64, (rt.rank,))
            shape = list(rt.shape)
            shape[group_dim] = 1
            sl = b.op("real_dynamic_slice", rhs, start_t, limit_t, strides_t,
                      result=TensorType(tuple(shape), rt.element_type))
            new_shape = b.concat([limits[d] for d in range(rt.rank) if d != group_dim])
            rhs_i = b.op("dynamic_reshape", sl, new_shape,
                         result=TensorType(tuple(kept), rt.element_type))
        dot = _dot(b, masked, rhs_i, op.results[0].type,
                   [_dn(op, "lhs_batching_dimensions"), adj,
                    _dn(op, "lhs_contracting_dimensions"), adjc], precision)
        out = dot if out is None else b.add(out, dot)
        start = limit
    assert out is not None
    return out


def _mode2(b: Builder, op: Operation, lhs: Value, rhs: Value, gs: Value) -> Value:
    gt = tensor(gs)
    ragged = _dn(op, "lhs_ragged_dimensions")[0]
    g = gt.shape[-1]
    if g is None:
        raise NotLowered("dynamic group count not supported")
    lc, rc = _dn(op, "lhs_contracting_dimensions"), _dn(op, "rhs_contracting_dimensions")
    if ragged not in lc:
        raise NotLowered("the ragged dimension is not contracting")
    batch = gt.shape[:-1]
    start = _start(b, gs, batch)
    iota = _iota(b, lhs, ragged)
    zero = _zero_like(b, lhs)
    precision = _precision(op)
    res = tensor(op.results[0])
    results = []
    for i in range(g):
        size = _group_size(b, gs, i, batch)
        limit = b.add(start, size)
        masked = _mask(b, lhs, zero, start, limit, iota, gt.rank)
        results.append(_dot(b, masked, rhs, TensorType(res.shape[1:], res.element_type),
                            [_dn(op, "lhs_batching_dimensions"),
                             _dn(op, "rhs_batching_dimensions"), lc, rc], precision))
        start = limit
    parts = []
    for r in results:
        t = tensor(r)
        new_t = TensorType((1,) + tuple(t.shape), t.element_type)
        if t.is_static:
            parts.append(b.op("reshape", r, result=new_t))
        else:
            sizes = [_i64_1(b, 1)] + [_dim_i64x1(b, r, d) for d in range(t.rank)]
            parts.append(b.op("dynamic_reshape", r, b.concat(sizes), result=new_t))
    return b.emit("concatenate", parts, {"dimension": IntegerAttr(0, I64)},
                  [op.results[0].type]).results[0]


@lowering("chlo.ragged_dot")
def _ragged_dot(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    lhs, rhs, gs = operands
    lr, rr, res = tensor(lhs).rank, tensor(rhs).rank, tensor(op.results[0]).rank
    if lr < rr:
        return [_mode1(b, op, lhs, rhs, gs)]
    if lr < res:
        return [_mode2(b, op, lhs, rhs, gs)]
    return [_dot(b, lhs, rhs, op.results[0].type,
                 [_dn(op, k) for k in ("lhs_batching_dimensions", "rhs_batching_dimensions",
                                       "lhs_contracting_dimensions",
                                       "rhs_contracting_dimensions")], _precision(op))]


# --- scan ----------------------------------------------------------------------------------------


def _zero_scalar(b: Builder, et: Any) -> Value:
    if isinstance(et, ComplexType):
        return b.scalar(complex(0, 0), et)
    return b.scalar(0, et)


@lowering("chlo.scan")
def _scan(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    rw = b.rw
    dim = int(op.attr("dimension").value)
    n_inputs = len(op.operands) - _count_inits(op)
    inputs, inits = list(operands[:n_inputs]), list(operands[n_inputs:])
    n_carries = len(inits)
    n_outputs = len(op.results) - n_carries
    if inputs:
        size = b.dim_size(inputs[0], dim)
    else:
        rt = tensor(op.results[0])
        if rt.shape[dim] is None:
            raise NotLowered("cannot determine scan dimension size from empty inputs and "
                             "dynamic result")
        size = b.scalar(rt.shape[dim], element_type_i32())
    size = b.convert(size, I64)
    initial = [b.scalar(0, I64)] + inits
    for i in range(n_outputs):
        rt = tensor(op.results[i])
        zero = _zero_scalar(b, rt.element_type)
        if rt.is_static:
            initial.append(b.op("broadcast_in_dim", zero, result=rt,
                                broadcast_dimensions=i64_array(())))
        else:
            if not inputs:
                raise NotLowered("cannot determine dynamic output shape without inputs")
            ref = inputs[i if i < len(inputs) else 0]
            initial.append(b.op("dynamic_broadcast_in_dim", zero, b.shape_of(ref), result=rt,
                                broadcast_dimensions=i64_array(())))
    types = [v.type for v in initial]
    cond, body = Block(list(types)), Block(list(types))
    saved = rw.block
    try:
        rw.block = cond
        c = b.cmp("LT", cond.arguments[0], size)
        rw.emit("stablehlo.return", [c], [])
        rw.block = body
        index = body.arguments[0]
        pos = index
        reverse = op.attr("is_reverse")
        if reverse is not None and getattr(reverse, "value", False):
            pos = b.sub(b.sub(size, b.scalar(1, I64)), index)
        accs = body.arguments[1:1 + n_carries]
        outs = body.arguments[1 + n_carries:]
        sliced = [_slice_at(b, v, dim, pos) for v in inputs]
        scan_body = op.regions[0].blocks[0]
        args = scan_body.arguments
        for old, new in zip(args, list(sliced) + list(accs)):
            rw.values[old] = new
        for inner in scan_body.operations[:-1]:
            rw.rewrite(inner)
        results = [rw.get(v) for v in scan_body.operations[-1].operands]
        new_outs = results[:n_outputs]
        new_accs = results[len(results) - n_carries:] if n_carries else []
        updated = []
        for cur, elem in zip(outs, new_outs):
            ot = tensor(cur)
            shape = list(ot.shape)
            shape[dim] = 1
            piece = b.reshape(elem, shape, ot.element_type)
            zero = b.scalar(0, I64)
            idx = [pos if d == dim else zero for d in range(ot.rank)]
            updated.append(b.emit("dynamic_update_slice", [cur, piece] + idx, {}, [ot])
                           .results[0])
        nxt = b.add(index, b.scalar(1, I64))
        rw.emit("stablehlo.return", [nxt] + list(new_accs) + updated, [])
    finally:
        rw.block = saved
    loop = b.emit("while", initial, {}, types, regions=[Region([cond]), Region([body])])
    res = loop.results
    return list(res[1 + n_carries:1 + n_carries + n_outputs]) + list(res[1:1 + n_carries])


def element_type_i32() -> Any:
    from ._builder import I32

    return I32


def _count_inits(op: Operation) -> int:
    from ...ops.chlo.scan import _num_inputs

    return len(op.operands) - _num_inputs(op)


def _slice_at(b: Builder, v: Value, dim: int, pos: Value) -> Value:
    t = tensor(v)
    shape = list(t.shape)
    shape[dim] = 1
    slice_t = TensorType(tuple(shape), t.element_type)
    if t.is_static:
        zero = b.scalar(0, I64)
        idx = [pos if d == dim else zero for d in range(t.rank)]
        s = b.emit("dynamic_slice", [v] + idx, {"slice_sizes": i64_array(shape)},
                   [slice_t]).results[0]
    else:
        zero = b.scalar(0, I64)
        starts = [pos if d == dim else zero for d in range(t.rank)]
        start_t = b.concat([b.reshape(s, (1,)) for s in starts])
        limits = []
        for d in range(t.rank):
            if d == dim:
                limits.append(b.add(pos, b.scalar(1, I64)))
            else:
                sz = b.dim_size(v, d) if t.shape[d] is None else b.scalar(t.shape[d],
                                                                             element_type_i32())
                limits.append(b.convert(sz, I64))
        limit_t = b.concat([b.reshape(s, (1,)) for s in limits])
        strides = b.constant(np.ones(t.rank, np.int64), I64, (t.rank,))
        s = b.op("real_dynamic_slice", v, start_t, limit_t, strides, result=slice_t)
    kept = [shape[d] for d in range(t.rank) if d != dim]
    return b.reshape(s, kept, t.element_type)
