"""`stablehlo-aggressive-simplification` patterns of the shape and data-movement ops:
broadcast_in_dim, reshape, transpose, reverse, slice, concatenate, pad, iota, gather, the
dynamic ops that have static forms, get_dimension_size, tuples, and the generic zero-extent
rewrite.
"""

from __future__ import annotations

import numpy as np

from ..attributes import BoolAttr, IntegerAttr, ints
from ..ir import Operation, Value
from ..registry import ELEMENTWISE, SIDE_EFFECTS, names_with
from ..types import TensorType, element_type
from ._patterns import PatternRewriter, constant_of, dense, is_constant_op, pattern
from ._rewrite import i64_array
from ._simplify_elementwise import (
    SIMPLIFY,
    const_op,
    iota_dims,
    is_static,
    replace_with_new,
    replace_with_value,
)


def _dims(op: Operation, name: str) -> tuple[int, ...]:
    return tuple(ints(op.attr(name), ()) or ())


def _i64(v: int) -> IntegerAttr:
    return IntegerAttr(int(v), element_type("i64"))


def _numel(t) -> int | None:
    return t.num_elements if is_static(t) else None


def _int_constant(v: Value) -> list[int] | None:
    c = constant_of(v)
    if c is None or not (c.type.element_type.is_integer or c.type.element_type.is_bool
                         or c.type.element_type.name == "index"):
        return None
    return [int(x) for x in c.array.reshape(-1)]


# --- declarative patterns, upstream's order ------------------------------------------------------

@pattern(SIMPLIFY, "stablehlo.reverse", 1)
def reverse_empty_dims(op: Operation, rw: PatternRewriter) -> bool:
    """reverse(X, dims=[]) -> X."""
    if _dims(op, "dimensions"):
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.reverse", 1)
def reverse_zero_elements(op: Operation, rw: PatternRewriter) -> bool:
    """reverse(X) -> X when X (static) has no element."""
    if _numel(op.operands[0].type) != 0:
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.reverse", 1)
def reverse_unit_dims(op: Operation, rw: PatternRewriter) -> bool:
    """reverse(X, dims) -> X when every reversed dimension of X (static) has size 1."""
    t = op.operands[0].type
    if not is_static(t) or not all(t.shape[d] == 1 for d in _dims(op, "dimensions")):
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.reverse", 2)
def reverse_splat(op: Operation, rw: PatternRewriter) -> bool:
    """reverse(splat constant) -> the constant."""
    c = const_op(op.operands[0])
    if c is None or not c.attr("value").is_splat:
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.broadcast_in_dim", 1)
def broadcast_noop(op: Operation, rw: PatternRewriter) -> bool:
    """broadcast_in_dim(X, [0, 1, ...]) -> X (same type)."""
    if not iota_dims(_dims(op, "broadcast_dimensions")) or \
            op.operands[0].type != op.results[0].type:
        return False
    return replace_with_value(op, rw, op.operands[0])


def _reducible_to_reshape(inner: Operation) -> bool:
    t = inner.results[0].type
    if not is_static(t):
        return False
    dims = _dims(inner, "broadcast_dimensions")
    return list(dims) == sorted(dims) and _numel(inner.operands[0].type) == t.num_elements


@pattern(SIMPLIFY, "stablehlo.broadcast_in_dim", 2)
def broadcast_of_broadcast(op: Operation, rw: PatternRewriter) -> bool:
    """broadcast_in_dim(broadcast_in_dim(X, A), B) -> broadcast_in_dim(X, B[A]) (unless the
    inner one is a reshape)."""
    inner = rw.defining(op.operands[0], "stablehlo.broadcast_in_dim")
    if inner is None or _reducible_to_reshape(inner):
        return False
    outer_dims = _dims(op, "broadcast_dimensions")
    merged = [outer_dims[d] for d in _dims(inner, "broadcast_dimensions")]
    replace_with_new(op, rw, op.name, [inner.operands[0]],
                     {**op.properties, "broadcast_dimensions": i64_array(merged)})
    return True


@pattern(SIMPLIFY, "stablehlo.broadcast_in_dim", 2)
def broadcast_to_reshape(op: Operation, rw: PatternRewriter) -> bool:
    """broadcast_in_dim(X, sorted dims) -> reshape(X) when no element is added."""
    x = op.operands[0]
    dims = _dims(op, "broadcast_dimensions")
    if not is_static(x.type) or list(dims) != sorted(dims) or \
            _numel(op.results[0].type) != x.type.num_elements:
        return False
    replace_with_new(op, rw, "stablehlo.reshape", [x])
    return True


@pattern(SIMPLIFY, "stablehlo.broadcast_in_dim", 1)
def broadcast_to_transpose(op: Operation, rw: PatternRewriter) -> bool:
    """broadcast_in_dim(X, dims) -> transpose(X) when it only permutes dimensions."""
    x = op.operands[0]
    t = op.results[0].type
    if not is_static(x.type) or _numel(t) != x.type.num_elements or t.rank != x.type.rank:
        return False
    dims = _dims(op, "broadcast_dimensions")
    perm = [0] * len(dims)
    for i, d in enumerate(dims):
        perm[d] = i
    replace_with_new(op, rw, "stablehlo.transpose", [x], {"permutation": i64_array(perm)})
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_broadcast_in_dim", 2)
def dynamic_broadcast_of_dynamic_broadcast(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_broadcast_in_dim(dynamic_broadcast_in_dim(X, _, A), shape, B) ->
    dynamic_broadcast_in_dim(X, shape, B[A])."""
    inner = rw.defining(op.operands[0], op.name)
    if inner is None:
        return False
    outer = _dims(op, "broadcast_dimensions")
    merged = [outer[d] for d in _dims(inner, "broadcast_dimensions")]
    replace_with_new(op, rw, op.name, [inner.operands[0], op.operands[1]],
                     {"broadcast_dimensions": i64_array(merged)})
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_broadcast_in_dim", 1)
def dynamic_broadcast_noop_to_convert(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_broadcast_in_dim(X, _, iota, all dims non-expanding) -> convert(X)."""
    ne = op.attr("known_nonexpanding_dimensions")
    t = op.results[0].type
    if not iota_dims(_dims(op, "broadcast_dimensions")) or ne is None or \
            not isinstance(t, TensorType) or len(ints(ne, ())) != t.rank:
        return False
    replace_with_new(op, rw, "stablehlo.convert", [op.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_broadcast_in_dim", 2)
def dynamic_broadcast_of_dynamic_reshape(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_broadcast_in_dim(dynamic_reshape(X, s), s, iota) -> dynamic_reshape(X, s)."""
    r = rw.defining(op.operands[0], "stablehlo.dynamic_reshape")
    if r is None or r.operands[1] is not op.operands[1] or \
            not iota_dims(_dims(op, "broadcast_dimensions")):
        return False
    replace_with_new(op, rw, "stablehlo.dynamic_reshape", [r.operands[0], op.operands[1]])
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_broadcast_in_dim", 2)
def dynamic_broadcast_of_own_shape(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_broadcast_in_dim(X, shape_of(X), iota) -> X."""
    s = rw.defining(op.operands[1], "shape.shape_of")
    if s is None or s.operands[0] is not op.operands[0] or \
            not iota_dims(_dims(op, "broadcast_dimensions")):
        return False
    return replace_with_value(op, rw, op.operands[0])


@pattern(SIMPLIFY, "stablehlo.dynamic_gather", 2)
def dynamic_gather_to_gather(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_gather(X, I, constant sizes) -> gather(X, I, sizes)."""
    if const_op(op.operands[2]) is None:
        return False
    sizes = _int_constant(op.operands[2])
    if sizes is None:
        return False
    props = {k: v for k, v in op.properties.items()}
    props["slice_sizes"] = i64_array(sizes)
    props.setdefault("indices_are_sorted", BoolAttr(False))
    replace_with_new(op, rw, "stablehlo.gather", list(op.operands[:2]), props)
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_pad", 1)
def dynamic_pad_to_pad(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_pad(X, v, constant low, high, interior) -> pad."""
    pads = [_int_constant(v) for v in op.operands[2:5]]
    if any(p is None for p in pads):
        return False
    props = {"edge_padding_low": i64_array(pads[0]), "edge_padding_high": i64_array(pads[1]),
             "interior_padding": i64_array(pads[2])}
    replace_with_new(op, rw, "stablehlo.pad", list(op.operands[:2]), props)
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_reshape", 2)
def dynamic_reshape_of_dynamic_reshape(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_reshape(dynamic_reshape(X, _), s) -> dynamic_reshape(X, s)."""
    inner = rw.defining(op.operands[0], op.name)
    if inner is None:
        return False
    replace_with_new(op, rw, op.name, [inner.operands[0], op.operands[1]])
    return True


@pattern(SIMPLIFY, "shape.shape_of", 2)
def shape_of_dynamic_reshape(op: Operation, rw: PatternRewriter) -> bool:
    """shape_of(dynamic_reshape(X, s)) -> s (same type)."""
    r = rw.defining(op.operands[0], "stablehlo.dynamic_reshape")
    if r is None or r.operands[1].type != op.results[0].type:
        return False
    return replace_with_value(op, rw, r.operands[1])


@pattern(SIMPLIFY, "stablehlo.dynamic_update_slice", 1)
def dynamic_update_slice_empty_update(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_update_slice(X, constant with no element, _) -> X."""
    c = constant_of(op.operands[1])
    if c is None or c.array.size != 0:
        return False
    return replace_with_value(op, rw, op.operands[0])


@pattern(SIMPLIFY, "stablehlo.dynamic_update_slice", 1)
def dynamic_update_slice_whole(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_update_slice(X, U, zeros) -> U when U has X's (static) type."""
    x, u = op.operands[0], op.operands[1]
    if not is_static(x.type) or x.type != u.type:
        return False
    for s in op.operands[2:]:
        c = constant_of(s)
        if c is None or not c.is_splat or int(c.array.reshape(-1)[0]) != 0:
            return False
    return replace_with_value(op, rw, u)


@pattern(SIMPLIFY, "stablehlo.iota", 1)
def iota_unit_dim_to_zero(op: Operation, rw: PatternRewriter) -> bool:
    """iota along a dimension of size 1 -> zeros."""
    t = op.results[0].type
    if not is_static(t) or t.shape[int(op.attr("iota_dimension").value)] != 1:
        return False
    rw.replace_op(op, [rw.constant(dense(0, t))])
    return True


@pattern(SIMPLIFY, "stablehlo.pad", 1)
def pad_noop(op: Operation, rw: PatternRewriter) -> bool:
    """pad(X, _, 0, 0, 0) -> X."""
    if any(any(_dims(op, k)) for k in ("edge_padding_low", "edge_padding_high",
                                       "interior_padding")):
        return False
    if op.operands[0].type != op.results[0].type:
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.real_dynamic_slice", 1)
def real_dynamic_slice_to_slice(op: Operation, rw: PatternRewriter) -> bool:
    """real_dynamic_slice(X, constant start, limit, strides) -> slice."""
    vals = [_int_constant(v) for v in op.operands[1:4]]
    if any(v is None for v in vals):
        return False
    props = {"start_indices": i64_array(vals[0]), "limit_indices": i64_array(vals[1]),
             "strides": i64_array(vals[2])}
    replace_with_new(op, rw, "stablehlo.slice", [op.operands[0]], props)
    return True


@pattern(SIMPLIFY, "stablehlo.reduce", 1)
def reduce_no_dimensions(op: Operation, rw: PatternRewriter) -> bool:
    """reduce(X..., dimensions=[]) -> X..."""
    if _dims(op, "dimensions"):
        return False
    n = len(op.results)
    if any(a.type != r.type for a, r in zip(op.operands[:n], op.results)):
        return False
    rw.replace_op(op, list(op.operands[:n]))
    return True


@pattern(SIMPLIFY, "stablehlo.reshape", 2)
def reshape_of_reshape(op: Operation, rw: PatternRewriter) -> bool:
    """reshape(reshape(X)) -> reshape(X)."""
    inner = rw.defining(op.operands[0], op.name)
    if inner is None:
        return False
    replace_with_new(op, rw, op.name, [inner.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.reshape", 1)
def reshape_noop(op: Operation, rw: PatternRewriter) -> bool:
    """reshape(X) -> X (same type)."""
    if op.operands[0].type != op.results[0].type:
        return False
    return replace_with_value(op, rw, op.operands[0])


@pattern(SIMPLIFY, "stablehlo.slice", 1)
def slice_noop(op: Operation, rw: PatternRewriter) -> bool:
    """slice(X) -> X when it keeps every element (static, same type)."""
    x = op.operands[0]
    if not is_static(x.type) or x.type != op.results[0].type:
        return False
    return replace_with_value(op, rw, x)


@pattern(SIMPLIFY, "stablehlo.transpose", 1)
def transpose_noop(op: Operation, rw: PatternRewriter) -> bool:
    """transpose(X, [0, 1, ...]) -> X."""
    if not iota_dims(_dims(op, "permutation")):
        return False
    return replace_with_value(op, rw, op.operands[0])


@pattern(SIMPLIFY, "stablehlo.transpose", 2)
def transpose_of_transpose(op: Operation, rw: PatternRewriter) -> bool:
    """transpose(transpose(X, A), B) -> transpose(X, A[B])."""
    inner = rw.defining(op.operands[0], op.name)
    if inner is None:
        return False
    child = _dims(inner, "permutation")
    merged = [child[d] for d in _dims(op, "permutation")]
    replace_with_new(op, rw, op.name, [inner.operands[0]], {"permutation": i64_array(merged)})
    return True


@pattern(SIMPLIFY, "stablehlo.get_tuple_element", 2)
def get_tuple_element_of_tuple(op: Operation, rw: PatternRewriter) -> bool:
    """get_tuple_element(tuple(X...), i) -> X_i."""
    t = rw.defining(op.operands[0], "stablehlo.tuple")
    if t is None:
        return False
    rw.replace_op(op, [t.operands[int(op.attr("index").value)]])
    return True


# --- C++ patterns, upstream's order ---------------------------------------------------------------

@pattern(SIMPLIFY, "stablehlo.concatenate", 1)
def concatenate_flatten(op: Operation, rw: PatternRewriter) -> bool:
    """concatenate(concatenate(X, Y), Z) -> concatenate(X, Y, Z) (inner used once, same dim)."""
    dim = int(op.attr("dimension").value)
    new, changed = [], False
    for v in op.operands:
        d = rw.defining(v, op.name)
        if d is not None and rw.has_one_use(v) and int(d.attr("dimension").value) == dim:
            new.extend(d.operands)
            changed = True
        else:
            new.append(v)
    if not changed:
        return False
    rw.set_operands(op, new)
    return True


@pattern(SIMPLIFY, "stablehlo.concatenate", 1)
def concatenate_noop(op: Operation, rw: PatternRewriter) -> bool:
    """concatenate(X) -> X."""
    if len(op.operands) != 1 or op.operands[0].type != op.results[0].type:
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.concatenate", 1)
def concatenate_remove_empty(op: Operation, rw: PatternRewriter) -> bool:
    """concatenate(X, Y, []) -> concatenate(X, Y)."""
    dim = int(op.attr("dimension").value)
    keep = [v for v in op.operands if v.type.shape[dim] != 0]
    if not keep or len(keep) == len(op.operands):
        return False
    rw.set_operands(op, keep)
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_iota", 1)
def dynamic_iota_to_broadcast(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_iota(shape, d) of rank >= 2 -> dynamic_broadcast_in_dim of a 1-D iota."""
    t = op.results[0].type
    if not isinstance(t, TensorType) or t.shape is None or t.rank < 2:
        return False
    dim = int(op.attr("iota_dimension").value)
    shape = op.operands[0]
    st = shape.type
    i64 = element_type("i64")
    st64 = TensorType(st.shape, i64)
    if st.element_type.name == "index":
        shape64 = rw.create1("arith.index_cast", [shape], st64)
    else:
        shape64 = rw.create1("stablehlo.convert", [shape], st64)
    size = rw.create1("stablehlo.slice", [shape64], TensorType((1,), i64),
                      {"start_indices": i64_array([dim]), "limit_indices": i64_array([dim + 1]),
                       "strides": i64_array([1])})
    pre = rw.create1("stablehlo.dynamic_iota", [size],
                     TensorType((t.shape[dim],), t.element_type), {"iota_dimension": _i64(0)})
    new = rw.create("stablehlo.dynamic_broadcast_in_dim", [pre, shape], [t],
                    {"broadcast_dimensions": i64_array([dim])})
    rw.replace_op(op, new.results)
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_reshape", 1)
def dynamic_reshape_through_same_shape_op(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_reshape(op(dynamic_reshape(X, s)), s) -> op(dynamic_reshape(X, s))."""
    d = rw.defining(op.operands[0])
    if d is None or d.name not in names_with(ELEMENTWISE) or not d.operands:
        return False
    r = rw.defining(d.operands[0], "stablehlo.dynamic_reshape")
    if r is None or r.operands[1] is not op.operands[1]:
        return False
    rw.replace_op(op, [d.results[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_slice", 1)
def dynamic_slice_to_slice(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_slice(X, constant starts, sizes) -> slice (starts clamped as the op does)."""
    x = op.operands[0]
    if not is_static(x.type):
        return False
    sizes = _dims(op, "slice_sizes")
    starts = []
    for i, s in enumerate(op.operands[1:]):
        c = constant_of(s)
        if c is None or c.array.size != 1 or not (c.type.element_type.is_integer or
                                                  c.type.element_type.is_bool):
            return False
        starts.append(int(np.clip(int(c.array.reshape(-1)[0]), 0, x.type.shape[i] - sizes[i])))
    props = {"start_indices": i64_array(starts),
             "limit_indices": i64_array([s + n for s, n in zip(starts, sizes)]),
             "strides": i64_array([1] * len(starts))}
    replace_with_new(op, rw, "stablehlo.slice", [x], props)
    return True


@pattern(SIMPLIFY, "stablehlo.gather", 1)
def gather_to_slice(op: Operation, rw: PatternRewriter) -> bool:
    """gather(X, constant index) with one index vector -> slice (+ reshape)."""
    c = constant_of(op.operands[1])
    if c is None or not (c.type.element_type.is_integer or c.type.element_type.is_bool):
        return False
    dn = op.attr("dimension_numbers")
    get = (lambda k: tuple(ints(dn.get(k), ()) or ())) if hasattr(dn, "get") else None
    if get is None:
        return False
    ivd = dn.get("index_vector_dim")
    ivd = int(getattr(ivd, "value", ivd) or 0)
    if ivd != 0 or c.array.ndim > 1:
        return False
    start_map = get("start_index_map")
    if c.array.size != len(start_map):
        return False
    x = op.operands[0]
    if not is_static(x.type):
        return False
    end = list(_dims(op, "slice_sizes"))
    start = [0] * len(end)
    for m, v in zip(start_map, c.array.reshape(-1)):
        off = int(np.clip(int(v), 0, x.type.shape[m] - end[m]))
        start[m] += off
        end[m] += off
    shape = tuple(e - s for s, e in zip(start, end))
    et = op.results[0].type.element_type
    res = rw.create1("stablehlo.slice", [x], TensorType(shape, et),
                     {"start_indices": i64_array(start), "limit_indices": i64_array(end),
                      "strides": i64_array([1] * len(end))})
    collapsed = get("collapsed_slice_dims")
    if collapsed:
        rshape = tuple(d for i, d in enumerate(shape) if i not in collapsed)
        res = rw.create1("stablehlo.reshape", [res], TensorType(rshape, et))
    res.type = op.results[0].type
    rw.replace_op(op, [res])
    return True


@pattern(SIMPLIFY, "stablehlo.iota", 1)
def iota_to_broadcast(op: Operation, rw: PatternRewriter) -> bool:
    """iota(d) of rank >= 2 -> broadcast_in_dim(iota 1-D, [d])."""
    t = op.results[0].type
    if not isinstance(t, TensorType) or t.shape is None or t.rank < 2:
        return False
    dim = int(op.attr("iota_dimension").value)
    one = rw.create1("stablehlo.iota", [], TensorType((t.shape[dim],), t.element_type),
                     {"iota_dimension": _i64(0)})
    new = rw.create("stablehlo.broadcast_in_dim", [one], [t],
                    {"broadcast_dimensions": i64_array([dim])})
    rw.replace_op(op, new.results)
    return True


@pattern(SIMPLIFY, "stablehlo.pad", 1)
def pad_of_empty(op: Operation, rw: PatternRewriter) -> bool:
    """pad(X with no element, v) -> broadcast_in_dim(v) (static result)."""
    if _numel(op.operands[0].type) != 0 or not is_static(op.results[0].type):
        return False
    new = rw.create("stablehlo.broadcast_in_dim", [op.operands[1]], [op.results[0].type],
                    {"broadcast_dimensions": i64_array([])})
    rw.replace_op(op, new.results)
    return True


@pattern(SIMPLIFY, "stablehlo.real_dynamic_slice", 1)
def real_dynamic_slice_to_dynamic_slice(op: Operation, rw: PatternRewriter) -> bool:
    """real_dynamic_slice(X, s, s + constant, 1s) -> dynamic_slice(X, s..., sizes)."""
    x, start, limit, strides = op.operands
    st = _int_constant(strides)
    if st is None or any(s != 1 for s in st):
        return False
    add = rw.defining(limit, "stablehlo.add")
    if add is None:
        return False
    if add.operands[0] is start and constant_of(add.operands[1]) is not None:
        sizes = _int_constant(add.operands[1])
    elif add.operands[1] is start and constant_of(add.operands[0]) is not None:
        sizes = _int_constant(add.operands[0])
    else:
        return False
    if sizes is None:
        return False
    starts = rw.scalars_of(start, len(sizes))
    rt = TensorType(tuple(sizes), x.type.element_type)
    replace_with_new(op, rw, "stablehlo.dynamic_slice", [x, *starts],
                     {"slice_sizes": i64_array(sizes)}, result_type=rt)
    return True


@pattern(SIMPLIFY, "stablehlo.slice", 1)
def slice_of_concatenate(op: Operation, rw: PatternRewriter) -> bool:
    """slice(concatenate(X, Y, Z...)) -> slice(concatenate of the inputs it reads)."""
    if not is_static(op.results[0].type):
        return False
    concat = rw.defining(op.operands[0], "stablehlo.concatenate")
    if concat is None:
        return False
    dim = int(concat.attr("dimension").value)
    start, limit = list(_dims(op, "start_indices")), list(_dims(op, "limit_indices"))
    s0, l0 = start[dim], limit[dim]
    running, front = 0, concat.results[0].type.shape[dim]
    n = len(concat.operands)
    first, end = n, n
    for i, v in enumerate(concat.operands):
        size = v.type.shape[dim]
        if size is None:
            return False
        if running + size > s0 and first == n:
            first, front = i, running
        if running < l0:
            end = i + 1
        running += size
    count = end - first
    if count == n or count <= 0:
        return False
    if count > 1 and not rw.has_one_use(concat.results[0]):
        return False
    inputs = list(concat.operands[first:end])
    shape = list(concat.results[0].type.shape)
    shape[dim] = sum(v.type.shape[dim] for v in inputs)
    rw.anchor = op
    new_concat = rw.create1("stablehlo.concatenate", inputs,
                            TensorType(tuple(shape), concat.results[0].type.element_type),
                            {"dimension": concat.attr("dimension")},
                            location=concat.location)
    start[dim] -= front
    limit[dim] -= front
    new = rw.create("stablehlo.slice", [new_concat], [op.results[0].type],
                    {"start_indices": i64_array(start), "limit_indices": i64_array(limit),
                     "strides": op.attr("strides")})
    rw.replace_op(op, new.results)
    return True


@pattern(SIMPLIFY, "stablehlo.transpose", 1)
def transpose_is_reshape(op: Operation, rw: PatternRewriter) -> bool:
    """transpose that only moves dimensions of size 1 -> reshape."""
    x = op.operands[0]
    if not is_static(x.type) or not is_static(op.results[0].type):
        return False
    moved = [d for d in _dims(op, "permutation") if x.type.shape[d] != 1]
    if moved != sorted(moved):
        return False
    new = rw.create("stablehlo.reshape", [x], [op.results[0].type])
    rw.replace_op(op, new.results)
    return True


@pattern(SIMPLIFY, "stablehlo.tuple", 1)
def tuple_of_get_tuple_elements(op: Operation, rw: PatternRewriter) -> bool:
    """tuple(get_tuple_element(X, 0), get_tuple_element(X, 1), ...) -> X."""
    if not op.operands:
        return False
    first = rw.defining(op.operands[0], "stablehlo.get_tuple_element")
    if first is None or first.operands[0].type != op.results[0].type:
        return False
    src = first.operands[0]
    for i, v in enumerate(op.operands):
        g = rw.defining(v, "stablehlo.get_tuple_element")
        if g is None or int(g.attr("index").value) != i or g.operands[0] is not src:
            return False
    rw.replace_op(op, [src])
    return True


@pattern(SIMPLIFY, None, 1)
def zero_extent_to_empty_constant(op: Operation, rw: PatternRewriter) -> bool:
    """Results and operands with no element (static) become empty constants."""
    if op.dialect != "stablehlo" or is_constant_op(op) or op.name in names_with(SIDE_EFFECTS):
        return False
    done = False
    for r in op.results:
        if _numel(r.type) == 0 and not rw.use_empty(r):
            rw.replace_all_uses(r, rw.constant(dense(np.zeros(r.type.shape), r.type)))
            done = True
    for i, v in enumerate(list(op.operands)):
        if _numel(v.type) == 0 and const_op(v) is None:
            rw.set_operand(op, i, rw.constant(dense(np.zeros(v.type.shape), v.type)))
            done = True
    return done


@pattern(SIMPLIFY, "stablehlo.get_dimension_size", 1)
def get_dimension_size_static(op: Operation, rw: PatternRewriter) -> bool:
    """get_dimension_size(X, i) -> X.shape[i] when static."""
    d = op.operands[0].type.shape[int(op.attr("dimension").value)]
    if d is None:
        return False
    rw.replace_op(op, [rw.constant(dense(d, op.results[0].type))])
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_broadcast_in_dim", 1)
def dynamic_broadcast_not_dynamic(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_broadcast_in_dim with a static operand and a static (or constant) shape ->
    broadcast_in_dim."""
    x = op.operands[0]
    if not is_static(x.type):
        return False
    t = op.results[0].type
    props = {"broadcast_dimensions": op.attr("broadcast_dimensions")}
    if is_static(t):
        new = rw.create("stablehlo.broadcast_in_dim", [x], [t], props)
        rw.replace_op(op, new.results)
        return True
    shape = _int_constant(op.operands[1])
    if shape is None:
        return False
    st = TensorType(tuple(shape), t.element_type)
    new_v = rw.create1("stablehlo.broadcast_in_dim", [x], st, props)
    if any(u.dialect != "stablehlo" for u in rw.users(op.results[0])):
        new_v = rw.create1("stablehlo.convert", [new_v], t)
    rw.replace_op(op, [new_v])
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_reshape", 1)
def dynamic_reshape_static(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_reshape with a static result -> reshape."""
    if not is_static(op.results[0].type):
        return False
    new = rw.create("stablehlo.reshape", [op.operands[0]], [op.results[0].type])
    rw.replace_op(op, new.results)
    return True


@pattern(SIMPLIFY, "stablehlo.dynamic_iota", 1)
def dynamic_iota_static(op: Operation, rw: PatternRewriter) -> bool:
    """dynamic_iota with a static result -> iota."""
    if not is_static(op.results[0].type):
        return False
    new = rw.create("stablehlo.iota", [], [op.results[0].type],
                    {"iota_dimension": op.attr("iota_dimension")})
    rw.replace_op(op, new.results)
    return True
