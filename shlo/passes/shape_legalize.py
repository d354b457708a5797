"""shape-legalize-to-stablehlo: shape computations of the `shape`, `tensor` and `arith` dialects
become StableHLO ops (upstream's ShapeLegalizeToStablehlo.cpp).

MLIR-style shapes use `index` / `tensor<Nxindex>`, StableHLO's use `tensor<i32>` /
`tensor<Nxi32>`; the patterns bridge the two with `builtin.unrealized_conversion_cast` ops,
which annihilate in pairs under `canonicalize`. Upstream runs the patterns as a *partial
conversion*: illegal ops first fold when they fold to an existing value, then the patterns
apply. Illegal are every `shape` op, every `tensor` op but `tensor.cast`,
`arith.index_cast`, `arith.muli`, and StableHLO ops with an index-typed operand; an illegal op
no pattern converts fails the pass ("failed to legalize operation ..."). Other ops (`arith.constant`,
`func.return`, ...) stay, even when unused.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..attributes import DenseElementsAttr, IntegerAttr
from ..ir import Module, Operation, Value
from ..types import IndexType, IntegerType, TensorType, Type, element_type
from . import register_pass
from ._driver import copy_module
from ._patterns import PatternRewriter
from ._rewrite import PassError, const_attr, i64_array

_I32 = element_type("i32")
_SCALAR_I32 = TensorType((), _I32)
_INDEX = IndexType()

Pattern = Callable[[Operation, PatternRewriter], bool]
_PATTERNS: dict[str, Pattern] = {}


def _pattern(*names: str) -> Callable[[Pattern], Pattern]:
    def deco(fn: Pattern) -> Pattern:
        for n in names:
            _PATTERNS[n] = fn
        return fn

    return deco


# --- the index <-> i32 bridge ---------------------------------------------------------------------


def _is_index(t: Type) -> bool:
    return isinstance(t, IndexType)


def _is_i32(t: Type) -> bool:
    return isinstance(t, IntegerType) and t.width == 32 and not t.is_unsigned and \
        t.signedness == "signless"


def is_shaped_of_i32(t: Type) -> bool:
    return isinstance(t, TensorType) and _is_i32(t.element_type)


def is_index_or_shaped_of_index(t: Type) -> bool:
    return _is_index(t) or isinstance(t, TensorType) and _is_index(t.element_type)


def _cast(rw: PatternRewriter, v: Value, t: Type) -> Value:
    return rw.create1("builtin.unrealized_conversion_cast", [v], t)


def i32_type_of(t: Type) -> Type | None:
    """The type `cast_to_i32` gives a value of type ``t`` (itself when already i32-based)."""
    if _is_index(t):
        return _SCALAR_I32
    if isinstance(t, TensorType):
        if not t.is_static:
            return None
        if _is_i32(t.element_type):
            return t
        if _is_index(t.element_type):
            return TensorType(t.shape, _I32)
    return None


def cast_to_i32(rw: PatternRewriter, v: Value) -> Value | None:
    """index -> tensor<i32>, tensor<Nxindex> -> tensor<Nxi32> (upstream's castToI32)."""
    t = i32_type_of(v.type)
    if t is None:
        return None
    return v if t == v.type else _cast(rw, v, t)


def index_type_of(t: Type) -> Type | None:
    """The type `cast_to_index` gives a value of type ``t``."""
    if _is_index(t):
        return t
    if isinstance(t, TensorType):
        if not t.is_static:
            return None
        if _is_i32(t.element_type):
            return _INDEX if not t.shape else TensorType(t.shape, _INDEX)
        if _is_index(t.element_type):
            return t
    return None


def cast_to_index(rw: PatternRewriter, v: Value) -> Value | None:
    """tensor<i32> -> index, tensor<Nxi32> -> tensor<Nxindex> (upstream's castToIndex)."""
    t = index_type_of(v.type)
    if t is None:
        return None
    return v if t == v.type else _cast(rw, v, t)


def _constant_index(v: Value) -> int | None:
    """The value of an `arith.constant N : index` defining ``v`` (arith::ConstantIndexOp)."""
    op = v.owner
    if isinstance(op, Operation) and op.name == "arith.constant" and _is_index(v.type):
        attr = op.attr("value")
        if isinstance(attr, IntegerAttr):
            return int(attr.value)
    return None


def _i32_constant(rw: PatternRewriter, values: Any, shape: tuple[int, ...] = ()) -> Value:
    attr = const_attr(np.asarray(values, np.int64).astype(np.int32), _I32, shape)
    return rw.constant(attr)


def _constant_or_i32_cast(rw: PatternRewriter, v: Value) -> Value | None:
    c = _constant_index(v)
    return _i32_constant(rw, c) if c is not None else cast_to_i32(rw, v)


def _slice1(rw: PatternRewriter, v: Value, i: int) -> Value:
    """v[i:i+1] of a 1-d i32 tensor, reshaped to tensor<i32>."""
    s = rw.create1("stablehlo.slice", [v], TensorType((1,), _I32),
                   {"start_indices": i64_array([i]), "limit_indices": i64_array([i + 1]),
                    "strides": i64_array([1])})
    return rw.create1("stablehlo.reshape", [s], _SCALAR_I32)


def _concatenate(rw: PatternRewriter, parts: list[Value]) -> Value:
    n = sum(p.type.shape[0] for p in parts)  # type: ignore[union-attr]
    return rw.create1("stablehlo.concatenate", parts, TensorType((n,), _I32),
                      {"dimension": IntegerAttr(0, element_type("i64"))})


# --- the patterns (upstream's populateShapeToStablehloPatterns) ----------------------------------


@_pattern("shape.const_shape")
def convert_const_shape(op: Operation, rw: PatternRewriter) -> bool:
    """shape.const_shape [a, b] : tensor<2xindex> -> cast(constant dense<[a, b]> : tensor<2xi32>)."""
    t = op.results[0].type
    if not isinstance(t, TensorType) or t.shape is None:
        return False
    extents = np.asarray(op.attr("shape").array).reshape(-1)
    new = _i32_constant(rw, extents, (t.shape[0] if t.shape[0] is not None else len(extents),))
    rw.replace_op(op, [cast_to_index(rw, new)])
    return True


@_pattern("arith.muli")
def convert_muli(op: Operation, rw: PatternRewriter) -> bool:
    """arith.muli on index -> stablehlo.multiply on tensor<i32> (constants become constants)."""
    if not all(is_index_or_shaped_of_index(v.type) for v in (*op.operands, op.results[0])):
        return False
    if any(i32_type_of(v.type) is None for v in op.operands):
        return False
    lhs, rhs = (_constant_or_i32_cast(rw, v) for v in op.operands)
    assert lhs is not None and rhs is not None
    res = rw.create1("stablehlo.multiply", [lhs, rhs], lhs.type)
    rw.replace_op(op, [cast_to_index(rw, res)])
    return True


@_pattern("arith.index_cast")
def convert_index_cast(op: Operation, rw: PatternRewriter) -> bool:
    """arith.index_cast between index and i32 styles: casts (index -> iN scalars through
    stablehlo.convert)."""
    src, out = op.operands[0], op.results[0].type
    st = src.type
    if is_index_or_shaped_of_index(st) and not isinstance(st, TensorType):
        # index -> iN: cast to tensor<i32>, convert, cast to iN
        res = cast_to_i32(rw, src)
        assert res is not None
        if not _is_i32(out):
            assert isinstance(out, IntegerType)
            res = rw.create1("stablehlo.convert", [res], TensorType((), out))
        rw.replace_op(op, [_cast(rw, res, out)])
        return True
    if not isinstance(st, TensorType) and is_index_or_shaped_of_index(out):
        # i32 -> index: cast to tensor<i32>, cast to index
        res = _cast(rw, src, TensorType((), st))  # type: ignore[arg-type]
        rw.replace_op(op, [_cast(rw, res, out)])
        return True
    if is_index_or_shaped_of_index(st):
        if i32_type_of(st) is None:
            return False
    elif not is_shaped_of_i32(st):
        return False
    if is_index_or_shaped_of_index(out):
        t = i32_type_of(st)
        if t is None or index_type_of(t) is None:
            return False
    elif not is_shaped_of_i32(out):
        return False
    res = cast_to_i32(rw, src) if is_index_or_shaped_of_index(st) else src
    assert res is not None
    if is_index_or_shaped_of_index(out):
        res = cast_to_index(rw, res)
    rw.replace_op(op, [res])
    return True


@_pattern("shape.num_elements")
def convert_num_elements(op: Operation, rw: PatternRewriter) -> bool:
    """shape.num_elements(shape) -> 1 * shape[0] * shape[1] * ... on tensor<i32> (multiplies
    fold where extents are static, a reduce would not)."""
    shape_t = i32_type_of(op.operands[0].type)
    if shape_t is None or not isinstance(shape_t, TensorType) or \
            index_type_of(_SCALAR_I32) != op.results[0].type:
        return False
    shape = cast_to_i32(rw, op.operands[0])
    assert shape is not None
    res = _i32_constant(rw, 1)
    for i in range(shape_t.num_elements):
        res = rw.create1("stablehlo.multiply", [res, _slice1(rw, shape, i)], _SCALAR_I32)
    rw.replace_op(op, [cast_to_index(rw, res)])
    return True


@_pattern("shape.shape_of")
def convert_shape_of(op: Operation, rw: PatternRewriter) -> bool:
    """shape.shape_of(X) -> concatenate(reshape(get_dimension_size(X, i)) ...) : tensor<Nxi32>
    (a constant `dense<>` for rank 0)."""
    t = op.operands[0].type
    if not isinstance(t, TensorType) or t.shape is None:
        return False
    if index_type_of(TensorType((len(t.shape),), _I32)) != op.results[0].type:
        return False
    if t.shape:
        parts = []
        for i in range(len(t.shape)):
            size = rw.create1("stablehlo.get_dimension_size", [op.operands[0]], _SCALAR_I32,
                              {"dimension": IntegerAttr(i, element_type("i64"))})
            parts.append(rw.create1("stablehlo.reshape", [size], TensorType((1,), _I32)))
        shape = _concatenate(rw, parts)
    else:
        shape = rw.constant(DenseElementsAttr(TensorType((0,), _I32), np.zeros(0, np.int32)))
    rw.replace_op(op, [cast_to_index(rw, shape)])
    return True


def _pad_from_left(rw: PatternRewriter, v: Value, pad: int) -> Value:
    return _concatenate(rw, [_i32_constant(rw, 1, (pad,)), v])


@_pattern("shape.broadcast")
def convert_broadcast(op: Operation, rw: PatternRewriter) -> bool:
    """shape.broadcast(a, b) -> maximum(a, b) on tensor<Nxi32>, the shorter padded with ones
    from the left (the shapes are assumed broadcastable: cstr_broadcastable checks that)."""
    if len(op.operands) != 2:
        return False
    t1, t2 = (i32_type_of(v.type) for v in op.operands)
    if not (isinstance(t1, TensorType) and isinstance(t2, TensorType)) or \
            len(t1.shape) != 1 or len(t2.shape) != 1:  # type: ignore[arg-type]
        return False
    n1, n2 = t1.shape[0], t2.shape[0]  # type: ignore[index]
    if index_type_of(TensorType((max(n1, n2),), _I32)) != op.results[0].type:
        return False
    s1, s2 = (cast_to_i32(rw, v) for v in op.operands)
    assert s1 is not None and s2 is not None
    if n1 < n2:
        s1 = _pad_from_left(rw, s1, n2 - n1)
    elif n1 > n2:
        s2 = _pad_from_left(rw, s2, n1 - n2)
    res = rw.create1("stablehlo.maximum", [s1, s2], s1.type)
    rw.replace_op(op, [cast_to_index(rw, res)])
    return True


@_pattern("stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_reshape")
def cast_operands(op: Operation, rw: PatternRewriter) -> bool:
    """A StableHLO op with tensor<Nxindex> operands -> the op on tensor<Nxi32> (the casts
    annihilate with those of the operands' producers under canonicalize)."""
    if not any(is_index_or_shaped_of_index(v.type) for v in op.operands):
        return False
    if any(is_index_or_shaped_of_index(v.type) and i32_type_of(v.type) is None
           for v in op.operands):
        return False
    operands = [cast_to_i32(rw, v) if is_index_or_shaped_of_index(v.type) else v
                for v in op.operands]
    new = rw.create(op.name, operands, [r.type for r in op.results], dict(op.properties),
                    dict(op.attributes))
    rw.replace_op(op, new.results)
    return True


@_pattern("tensor.dim")
def convert_tensor_dim(op: Operation, rw: PatternRewriter) -> bool:
    """tensor.dim X, constant i -> cast(get_dimension_size(X, i))."""
    i = _constant_index(op.operands[1])
    if i is None:
        return False
    size = rw.create1("stablehlo.get_dimension_size", [op.operands[0]], _SCALAR_I32,
                      {"dimension": IntegerAttr(i, element_type("i64"))})
    rw.replace_op(op, [cast_to_index(rw, size)])
    return True


@_pattern("tensor.extract")
def convert_tensor_extract(op: Operation, rw: PatternRewriter) -> bool:
    """tensor.extract X[constant indices] -> reshape(slice(X)) : tensor<i32>, cast to the
    element type."""
    t = op.operands[0].type
    if not isinstance(t, TensorType) or t.shape is None:
        return False
    indices = []
    for k, v in enumerate(op.operands[1:]):
        c = _constant_index(v)
        if c is None or t.shape[k] is None or c >= t.shape[k]:
            return False
        indices.append(c)
    src = cast_to_i32(rw, op.operands[0])
    if src is None or not is_shaped_of_i32(src.type):
        return False
    piece = rw.create1("stablehlo.slice", [src], TensorType((1,) * len(indices), _I32),
                       {"start_indices": i64_array(indices),
                        "limit_indices": i64_array([i + 1 for i in indices]),
                        "strides": i64_array([1] * len(indices))})
    scalar = rw.create1("stablehlo.reshape", [piece], _SCALAR_I32)
    rt = op.results[0].type
    rw.replace_op(op, [cast_to_index(rw, scalar) if _is_index(rt) else _cast(rw, scalar, rt)])
    return True


@_pattern("tensor.from_elements")
def convert_tensor_from_elements(op: Operation, rw: PatternRewriter) -> bool:
    """tensor.from_elements a, b : tensor<2xindex> -> concatenate of their tensor<1xi32> forms;
    a 0-d result is a cast of its element."""
    t = op.results[0].type
    if not isinstance(t, TensorType) or t.shape is None:
        return False
    if not t.shape:
        rw.replace_op(op, [_cast(rw, op.operands[0], t)])
        return True
    if len(t.shape) != 1 or not is_index_or_shaped_of_index(t):
        return False
    if any(_constant_index(v) is None and i32_type_of(v.type) != _SCALAR_I32
           for v in op.operands):
        return False
    parts = []
    for v in op.operands:
        c = _constant_index(v)
        if c is not None:
            parts.append(_i32_constant(rw, c, (1,)))
        else:
            i32 = cast_to_i32(rw, v)
            assert i32 is not None
            parts.append(rw.create1("stablehlo.reshape", [i32], TensorType((1,), _I32)))
    res = cast_to_index(rw, _concatenate(rw, parts))
    rw.replace_op(op, [res])
    return True


# --- the conversion -------------------------------------------------------------------------------


def is_illegal(op: Operation) -> bool:
    """Upstream's conversion target: shape ops, tensor ops but `tensor.cast`,
    `arith.index_cast`, `arith.muli`, and StableHLO ops with an index-typed operand."""
    if op.dialect == "shape":
        return True
    if op.dialect == "tensor":
        return op.name != "tensor.cast"
    if op.name in ("arith.index_cast", "arith.muli"):
        return True
    if op.dialect == "stablehlo":
        return any(is_index_or_shaped_of_index(v.type) for v in op.operands)
    return False


def _int_splat(v: Value) -> int | None:
    """The integer a constant-like op defining ``v`` holds (in every element), if any."""
    op = v.owner
    if not isinstance(op, Operation) or op.operands or len(op.results) != 1:
        return None
    attr = op.attr("value")
    if isinstance(attr, IntegerAttr):
        return int(attr.value)
    if isinstance(attr, DenseElementsAttr) and attr.is_splat and \
            attr.type.element_type.is_integer:
        return int(np.asarray(attr.array).reshape(-1)[0])
    return None


def fold_to_existing(op: Operation, operands: list[Value]) -> Value | None:
    """The value an illegal op folds to when that value already exists (the conversion driver
    folds before it tries patterns; a fold that needs a new constant is not taken): MulIOp's
    `x * 0 -> 0` and `x * 1 -> x`, ExtractOp's `from_elements(...)[i] -> element`.
    ``operands`` are the op's operands before the conversion (the driver replaces values only
    at its end, so a fold sees converted producers as they were)."""
    if op.name == "arith.muli":
        rhs = _int_splat(operands[1])
        if rhs == 0 and operands[1].type == op.results[0].type:
            return op.operands[1]
        if rhs == 1:
            return op.operands[0]
    if op.name == "tensor.extract":
        src = operands[0].owner
        t = op.operands[0].type
        if isinstance(src, Operation) and src.name == "tensor.from_elements" and \
                isinstance(t, TensorType) and t.is_static:
            idx = [_constant_index(v) for v in op.operands[1:]]
            if all(i is not None for i in idx) and all(
                    0 <= i < d for i, d in zip(idx, t.shape)):  # type: ignore[operator]
                flat = int(np.ravel_multi_index(idx, t.shape)) if idx else 0  # type: ignore
                return src.operands[flat]
    return None


def _convert(func: Operation) -> None:
    rw = PatternRewriter(func)
    ops = list(func.walk())
    original = {id(op): list(op.operands) for op in ops}
    for op in ops:
        if op is func or op.parent is None or not is_illegal(op):
            continue
        folded = fold_to_existing(op, original[id(op)])
        if folded is not None:
            rw.replace_op(op, [folded])
            continue
        fn = _PATTERNS.get(op.name)
        rw.anchor = op
        if fn is None or not fn(op, rw):
            raise PassError(f"failed to legalize operation '{op.name}' that was explicitly "
                            "marked illegal", op.location)


@register_pass("shape-legalize-to-stablehlo")
def shape_legalize_to_stablehlo(module: Module, options: dict[str, str] | None = None) -> Module:
    """Legalize shape-related ops to StableHLO.

    Shape computations on `index` (`shape.shape_of`, `num_elements`, `broadcast`,
    `const_shape`, `tensor.dim`, `extract`, `from_elements`, `arith.index_cast`, `muli`) become
    StableHLO ops on `tensor<i32>`, bridged by `unrealized_conversion_cast` (upstream's partial
    conversion; an op it cannot convert fails the pass)."""
    out = copy_module(module)
    for op in list(out.op.walk()):
        if op.name == "func.func" and op.regions and op.regions[0].blocks:
            _convert(op)
    return out
