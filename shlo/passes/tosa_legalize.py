"""``stablehlo-legalize-to-tosa`` and ``stablehlo-prepare-for-tosa`` (upstream
stablehlo/conversions/tosa/transforms/: StablehloLegalizeToTosa.pdll and .cpp,
StablehloPrepareForTosa.cpp; tests binary/nullary/ternary/unary.mlir there).

Both run upstream's patterns on the greedy driver (:mod:`._driver`, bottom-up, 10 iterations,
divergence ignored as upstream's ``(void)applyPatternsGreedily``), which also uniques and
hoists the constants (`tosa.const`, `tosa.const_shape` are ConstantLike) and erases dead ops.

``stablehlo-prepare-for-tosa`` has no pattern upstream (its dot_general patterns are commented
out), so it only does what the driver does on its own.

``stablehlo-legalize-to-tosa``, the PDLL patterns (operands must be Tosa_Tensor: tensors of
signless i1/i4/i8/i16/i32/i48/i64, ui8/ui16, floats or quantized values):

* constant -> tosa.const; abs, ceil, exponential, floor, log, tanh -> same-named tosa ops;
  convert -> cast; negate -> negate(x, zp, zp) with a zero `tensor<1xT>` zero point;
  exponential_minus_one -> sub(exp(x), 1); log_plus_one -> log(add(x, 1));
  is_finite -> logical_not(equal(abs(x), +inf));
* add, maximum, minimum, power -> add, maximum, minimum, pow; and/or/xor -> bitwise_*;
  subtract -> sub; multiply -> mul(a, b, shift = dense<0> : tensor<1xi8>); divide on i32 ->
  intdiv; shift_left/shift_right_logical -> logical_left_shift/logical_right_shift;
  select -> select.

The C++ patterns: compare EQ -> equal, NE -> logical_not(equal) (other directions stay);
concatenate -> concat {axis : i32}; dot and "simple" dot_general (no batching, contracting the
last lhs and first rhs dimension, ranks 1-2) -> reshape to rank 3, matmul, reshape back; gather
with a [N,K,C] operand, [N,W] indices, a [N,W,C] result and start_index_map 0, 1, ... -> gather;
iota (static) -> tile of a constant; reduce whose body is one add/maximum -> reduce_sum/
reduce_max {axis : i32} and reshape (upstream ignores the init value); return -> tosa.yield
(every `stablehlo.return`, as upstream); slice (rank 1-6, unit strides) -> slice(x, start,
size); transpose (rank 1-6) -> transpose {perms : array<i32>}; while -> while_loop (regions
moved); reshape (static) -> reshape(x, const_shape); float divide -> mul(a, reciprocal(b),
shift 0).

The driver's fold step, on the TOSA ops (TosaCanonicalizations.cpp's folders): Commutative ops
move a constant lhs to the right; cast and static slice of equal types, reshape of equal types,
transpose by the identity, tile by ones fold to their input; reshape(reshape(x)) becomes
reshape(x); reshape and transpose of a splat constant become a constant; ``x + 0``, ``0 + x``,
``x - 0`` fold to ``x``. Other folders (non-splat constants, mul, concat, ...) are not done.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..attributes import DenseArrayAttr, DenseElementsAttr, IntegerAttr, ints
from ..ir import Module, Operation, Value
from ..ops.indexing.gather import GatherDimensionNumbers
from ..ops.linalg.dot import dot_dimension_numbers
from ..ops.tosa_ops import TOSA_COMMUTATIVE
from ..types import (FloatType, IntegerType, OpaqueType, QuantizedType, TensorType, Type,
                     element_type)
from . import register_pass
from ._driver import GreedyConfig, apply_to_module
from ._patterns import PatternRewriter, constant_of, dense, pattern, patterns

__all__ = ["legalize_to_tosa", "prepare_for_tosa", "tosa_tensor"]

TOSA = "legalize-to-tosa"
_I1, _I8, _I32, _INDEX = (element_type(n) for n in ("i1", "i8", "i32", "index"))
_TOSA_INT_WIDTHS = frozenset({1, 4, 8, 16, 32, 48, 64})
_CONFIG = GreedyConfig(fail_on_divergence=False)


def tosa_tensor(t: Type) -> bool:
    """TOSA's ``Tosa_Tensor``: a tensor of Tosa_AnyNumber (booleans, signless integers of TOSA's
    widths, ui8/ui16, floats, quantized values)."""
    if not isinstance(t, TensorType):
        return False
    et = t.element_type
    if isinstance(et, (QuantizedType, FloatType)):
        return True
    if isinstance(et, IntegerType):
        if et.signedness == "signless":
            return et.width in _TOSA_INT_WIDTHS
        return et.signedness == "unsigned" and et.width in (8, 16)
    return False


def _i32_tensor(t: Type) -> bool:
    return isinstance(t, TensorType) and t.element_type == _I32


def _ranked(t: Type) -> TensorType:
    assert isinstance(t, TensorType)
    return t


def _static_dims(t: Type) -> tuple[int, ...] | None:
    return tuple(t.shape) if isinstance(t, TensorType) and t.is_static else None


# --- builders (upstream's rewrite helpers) --------------------------------------------------------


def _const(rw: PatternRewriter, values: Any, t: TensorType) -> Value:
    """`tosa.const` of ``values`` broadcast to ``t`` (zerosLike, onesLike, ...)."""
    attr = dense(values, t)
    return rw.create1("tosa.const", [], attr.type, {"values": attr})


def _scalar(t: Type) -> TensorType:
    """getScalarTensor: `tensor<1xT>` of ``t``'s element type."""
    return TensorType((1,), _ranked(t).element_type)


def _i1_like(t: Type) -> TensorType:
    """changeElementTypeToI1."""
    tt = _ranked(t)
    return TensorType(tt.shape, _I1)


def const_shape(rw: PatternRewriter, dims: Sequence[int]) -> Value:
    """getTosaConstShape: `tosa.const_shape {values = dense<dims> : tensor<Nxindex>}`."""
    attr = DenseElementsAttr(TensorType((len(dims),), _INDEX), np.asarray(dims, np.int64))
    return rw.create1("tosa.const_shape", [], OpaqueType(f"!tosa.shape<{len(dims)}>"),
                      {"values": attr})


def _replace(op: Operation, rw: PatternRewriter, name: str, operands: Sequence[Value],
             props: dict[str, Any] | None = None) -> bool:
    new = rw.create(name, list(operands), [r.type for r in op.results], props or {})
    rw.replace_op(op, new.results)
    return True


def _i32(v: int) -> IntegerAttr:
    return IntegerAttr(int(v), _I32)


# --- PDLL patterns ----------------------------------------------------------------------------


def _one_to_one(src: str, dst: str, arity: int, check: Any = tosa_tensor) -> None:
    def rewrite(op: Operation, rw: PatternRewriter) -> bool:
        if len(op.operands) != arity or not all(check(v.type) for v in op.operands):
            return False
        return _replace(op, rw, dst, op.operands)

    rewrite.__name__ = f"{src.split('.')[1]}_to_{dst.split('.')[1]}"
    pattern(TOSA, src)(rewrite)


@pattern(TOSA, "stablehlo.constant")
def constant(op: Operation, rw: PatternRewriter) -> bool:
    """constant {value : Tosa_Tensor} -> tosa.const {values}."""
    attr = op.attr("value")
    if not isinstance(attr, DenseElementsAttr) or not tosa_tensor(attr.type):
        return False
    return _replace(op, rw, "tosa.const", [], {"values": attr})


for _src, _dst in (("abs", "abs"), ("ceil", "ceil"), ("convert", "cast"),
                   ("exponential", "exp"), ("floor", "floor"), ("log", "log"),
                   ("tanh", "tanh")):
    _one_to_one(f"stablehlo.{_src}", f"tosa.{_dst}", 1)


def _unary_input(op: Operation) -> TensorType | None:
    return _ranked(op.operands[0].type) if tosa_tensor(op.operands[0].type) else None


@pattern(TOSA, "stablehlo.exponential_minus_one")
def exponential_minus_one(op: Operation, rw: PatternRewriter) -> bool:
    """expm1(x) -> sub(exp(x), ones)."""
    t = _unary_input(op)
    if t is None:
        return False
    ones = _const(rw, 1, t)
    e = rw.create1("tosa.exp", [op.operands[0]], t)
    rw.replace_op(op, [rw.create1("tosa.sub", [e, ones], t)])
    return True


@pattern(TOSA, "stablehlo.is_finite")
def is_finite(op: Operation, rw: PatternRewriter) -> bool:
    """is_finite(x) -> logical_not(equal(+inf, abs(x)))."""
    t = _unary_input(op)
    if t is None or not isinstance(t.element_type, FloatType):
        return False
    inf = _const(rw, np.inf, t)
    a = rw.create1("tosa.abs", [op.operands[0]], t)
    eq = rw.create1("tosa.equal", [inf, a], _i1_like(t))
    rw.replace_op(op, [rw.create1("tosa.logical_not", [eq], _i1_like(t))])
    return True


@pattern(TOSA, "stablehlo.log_plus_one")
def log_plus_one(op: Operation, rw: PatternRewriter) -> bool:
    """log1p(x) -> log(add(x, ones))."""
    t = _unary_input(op)
    if t is None:
        return False
    ones = _const(rw, 1, t)
    s = rw.create1("tosa.add", [op.operands[0], ones], t)
    rw.replace_op(op, [rw.create1("tosa.log", [s], t)])
    return True


@pattern(TOSA, "stablehlo.negate")
def negate(op: Operation, rw: PatternRewriter) -> bool:
    """negate(x) -> tosa.negate(x, zp, zp), zp a zero `tensor<1xT>`."""
    t = _unary_input(op)
    if t is None:
        return False
    zp = _const(rw, 0, _scalar(t))
    rw.replace_op(op, [rw.create1("tosa.negate", [op.operands[0], zp, zp], t)])
    return True


for _src, _dst in (("add", "add"), ("and", "bitwise_and"), ("maximum", "maximum"),
                   ("minimum", "minimum"), ("or", "bitwise_or"), ("power", "pow"),
                   ("shift_left", "logical_left_shift"),
                   ("shift_right_logical", "logical_right_shift"), ("subtract", "sub"),
                   ("xor", "bitwise_xor")):
    _one_to_one(f"stablehlo.{_src}", f"tosa.{_dst}", 2)
_one_to_one("stablehlo.divide", "tosa.intdiv", 2, _i32_tensor)
_one_to_one("stablehlo.select", "tosa.select", 3)


@pattern(TOSA, "stablehlo.multiply")
def multiply(op: Operation, rw: PatternRewriter) -> bool:
    """multiply(a, b) -> tosa.mul(a, b, shift = dense<0> : tensor<1xi8>)."""
    if not all(tosa_tensor(v.type) for v in op.operands):
        return False
    shift = _const(rw, 0, TensorType((1,), _I8))
    rw.replace_op(op, [rw.create1("tosa.mul", [*op.operands, shift],
                                  op.operands[0].type)])
    return True


# --- C++ patterns -----------------------------------------------------------------------------


@pattern(TOSA, "stablehlo.compare")
def compare(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloCompareOp: EQ -> equal; NE -> logical_not(equal); others stay."""
    d = getattr(op.attr("comparison_direction"), "value", None)
    rt = op.results[0].type
    if d == "EQ":
        return _replace(op, rw, "tosa.equal", op.operands)
    if d == "NE":
        eq = rw.create1("tosa.equal", list(op.operands), rt)
        rw.replace_op(op, [rw.create1("tosa.logical_not", [eq], rt)])
        return True
    return False


@pattern(TOSA, "stablehlo.concatenate")
def concatenate(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloConcatenateOp: concat {axis = dimension : i32}."""
    return _replace(op, rw, "tosa.concat", op.operands,
                    {"axis": _i32(op.attr("dimension").value)})


def _simple_dot(op: Operation, rw: PatternRewriter) -> bool:
    """rewriteSimpleDotOp: lhs/rhs of rank 1-2 reshaped to rank 3, tosa.matmul (with zero
    points, TOSA 1.0), the product reshaped to the result shape."""
    lhs, rhs = op.operands
    lt, rt, res = lhs.type, rhs.type, op.results[0].type
    ls, rs, outs = _static_dims(lt), _static_dims(rt), _static_dims(res)
    if ls is None or rs is None or outs is None:
        return False
    et = _ranked(lt).element_type
    if et != _ranked(rt).element_type:
        return False
    if len(ls) not in (1, 2) or len(rs) not in (1, 2):
        return False
    lhs_r = (1, 1, ls[0]) if len(ls) == 1 else (1, ls[0], ls[1])
    rhs_r = (1, rs[0], 1) if len(rs) == 1 else (1, rs[0], rs[1])
    mm = (1, 1 if len(ls) == 1 else ls[0], 1 if len(rs) == 1 else rs[1])
    a = rw.create1("tosa.reshape", [lhs, const_shape(rw, lhs_r)], TensorType(lhs_r, et))
    b = rw.create1("tosa.reshape", [rhs, const_shape(rw, rhs_r)], TensorType(rhs_r, et))
    a_zp = _const(rw, 0, TensorType((1,), et))
    b_zp = _const(rw, 0, TensorType((1,), et))
    m = rw.create1("tosa.matmul", [a, b, a_zp, b_zp], TensorType(mm, et))
    rw.replace_op(op, [rw.create1("tosa.reshape", [m, const_shape(rw, outs)], res)])
    return True


@pattern(TOSA, "stablehlo.dot")
def dot(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloDotOp."""
    return _simple_dot(op, rw)


@pattern(TOSA, "stablehlo.dot_general")
def dot_general(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloDotGeneralOp, for DotGeneralOp::isSimpleDot (no batching dimensions,
    lhs contracting its last dimension, rhs its first, ranks at most 2)."""
    lt, rt = op.operands[0].type, op.operands[1].type
    if not isinstance(lt, TensorType) or not isinstance(rt, TensorType) \
            or lt.shape is None or rt.shape is None or lt.rank > 2 or rt.rank > 2:
        return False
    dn = dot_dimension_numbers(op)
    if dn.lhs_batching_dimensions or dn.rhs_batching_dimensions:
        return False
    if tuple(dn.lhs_contracting_dimensions) != (lt.rank - 1,) \
            or tuple(dn.rhs_contracting_dimensions) != (0,):
        return False
    return _simple_dot(op, rw)


@pattern(TOSA, "stablehlo.iota")
def iota(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloIotaOp: a constant [0, 1, ...] along the iota dimension, tiled to the
    (static) result shape."""
    rt = op.results[0].type
    shape = _static_dims(rt)
    et = _ranked(rt).element_type
    if shape is None or not (et.is_float or et.is_integer or et.is_bool):
        return False
    dim = int(op.attr("iota_dimension").value)
    cshape = tuple(n if i == dim else 1 for i, n in enumerate(shape))
    values = np.arange(shape[dim]).reshape(cshape)
    c = _const(rw, values, TensorType(cshape, et))
    multiples = [1 if i == dim else n for i, n in enumerate(shape)]
    return _replace(op, rw, "tosa.tile", [c, const_shape(rw, multiples)])


@pattern(TOSA, "stablehlo.gather")
def gather(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloGatherOp: operand [N,K,C], start_indices [N,W], result [N,W,C],
    start_index_map 0, 1, ... (upstream checks nothing else)."""
    operand, indices = op.operands
    ot, it, rt = (v.type for v in (operand, indices, op.results[0]))
    if not all(isinstance(t, TensorType) and t.shape is not None for t in (ot, it, rt)):
        return False
    if (ot.rank, it.rank, rt.rank) != (3, 2, 3):
        return False
    if it.shape[0] != rt.shape[0] or it.shape[1] != rt.shape[1]:
        return False
    if ot.shape[0] != rt.shape[0] or ot.shape[2] != rt.shape[2]:
        return False
    dims = GatherDimensionNumbers.of(op)
    if dims is None or tuple(dims.start_index_map) != tuple(range(len(dims.start_index_map))):
        return False
    return _replace(op, rw, "tosa.gather", [operand, indices])


_REDUCE_BODY = {"stablehlo.add": "tosa.reduce_sum", "stablehlo.maximum": "tosa.reduce_max"}


@pattern(TOSA, "stablehlo.reduce")
def reduce(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloReduceOp: a body of one add/maximum and the return -> reduce_sum/
    reduce_max along ``dimensions[0]`` (kept as size 1), then reshape dropping it. Upstream
    uses the first input only and ignores the init value."""
    if len(op.results) != 1 or not op.regions or len(op.regions[0].blocks) != 1:
        return False
    body = op.regions[0].blocks[0].operations
    if len(body) != 2 or body[0].name not in _REDUCE_BODY:
        return False
    dims = ints(op.attr("dimensions"), ()) or ()
    if len(dims) != 1:  # upstream would build a reshape of the wrong rank
        return False
    x = op.operands[0]
    xt = x.type
    if not isinstance(xt, TensorType) or xt.shape is None:
        return False
    dim = int(dims[0])
    inner = tuple(1 if i == dim else n for i, n in enumerate(xt.shape))
    r = rw.create1(_REDUCE_BODY[body[0].name], [x], TensorType(inner, xt.element_type),
                   {"axis": _i32(dim)})
    out = inner[:dim] + inner[dim + 1:]
    if any(n is None or n < 0 for n in out):
        return False
    rw.replace_op(op, [rw.create1("tosa.reshape", [r, const_shape(rw, out)],
                                  op.results[0].type)])
    return True


@pattern(TOSA, "stablehlo.return")
def return_(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloReturnOp: stablehlo.return -> tosa.yield."""
    rw.create("tosa.yield", list(op.operands), [])
    rw.replace_op(op, [])
    return True


@pattern(TOSA, "stablehlo.slice")
def slice_(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloSliceOp: rank 1-6, unit strides -> slice(x, start, limit - start)."""
    t = op.operands[0].type
    if not isinstance(t, TensorType) or t.shape is None or not 1 <= t.rank <= 6:
        return False
    if any(s != 1 for s in ints(op.attr("strides"), ()) or ()):
        return False
    start = [int(s) for s in ints(op.attr("start_indices"), ()) or ()]
    limit = [int(s) for s in ints(op.attr("limit_indices"), ()) or ()]
    size = [b - a for a, b in zip(start, limit)]
    return _replace(op, rw, "tosa.slice", [op.operands[0], const_shape(rw, start),
                                           const_shape(rw, size)])


@pattern(TOSA, "stablehlo.transpose")
def transpose(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloTransposeOp: rank 1-6 -> transpose {perms = array<i32: ...>}."""
    t = op.operands[0].type
    if not isinstance(t, TensorType) or t.shape is None or not 1 <= t.rank <= 6:
        return False
    perms = tuple(int(p) for p in ints(op.attr("permutation"), ()) or ())
    return _replace(op, rw, "tosa.transpose", op.operands,
                    {"perms": DenseArrayAttr(_I32, perms)})


@pattern(TOSA, "stablehlo.while")
def while_(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloWhileOp: tosa.while_loop with the cond and body regions."""
    regions = rw.take_regions(op)
    new = rw.create("tosa.while_loop", list(op.operands), [r.type for r in op.results],
                    regions=regions)
    for r in regions:  # upstream clones the regions: their ops are new to the driver
        for b in r.blocks:
            for inner in b.operations:
                for o in inner.walk():
                    rw.listener.inserted(o)
    rw.replace_op(op, new.results)
    return True


@pattern(TOSA, "stablehlo.reshape")
def reshape(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloReshapeOp: static result -> reshape(x, const_shape)."""
    shape = _static_dims(op.results[0].type)
    if shape is None:
        return False
    return _replace(op, rw, "tosa.reshape", [op.operands[0], const_shape(rw, shape)])


@pattern(TOSA, "stablehlo.divide")
def float_divide(op: Operation, rw: PatternRewriter) -> bool:
    """ConvertStablehloFloatDivideOp: a / b -> mul(a, reciprocal(b), shift 0)."""
    lt, rt = op.operands[0].type, op.operands[1].type
    if not isinstance(lt, TensorType) or not isinstance(rt, TensorType):
        return False
    if not (isinstance(lt.element_type, FloatType) or isinstance(rt.element_type, FloatType)):
        return False
    shift = _const(rw, 0, TensorType((1,), _I8))
    recip = rw.create1("tosa.reciprocal", [op.operands[1]], rt)
    rw.replace_op(op, [rw.create1("tosa.mul", [op.operands[0], recip, shift],
                                  op.results[0].type)])
    return True


def _fold_commutative(op: Operation, rw: PatternRewriter) -> bool:
    """MLIR's foldCommutative (part of the driver's folding): constant operands move to the
    end, in order."""
    ops = list(op.operands)
    is_c = [constant_of(v) is not None for v in ops]
    moved = [v for v, c in zip(ops, is_c) if not c] + [v for v, c in zip(ops, is_c) if c]
    if moved == ops:
        return False
    rw.set_operands(op, moved)
    return True


for _name in sorted(TOSA_COMMUTATIVE):
    pattern(TOSA, _name)(_fold_commutative)


# --- TOSA folders (TosaCanonicalizations.cpp's fold methods the driver calls) ------------------


def _splat(v: Value) -> Any:
    """The splat value of the constant defining ``v``, or None."""
    c = constant_of(v)
    if c is None or not c.array.size:
        return None
    flat = np.asarray(c.array).reshape(-1)
    return flat[0] if bool(np.all(flat == flat[0])) else None


def _fold_to(op: Operation, rw: PatternRewriter, v: Value) -> bool:
    rw.replace_op(op, [v])
    return True


def _splat_const(op: Operation, rw: PatternRewriter, value: Any) -> bool:
    t = op.results[0].type
    return _fold_to(op, rw, _const(rw, value, _ranked(t)))


def _fold_same_type(op: Operation, rw: PatternRewriter) -> bool:
    """CastOp/SliceOp::fold: the input when the types are equal (slice: static)."""
    x, t = op.operands[0], op.results[0].type
    if x.type != t or (op.name == "tosa.slice" and not _ranked(t).is_static):
        return False
    return _fold_to(op, rw, x)


def _fold_reshape(op: Operation, rw: PatternRewriter) -> bool:
    """ReshapeOp::fold: the input for equal types (at most one dynamic dimension);
    reshape(reshape(x)) -> reshape(x); a splat constant reshaped."""
    x, t = op.operands[0], op.results[0].type
    if not isinstance(x.type, TensorType) or x.type.shape is None or _ranked(t).shape is None:
        return False
    if x.type == t and sum(d is None or d < 0 for d in _ranked(t).shape) < 2:
        return _fold_to(op, rw, x)
    inner = rw.defining(x, "tosa.reshape")
    if inner is not None:
        rw.set_operand(op, 0, inner.operands[0])
        return True
    sp = _splat(x)
    if sp is not None and _ranked(t).is_static:
        return _splat_const(op, rw, sp)
    return False


def _fold_transpose(op: Operation, rw: PatternRewriter) -> bool:
    """TransposeOp::fold: a splat constant reshaped; the input for the identity perms."""
    x, t = op.operands[0], op.results[0].type
    sp = _splat(x)
    if sp is not None and _ranked(t).is_static \
            and _ranked(x.type).element_type == _ranked(t).element_type:
        return _splat_const(op, rw, sp)
    perms = tuple(ints(op.attr("perms"), ()) or ())
    if perms != tuple(range(len(perms))):
        return False
    return _fold_to(op, rw, x)


def _fold_tile(op: Operation, rw: PatternRewriter) -> bool:
    """TileOp::fold: the input when the types are equal and the multiples are all 1."""
    x, t = op.operands[0], op.results[0].type
    m = constant_of(op.operands[1])
    if x.type != t or m is None or not bool(np.all(np.asarray(m.array) == 1)):
        return False
    return _fold_to(op, rw, x)


def _fold_add_sub_zero(op: Operation, rw: PatternRewriter) -> bool:
    """AddOp/SubOp::fold: ``x + 0``, ``0 + x`` (add) and ``x - 0`` are ``x`` (same type)."""
    a, b = op.operands
    t = op.results[0].type
    if a.type == t and _splat(b) == 0 and _splat(b) is not None:
        return _fold_to(op, rw, a)
    if op.name == "tosa.add" and b.type == t and _splat(a) is not None and _splat(a) == 0:
        return _fold_to(op, rw, b)
    return False


for _name, _fold in (("tosa.cast", _fold_same_type), ("tosa.slice", _fold_same_type),
                     ("tosa.reshape", _fold_reshape), ("tosa.transpose", _fold_transpose),
                     ("tosa.tile", _fold_tile), ("tosa.add", _fold_add_sub_zero),
                     ("tosa.sub", _fold_add_sub_zero)):
    pattern(TOSA, _name, benefit=2)(_fold)


@register_pass("stablehlo-legalize-to-tosa")
def legalize_to_tosa(module: Module, options: dict[str, Any] | None = None) -> Module:
    """Legalize StableHLO to TOSA (upstream's PDLL and C++ patterns; see
    :mod:`shlo.passes.tosa_legalize`)."""
    return apply_to_module(module, patterns(TOSA), _CONFIG, "stablehlo-legalize-to-tosa")


@register_pass("stablehlo-prepare-for-tosa")
def prepare_for_tosa(module: Module, options: dict[str, Any] | None = None) -> Module:
    """Prepare StableHLO for legalization to TOSA: upstream registers no pattern (its dot_general
    lowerings are commented out), so only the driver's constant uniquing and dead-code removal
    happen."""
    return apply_to_module(module, [], _CONFIG, "stablehlo-prepare-for-tosa")
