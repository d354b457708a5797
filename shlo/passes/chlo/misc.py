"""next_after (on the bit patterns), sinh and cosh (exponentials shifted by log(1/2); sinh by
expm1 near 0), top_k (iota + stable sort by GT, TOTALORDER for floats, then slices)."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ...attributes import BoolAttr, EnumAttr, IntegerAttr
from ...ir import Block, Operation, Region, Value
from ...types import ComplexType, IntegerType, TensorType
from .._rewrite import i64_array
from ._builder import I32, I64, Builder, lowering, tensor


@lowering("chlo.next_after")
def _next_after(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    x, y = operands
    t = tensor(x)
    width = t.element_type.dtype.itemsize * 8
    int_t = IntegerType(width)
    x_int, y_int = b.bitcast(x, int_t), b.bitcast(y, int_t)
    nan_input = b.op("or", b.cmp("NE", x, x), b.cmp("NE", y, y))
    nan_int = b.bitcast(b.like(math.nan, x), int_t)
    sign_bit = 1 << (width - 1)
    sign_mask = b.like(sign_bit, x_int)
    magnitude_mask = b.like(~sign_bit, x_int)
    x_abs = b.op("and", x_int, magnitude_mask)
    y_abs = b.op("and", y_int, magnitude_mask)
    equal = b.cmp("EQ", x, y)
    zero = b.like(0, x_int)
    x_zero = b.cmp("EQ", x_abs, zero)
    y_zero = b.cmp("EQ", y_abs, zero)
    x_sign = b.op("and", x_int, sign_mask)
    y_sign = b.op("and", y_int, sign_mask)
    one = b.like(1, x_int)
    smallest_toward_y = b.op("or", y_sign, one)
    signs_disagree = b.cmp("NE", x_sign, y_sign)
    x_larger = b.cmp("GT", x_abs, y_abs)
    smaller = b.op("or", x_larger, signs_disagree)
    minus_one = b.like(-1, x_int)
    adjustment = b.select(smaller, minus_one, one)
    result = b.add(x_int, adjustment)
    result = b.select(x_zero, b.select(y_zero, y_int, smallest_toward_y), result)
    result = b.select(equal, y_int, result)
    result = b.select(nan_input, nan_int, result)
    return [b.bitcast(result, t.element_type)]


def _exp_shifted(b: Builder, x: Value) -> tuple[Value, Value]:
    """(e^(x + log(1/2)), e^(log(1/2) - x))."""
    log_half = b.op("log", b.like(0.5, x))
    up = b.op("exponential", b.add(x, log_half))
    down = b.op("exponential", b.sub(log_half, x))
    return up, down


def _sinh_large(b: Builder, x: Value) -> Value:
    up, down = _exp_shifted(b, x)
    return b.sub(up, down)


def _sinh(b: Builder, x: Value) -> Value:
    large = _sinh_large(b, x)
    expm1 = b.op("exponential_minus_one", x)
    one, half = b.like(1.0, x), b.like(0.5, x)
    ratio = b.div(expm1, b.add(expm1, one))
    small = b.mul(half, b.add(expm1, ratio))
    lt_one = b.cmp("LT", b.op("abs", x), one)
    return b.select(lt_one, small, large)


@lowering("chlo.sinh")
def _lower_sinh(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    if isinstance(tensor(xs[0]).element_type, ComplexType):
        return [_sinh_large(b, xs[0])]
    return [b.with_upcast(xs, lambda x: _sinh(b, x))]


@lowering("chlo.cosh")
def _lower_cosh(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    def cosh(x: Value) -> Value:
        up, down = _exp_shifted(b, x)
        return b.add(up, down)

    return [b.with_upcast(xs, cosh)]


def sort_op(b: Builder, operands: Sequence[Value], dimension: int, is_stable: bool,
            direction: str) -> Operation:
    """upstream's createSortOp: a comparator on the first operand, TOTALORDER when any
    operand is a float."""
    ets = [tensor(v).element_type for v in operands]
    block = Block([TensorType((), et) for et in ets for _ in range(2)])
    props = {"comparison_direction": EnumAttr("stablehlo", "comparison_direction", direction)}
    if any(et.is_float for et in ets):
        props["compare_type"] = EnumAttr("stablehlo", "comparison_type", "TOTALORDER")
    saved = b.rw.block
    b.rw.block = block
    try:
        cmp = b.emit("compare", block.arguments[:2], props).results[0]
        b.rw.emit("stablehlo.return", [cmp], [])
    finally:
        b.rw.block = saved
    return b.emit("sort", operands, {"dimension": IntegerAttr(dimension, I64),
                                     "is_stable": BoolAttr(is_stable)},
                  [v.type for v in operands], regions=[Region([block])])


@lowering("chlo.top_k")
def _top_k(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    x = operands[0]
    t = tensor(x)
    rank, last = t.rank, t.rank - 1
    k = int(op.attr("k").value)
    last_size = t.shape[last]
    result_last = k if last_size is None else min(k, last_size)
    dynamic = not t.is_static
    i64x1 = TensorType((1,), I64)
    if dynamic:
        sizes = []
        for i, s in enumerate(t.shape):
            if s is None:
                size = b.convert(b.dim_size(x, i), I64)
            else:
                size = b.scalar(s, I64)
            sizes.append(b.reshape(size, (1,)))
        op_shape = b.concat(sizes)
        sizes[-1] = b.reshape(b.scalar(result_last, I64), (1,))
        result_shape = b.concat(sizes)
        iota = b.op("dynamic_iota", op_shape, result=TensorType(t.shape, I32),
                    iota_dimension=IntegerAttr(last, I64))
    else:
        iota = b.op("iota", result=TensorType(t.shape, I32),
                    iota_dimension=IntegerAttr(last, I64))
    stable = op.attr("is_stable")
    sort = sort_op(b, [x, iota], last, True if stable is None else bool(stable.value), "GT")
    values, indices = sort.results
    if dynamic:
        idx_t = TensorType((rank,), I64)
        start = b.constant(np.zeros(rank, np.int64), I64, (rank,))
        strides = b.constant(np.ones(rank, np.int64), I64, (rank,))
        _ = i64x1, idx_t
        out_v = b.op("real_dynamic_slice", values, start, result_shape, strides,
                     result=op.results[0].type)
        out_i = b.op("real_dynamic_slice", indices, start, result_shape, strides,
                     result=op.results[1].type)
        return [out_v, out_i]
    limit = list(t.shape)
    limit[-1] = result_last
    props = {"start_indices": i64_array([0] * rank), "limit_indices": i64_array(limit),
             "strides": i64_array([1] * rank)}
    return [b.emit("slice", [values], props).results[0],
            b.emit("slice", [indices], props).results[0]]
