"""reduce, reduce_window, select_and_scatter, map, sort and the batched-region machinery.

Three tiers:
* the machinery (`shlo.ops._regions`, the sort algorithms) with plain numpy bodies;
* the ops on hand-built IR whose bodies use `test.*` ops registered here (independent of the
  element-wise kernels), plus single-op bodies that never call the body (the numpy fast path);
* MLIR programs (spec examples, hand-computed cases), differential checks against XLA when jax is
  installed, and the official interpreter tests when ../shared/conformance is present.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import shlo
from shlo.attributes import BoolAttr, DenseArrayAttr, DenseElementsAttr, EnumAttr, IntegerAttr
from shlo.interpreter.evaluator import PrepareContext
from shlo.ir import Block, Operation, Region
from shlo.ops import _regions
from shlo.ops.reduction import _merge_sort_order, reduce_with_body
from shlo.registry import define, kernel
from shlo.types import TensorType, element_type, tensor

from harness import run_op, run_text, type_of

# --- test-only kernels (numpy), so that bodies do not depend on elementwise.py -------------------


def _test_op(name):
    """Define a test-only op (a tiny ``test`` dialect) and register its kernel."""
    define(name, summary="test-only op of tests/ops/test_reduction.py")
    return kernel(name)


def _binary(name, f):
    @_test_op(name)
    def prepare(op, ctx):
        dt = op.results[0].type.element_type.dtype
        return lambda a, b: [np.asarray(f(np.asarray(a), np.asarray(b))).astype(dt)]


_binary("test.add", np.add)
_binary("test.sub", np.subtract)
_binary("test.mul", np.multiply)
_binary("test.max", np.maximum)
_binary("test.lt", np.less)
_binary("test.gt", np.greater)
_binary("test.ge", np.greater_equal)
_binary("test.eq", np.equal)
_binary("test.or", np.logical_or)
_binary("test.and", np.logical_and)


@_test_op("test.select")
def _select(op, ctx):
    dt = op.results[0].type.element_type.dtype
    return lambda p, a, b: [np.where(np.asarray(p), a, b).astype(dt)]


@_test_op("test.abs")
def _abs(op, ctx):
    return lambda a: [np.abs(a)]


@_test_op("test.const")
def _const(op, ctx):
    v = op.attr("value").array
    return lambda: [v]


I64 = element_type("i64")


def scalar(et):
    return TensorType((), element_type(et) if isinstance(et, str) else et)


class B:
    """A tiny region builder:
    ``b = B("f32", "f32"); x = b.op("test.add", b[0], b[1]); region = b.ret(x)``."""

    def __init__(self, *arg_types):
        self.block = Block([scalar(t) for t in arg_types])

    def __getitem__(self, i):
        return self.block.arguments[i]

    def op(self, name, *operands, type=None, props=None):
        t = type or operands[-1].type  # (select's result type is its last operand's)
        o = Operation(name, list(operands), [scalar(t) if isinstance(t, str) else t], props or {})
        self.block.append(o)
        return o.results[0]

    def const(self, value, et):
        t = scalar(et)
        arr = np.asarray(value, dtype=t.element_type.dtype)
        o = Operation("test.const", [], [t], {"value": DenseElementsAttr(t, arr)})
        self.block.append(o)
        return o.results[0]

    def ret(self, *values):
        self.block.append(Operation("stablehlo.return", list(values)))
        return Region([self.block])


def single(opname, et):
    b = B(et, et)
    return b.ret(b.op(opname, b[0], b[1]))


def compare(direction, a, b, compare_type=None):
    props = {"comparison_direction": EnumAttr("stablehlo", "comparison_direction", direction)}
    if compare_type:
        props["compare_type"] = EnumAttr("stablehlo", "comparison_type", compare_type)
    return props


def i64s(*v):
    return DenseArrayAttr(I64, tuple(v))


def dense2(rows):
    a = np.array(rows, dtype=np.int64)
    return DenseElementsAttr(TensorType(a.shape, I64), a)


# --- machinery: reduce_with_body ----------------------------------------------------------------


def concat_body(a, la, b, lb):
    """Decimal concatenation (associative, not commutative) on (value, length) pairs."""
    return [a * 10 ** lb + b, la + lb]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 13])
def test_tree_keeps_in_order_for_non_commutative_bodies(n):
    digits = np.arange(1, n + 1, dtype=np.int64) % 10
    v, length = reduce_with_body(concat_body, [digits, np.ones(n, np.int64)],
                                 [np.int64(7), np.int64(1)], axes=[0])
    expected = int("7" + "".join(str(d) for d in digits))
    assert int(v) == expected and int(length) == n + 1


def test_tree_over_several_axes_and_rows():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4) % 10
    v, _ = reduce_with_body(concat_body, [x, np.ones_like(x)], [np.int64(0), np.int64(0)],
                            axes=(0, 2))
    # Reduced axes (0, 2) are traversed in lexicographic order of (i0, i2).
    for j in range(3):
        expected = int("".join(str(x[i, j, k]) for i in range(2) for k in range(4)))
        assert int(v[j]) == expected


def test_reduce_without_init_for_collectives():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    (r,) = reduce_with_body(lambda a, b: [a + b], [x], None, axes=(0,))
    np.testing.assert_array_equal(r, [9.0, 12.0])
    assert r.dtype == np.float32
    with pytest.raises(ValueError):
        reduce_with_body(lambda a, b: [a + b], [np.zeros((0,), np.float32)], None)


def test_variadic_argmax_body():
    def argmax(v1, i1, v2, i2):
        take1 = (v1 > v2) | ((v1 == v2) & (i1 < i2))
        return [np.where(take1, v1, v2), np.where(take1, i1, i2)]

    x = np.array([[3, 9, 9, 1], [5, 5, 2, 7]], np.int32)
    idx = np.broadcast_to(np.arange(4, dtype=np.int64), x.shape)
    v, i = reduce_with_body(argmax, [x, idx], [np.int32(-2**31), np.int64(0)], axes=(1,))
    np.testing.assert_array_equal(v, [9, 7])
    np.testing.assert_array_equal(i, [1, 3])


def never(*args):
    raise AssertionError("the fast path must not call the body")


@pytest.mark.parametrize("op,dtype,x,init,expected", [
    ("stablehlo.add", np.int8, [100, 100, 100], 0, 44),  # wraps modulo 2^8
    ("stablehlo.multiply", np.uint8, [16, 16, 3], 1, 0),
    ("stablehlo.add", np.bool_, [False, True, False], False, True),
    ("stablehlo.multiply", np.bool_, [True, True, False], True, False),
    ("stablehlo.xor", np.bool_, [True, True, True], False, True),
    ("stablehlo.xor", np.int32, [1, 2, 4, 1], 0, 6),
    ("stablehlo.and", np.uint8, [0xF0, 0x3C], 0xFF, 0x30),
    ("stablehlo.or", np.int8, [1, 2], 0, 3),
    ("stablehlo.maximum", np.float32, [1.0, np.nan, 3.0], -np.inf, np.nan),
    ("stablehlo.minimum", np.float64, [1.0, -np.inf, 3.0], np.inf, -np.inf),
    ("stablehlo.add", ml_dtypes.int4, [7, 1], 0, -8),
    ("stablehlo.multiply", ml_dtypes.int4, [3, 3, 3], 1, -5),  # 27 mod 16 = 11 -> -5
    ("stablehlo.maximum", ml_dtypes.int4, [-3, 5, -8], -8, 5),
    ("stablehlo.add", ml_dtypes.uint4, [15, 2], 0, 1),
    ("stablehlo.add", ml_dtypes.int2, [1, 1], 0, -2),
    ("stablehlo.add", np.complex64, [1 + 2j, 3 - 1j], 0, 4 + 1j),
])
def test_fast_path_values_and_dtypes(op, dtype, x, init, expected):
    (r,) = reduce_with_body(never, [np.array(x, dtype)], [np.array(init, dtype)],
                            single_op=op)
    assert r.dtype == np.dtype(dtype) and r.shape == ()
    np.testing.assert_array_equal(np.asarray(r).astype(np.complex128),
                                  np.complex128(expected))


def test_fast_path_bf16_sum_stays_in_type_and_is_pairwise():
    x = np.ones(1000, ml_dtypes.bfloat16)
    (r,) = reduce_with_body(never, [x], [np.array(0, ml_dtypes.bfloat16)],
                            single_op="stablehlo.add")
    assert r.dtype == ml_dtypes.bfloat16
    # A sequential bf16 sum gets stuck at 256; a pairwise one is exact here.
    assert float(r) == 1000.0


def test_fast_path_f16_rounds_in_type():
    # 2048 + 1 is not representable in f16: a pairwise f16 sum of 2049 ones gives 2048.
    x = np.ones(2049, np.float16)
    (r,) = reduce_with_body(never, [x], [np.float16(0)], single_op="stablehlo.add")
    assert r.dtype == np.float16 and float(r) == 2048.0


@pytest.mark.parametrize("op,values,negative", [
    ("stablehlo.maximum", [-0.0, 0.0], False), ("stablehlo.maximum", [0.0, -0.0], False),
    ("stablehlo.maximum", [-0.0, -0.0], True), ("stablehlo.minimum", [0.0, -0.0], True),
    ("stablehlo.minimum", [-0.0, 0.0], True), ("stablehlo.minimum", [0.0, 0.0], False),
])
def test_fast_path_signed_zero(op, values, negative):
    init = np.float32(-np.inf if op.endswith("maximum") else np.inf)
    for dt in (np.float32, ml_dtypes.bfloat16):
        (r,) = reduce_with_body(never, [np.array(values, dt)], [np.array(init).astype(dt)],
                                single_op=op)
        assert float(r) == 0.0 and bool(np.signbit(np.float32(r))) == negative


def test_single_op_with_unsupported_dtype_uses_body():
    calls = []

    def body(a, b):
        calls.append(1)
        return [np.where(a.real >= b.real, a, b)]

    x = np.array([1 + 1j, 3 + 0j, 2 + 5j], np.complex64)
    (r,) = reduce_with_body(body, [x], [np.complex64(-10)], single_op="stablehlo.maximum")
    assert r == 3 + 0j and calls


def test_empty_reduction_gives_init():
    (r,) = reduce_with_body(never, [np.zeros((3, 0), np.float32)], [np.float32(5)], axes=(1,),
                            single_op="stablehlo.add")
    np.testing.assert_array_equal(r, [5, 5, 5])
    (r,) = reduce_with_body(lambda a, b: [a - b], [np.zeros((2, 0), np.int32)], [np.int32(4)],
                            axes=(1,))
    np.testing.assert_array_equal(r, [4, 4])


# --- machinery: combine_at ----------------------------------------------------------------------


def test_combine_at_applies_repeats_in_order():
    res = [np.zeros(4, np.int64), np.zeros(4, np.int64)]
    idx = np.array([2, 0, 2, 2, 3])
    upd = [np.array([1, 2, 3, 4, 5], np.int64), np.ones(5, np.int64)]
    v, n = _regions.combine_at(concat_body, res, idx, upd)
    np.testing.assert_array_equal(v, [2, 0, 134, 5])
    np.testing.assert_array_equal(n, [1, 0, 3, 1])


def test_combine_at_fast_path_matches_general():
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 10, 50)
    upd = rng.integers(-5, 5, 50).astype(np.int32)
    (a,) = _regions.combine_at(never, [np.zeros(10, np.int32)], idx, [upd],
                               single_op="stablehlo.add")
    (b,) = _regions.combine_at(lambda x, y: [x + y], [np.zeros(10, np.int32)], idx, [upd])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, np.bincount(idx, upd, minlength=10))


# --- machinery: merge sort ----------------------------------------------------------------------


def test_merge_sort_matches_lexsort_and_is_stable():
    rng = np.random.default_rng(0)
    for _ in range(50):
        m, n = rng.integers(1, 4), rng.integers(1, 70)
        a = rng.integers(0, 4, (m, n))
        b = rng.integers(0, 4, (m, n))

        def comp(a0, a1, b0, b1):  # ascending a, then descending b
            return [(a0 < a1) | ((a0 == a1) & (b0 > b1))]

        order = _merge_sort_order(comp, [a, b])
        np.testing.assert_array_equal(order, np.lexsort((-b, a), axis=-1))


def test_merge_sort_inconsistent_comparator_gives_a_permutation():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, (3, 33))
    order = _merge_sort_order(lambda a, b: [a <= b], [x])
    np.testing.assert_array_equal(np.sort(order, axis=1), np.broadcast_to(np.arange(33), (3, 33)))
    # LE sorts ascending (not stably) anyway.
    assert (np.diff(np.take_along_axis(x, order, 1), axis=1) >= 0).all()


# --- ops on hand-built IR -----------------------------------------------------------------------


def test_reduce_spec_example_fast_path():
    x = np.array([[0, 1, 2, 3, 4, 5]], np.int64)
    (r,) = run_op("stablehlo.reduce", [x, np.int64(0)], results=[tensor((1,), "i64")],
                  regions=[single("stablehlo.add", "i64")], dimensions=i64s(1))
    np.testing.assert_array_equal(r, [15])
    assert r.dtype == np.int64


def test_reduce_general_body_max_of_abs():
    b = B("f32", "f32")
    region = b.ret(b.op("test.max", b.op("test.abs", b[0]), b.op("test.abs", b[1])))
    x = np.array([[1.0, -7.0, 3.0], [-2.0, 0.5, 1.5]], np.float32)
    (r,) = run_op("stablehlo.reduce", [x, np.float32(0)], results=[tensor((3,), "f32")],
                  regions=[region], dimensions=i64s(0))
    np.testing.assert_array_equal(r, [2.0, 7.0, 3.0])


def test_reduce_variadic_argmin_with_compare_select():
    b = B("f32", "i32", "f32", "i32")
    lt = b.op("test.lt", b[0], b[2], type="i1")
    eq = b.op("test.eq", b[0], b[2], type="i1")
    ilt = b.op("test.lt", b[1], b[3], type="i1")
    pick = b.op("test.or", lt, b.op("test.and", eq, ilt))
    region = b.ret(b.op("test.select", pick, b[0], b[2]), b.op("test.select", pick, b[1], b[3]))
    x = np.array([[4.0, 1.0, 1.0, 9.0], [2.0, 8.0, -3.0, -3.0]], np.float32)
    idx = np.broadcast_to(np.arange(4, dtype=np.int32), x.shape).copy()
    v, i = run_op("stablehlo.reduce", [x, idx, np.float32(np.inf), np.int32(0)],
                  results=[tensor((2,), "f32"), tensor((2,), "i32")], regions=[region],
                  dimensions=i64s(1))
    np.testing.assert_array_equal(v, [1.0, -3.0])
    np.testing.assert_array_equal(i, [1, 2])
    assert v.dtype == np.float32 and i.dtype == np.int32


def test_reduce_promotes_inputs_to_body_type():
    # Newer spec versions allow inputs to be promotable to the body/result element type.
    x = np.array([100, 100, 100], np.int8)
    (r,) = run_op("stablehlo.reduce", [x, np.int32(0)], results=[tensor((), "i32")],
                  regions=[single("stablehlo.add", "i32")],
                  operand_types=[tensor((3,), "i8"), tensor((), "i32")], dimensions=i64s(0))
    assert r.dtype == np.int32 and int(r) == 300


def test_reduce_window_spec_example_general_and_fast():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    props = {"window_dimensions": i64s(2, 1), "window_strides": i64s(4, 1),
             "base_dilations": i64s(2, 1), "window_dilations": i64s(3, 1),
             "padding": dense2([[2, 1], [0, 0]])}
    for region in (single("stablehlo.add", "i64"), single("test.add", "i64")):
        (r,) = run_op("stablehlo.reduce_window", [x, np.int64(0)], results=[tensor((2, 2), "i64")],
                      regions=[region], **props)
        np.testing.assert_array_equal(r, [[0, 0], [3, 4]])
    props["window_dimensions"] = i64s(3, 1)
    (r,) = run_op("stablehlo.reduce_window", [x, np.int64(0)], results=[tensor((1, 2), "i64")],
                  regions=[single("stablehlo.add", "i64")], **props)
    np.testing.assert_array_equal(r, [[5, 6]])


def test_reduce_window_max_pool_and_init_in_padding():
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    props = {"window_dimensions": i64s(2, 2), "window_strides": i64s(2, 2),
             "padding": dense2([[1, 1], [0, 0]])}
    (r,) = run_op("stablehlo.reduce_window", [x, np.float32(10)], results=[tensor((3, 2), "f32")],
                  regions=[single("stablehlo.maximum", "f32")], **props)
    # The init value (10) fills the padding and takes part in every window.
    np.testing.assert_array_equal(r, [[10, 10], [10, 11], [13, 15]])
    (r,) = run_op("stablehlo.reduce_window", [x, np.float32(-np.inf)],
                  results=[tensor((3, 2), "f32")], regions=[single("stablehlo.maximum", "f32")],
                  **props)
    np.testing.assert_array_equal(r, [[1, 3], [9, 11], [13, 15]])


def test_reduce_window_negative_padding_and_dilation():
    x = np.arange(1, 8, dtype=np.int32)  # [1..7]
    props = {"window_dimensions": i64s(2), "window_strides": i64s(1),
             "window_dilations": i64s(2), "padding": dense2([[-1, -2]])}
    # padded = [2, 3, 4, 5]; windows (dilation 2): [2,4], [3,5]
    (r,) = run_op("stablehlo.reduce_window", [x, np.int32(0)], results=[tensor((2,), "i32")],
                  regions=[single("test.add", "i32")], **props)
    np.testing.assert_array_equal(r, [6, 8])


def test_reduce_window_variadic_and_empty():
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0], np.float32)
    idx = np.arange(5, dtype=np.int32)
    b = B("f32", "i32", "f32", "i32")
    gt = b.op("test.gt", b[0], b[2], type="i1")
    region = b.ret(b.op("test.select", gt, b[0], b[2]), b.op("test.select", gt, b[1], b[3]))
    props = {"window_dimensions": i64s(3), "window_strides": i64s(2)}
    v, i = run_op("stablehlo.reduce_window", [x, idx, np.float32(-np.inf), np.int32(-1)],
                  results=[tensor((2,), "f32"), tensor((2,), "i32")], regions=[region], **props)
    np.testing.assert_array_equal(v, [4.0, 5.0])
    np.testing.assert_array_equal(i, [2, 4])
    props = {"window_dimensions": i64s(7)}
    (r,) = run_op("stablehlo.reduce_window", [x, np.float32(0)], results=[tensor((0,), "f32")],
                  regions=[single("stablehlo.add", "f32")], **props)
    assert r.shape == (0,) and r.dtype == np.float32


def test_reduce_window_is_a_left_fold_per_window():
    # Schedule: acc = init; acc = body(acc, w[k]) over the window in row-major order.
    x = np.arange(1, 6, dtype=np.int64)
    props = {"window_dimensions": i64s(3)}
    (r,) = run_op("stablehlo.reduce_window", [x, np.int64(100)], results=[tensor((3,), "i64")],
                  regions=[single("test.sub", "i64")], **props)
    np.testing.assert_array_equal(r, [100 - 1 - 2 - 3, 100 - 2 - 3 - 4, 100 - 3 - 4 - 5])
    # Rounding in the element type after every step, like the upstream interpreter and XLA:
    # ((0 + 2048) + 1) + 1 = 2048 in f16 (a pairwise sum would give 2050).
    x = np.array([2048, 1, 1], np.float16)
    for region in (single("stablehlo.add", "f16"), single("test.add", "f16")):
        (r,) = run_op("stablehlo.reduce_window", [x, np.float16(0)], results=[tensor((1,), "f16")],
                      regions=[region], **props)
        assert r.dtype == np.float16 and float(r[0]) == 2048.0


def test_reduce_window_2d_window_order_row_major():
    x = np.arange(1, 7, dtype=np.int64).reshape(2, 3) % 10
    b = B("i64", "i64", "i64", "i64")
    v, length = concat_region(b)
    props = {"window_dimensions": i64s(2, 2)}
    r, _ = run_op("stablehlo.reduce_window", [x, np.ones_like(x), np.int64(9), np.int64(1)],
                  results=[tensor((1, 2), "i64")] * 2, regions=[b.ret(v, length)], **props)
    np.testing.assert_array_equal(r, [[91245, 92356]])


def concat_region(b):
    """Decimal concatenation on (value, length) pairs, from test ops."""
    ten_pow = b.op("test.pow10", b[3])
    return b.op("test.add", b.op("test.mul", b[0], ten_pow), b[2]), b.op("test.add", b[1], b[3])


@_test_op("test.pow10")
def _pow10(op, ctx):
    return lambda n: [np.power(np.int64(10), np.asarray(n, np.int64))]


def sas(operand, source, init, props, scatter):
    b = B("i64", "i64")
    select = b.ret(b.op("test.ge", b[0], b[1], type="i1"))
    return run_op("stablehlo.select_and_scatter", [operand, source, init],
                  results=[TensorType(operand.shape, I64)], regions=[select, scatter], **props)[0]


def test_select_and_scatter_spec_example():
    operand = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.int64)
    source = np.array([[5, 6], [7, 8]], np.int64)
    props = {"window_dimensions": i64s(3, 1), "window_strides": i64s(2, 1),
             "padding": dense2([[0, 1], [0, 0]])}
    for scatter in (single("stablehlo.add", "i64"), single("test.add", "i64")):
        r = sas(operand, source, np.int64(0), props, scatter)
        np.testing.assert_array_equal(r, [[0, 0], [0, 0], [5, 14], [7, 0]])


def test_select_and_scatter_ties_first_and_init_once():
    operand = np.array([2, 2, 2, 2], np.int64)
    source = np.array([10, 20, 30], np.int64)
    props = {"window_dimensions": i64s(2), "window_strides": i64s(1)}
    # GE keeps the earlier element on ties: windows select 0, 1, 2.
    r = sas(operand, source, np.int64(100), props, single("test.add", "i64"))
    np.testing.assert_array_equal(r, [110, 120, 130, 100])
    # Overlapping windows accumulating into one position, with a non-commutative body:
    operand = np.array([1, 9, 1], np.int64)
    source = np.array([3, 4], np.int64)
    r = sas(operand, source, np.int64(100), props, single("test.sub", "i64"))
    np.testing.assert_array_equal(r, [100, 100 - 3 - 4, 100])


def test_select_and_scatter_window_in_padding_scatters_nothing():
    operand = np.array([5, 7], np.int64)
    source = np.array([1, 2, 3], np.int64)
    props = {"window_dimensions": i64s(1), "window_strides": i64s(1),
             "padding": dense2([[1, 0]])}
    r = sas(operand, source, np.int64(0), props, single("stablehlo.add", "i64"))
    np.testing.assert_array_equal(r, [2, 3])


def test_map_whole_arrays_and_constant_body():
    x = np.array([[0, 1], [2, 3]], np.int64)
    y = np.array([[4, 5], [6, 7]], np.int64)
    (r,) = run_op("stablehlo.map", [x, y], results=[tensor((2, 2), "i64")],
                  regions=[single("test.mul", "i64")], dimensions=i64s(0, 1))
    np.testing.assert_array_equal(r, [[0, 5], [12, 21]])
    b = B("f32")
    region = b.ret(b.const(2.5, "f32"))
    (r,) = run_op("stablehlo.map", [np.zeros((2, 3), np.float32)], results=[tensor((2, 3), "f32")],
                  regions=[region], dimensions=i64s(0, 1))
    np.testing.assert_array_equal(r, np.full((2, 3), 2.5, np.float32))


def sort_op(inputs, region, dimension=0, is_stable=True):
    types = [type_of(x) for x in inputs]
    return run_op("stablehlo.sort", inputs, results=types, regions=[region],
                  dimension=IntegerAttr(dimension), is_stable=BoolAttr(is_stable))


def cmp_region(ets, direction, which=0, compare_type=None, swap=False, cmp_op="stablehlo.compare"):
    b = B(*[e for e in ets for _ in (0, 1)])
    lhs, rhs = b[2 * which], b[2 * which + 1]
    if swap:
        lhs, rhs = rhs, lhs
    return b.ret(b.op(cmp_op, lhs, rhs, type="i1", props=compare(direction, lhs, rhs,
                                                                   compare_type)))


def test_sort_spec_example_both_dimensions():
    a = np.array([[1, 2, 3], [3, 2, 1]], np.int64)
    c = np.array([[3, 2, 1], [1, 2, 3]], np.int64)
    r0, r1 = sort_op([a, c], cmp_region(["i64", "i64"], "GT"), dimension=0)
    np.testing.assert_array_equal(r0, [[3, 2, 3], [1, 2, 1]])
    np.testing.assert_array_equal(r1, [[1, 2, 1], [3, 2, 3]])
    r0, r1 = sort_op([a, c], cmp_region(["i64", "i64"], "GT"), dimension=-1)
    np.testing.assert_array_equal(r0, [[3, 2, 1], [3, 2, 1]])
    np.testing.assert_array_equal(r1, [[1, 2, 3], [1, 2, 3]])


def test_sort_descending_is_stable():
    key = np.array([1, 3, 1, 3, 2], np.int32)
    payload = np.arange(5, dtype=np.int32)
    for region in (cmp_region(["i32", "i32"], "GT"),
                   cmp_region(["i32", "i32"], "LT", swap=True)):
        k, p = sort_op([key, payload], region)
        np.testing.assert_array_equal(k, [3, 3, 2, 1, 1])
        np.testing.assert_array_equal(p, [1, 3, 4, 0, 2])


def test_sort_unsigned_and_bool_keys():
    x = np.array([3, 255, 0, 128], np.uint8)
    (r,) = sort_op([x], cmp_region(["ui8"], "LT"))
    np.testing.assert_array_equal(r, [0, 3, 128, 255])
    x = np.array([True, False, True, False])
    (r,) = sort_op([x], cmp_region(["i1"], "GT"))
    np.testing.assert_array_equal(r, [True, True, False, False])


F32_SPECIALS = np.array([3, np.nan, 1, -0.0, 0.0, -np.nan, 2, -np.inf, np.inf], np.float32)


def bits(a):
    return np.asarray(a).view(np.uint32).tolist()


def test_sort_totalorder_nan_and_signed_zero():
    (r,) = sort_op([F32_SPECIALS], cmp_region(["f32"], "LT", compare_type="TOTALORDER"))
    expected = np.array([-np.nan, -np.inf, -0.0, 0.0, 1, 2, 3, np.inf, np.nan], np.float32)
    assert bits(r) == bits(expected)
    (r,) = sort_op([F32_SPECIALS], cmp_region(["f32"], "GT", compare_type="TOTALORDER"))
    assert bits(r) == bits(expected[::-1])


def test_sort_float_nan_last_ascending_first_descending():
    (r,) = sort_op([F32_SPECIALS], cmp_region(["f32"], "LT", compare_type="FLOAT"))
    # -0.0 and 0.0 compare equal: a stable sort keeps their input order.
    assert bits(r[:7]) == bits(np.array([-np.inf, -0.0, 0.0, 1, 2, 3, np.inf], np.float32))
    assert np.isnan(r[7:]).all()
    assert bits(r[7:]) == bits(F32_SPECIALS[[1, 5]])
    (r,) = sort_op([F32_SPECIALS], cmp_region(["f32"], "GT"))
    assert np.isnan(r[:2]).all()
    assert bits(r[2:]) == bits(np.array([np.inf, 3, 2, 1, -0.0, 0.0, -np.inf], np.float32))


def test_sort_bf16_totalorder_matches_f32():
    x = F32_SPECIALS.astype(ml_dtypes.bfloat16)
    (r,) = sort_op([x], cmp_region(["bf16"], "LT", compare_type="TOTALORDER"))
    assert r.dtype == ml_dtypes.bfloat16
    (e,) = sort_op([F32_SPECIALS], cmp_region(["f32"], "LT", compare_type="TOTALORDER"))
    assert bits(r.astype(np.float32)) == bits(e)


def jax_style_comparator(ets):
    """`or(lt0, and(eq0, or(lt1, and(eq1, lt2))))` with JAX's float canonicalisation."""
    b = B(*[e for e in ets for _ in (0, 1)])

    def key(v, et):
        if et != "f32":
            return v
        zero = b.const(0.0, "f32")
        is_zero = b.op("test.eq", v, zero, type="i1")
        v1 = b.op("test.select", is_zero, b.const(0.0, "f32"), v)
        return v1  # NaN canonicalisation left out: test.eq cannot tell NaN payloads anyway

    def lt(i):
        x, y = key(b[2 * i], ets[i]), key(b[2 * i + 1], ets[i])
        ct = "TOTALORDER" if ets[i] == "f32" else "SIGNED"
        return (b.op("stablehlo.compare", x, y, type="i1", props=compare("LT", x, y, ct)),
                b.op("stablehlo.compare", x, y, type="i1", props=compare("EQ", x, y, ct)))

    acc = lt(len(ets) - 1)[0]
    for i in reversed(range(len(ets) - 1)):
        lt_i, eq_i = lt(i)
        acc = b.op("stablehlo.or", lt_i, b.op("stablehlo.and", eq_i, acc))
    return b.ret(acc)


def test_sort_lexicographic_chain_is_recognised():
    from shlo.ops.reduction import _analyze

    region = jax_style_comparator(["i32", "i32", "f32"])
    keys = _analyze(region.blocks[0], PrepareContext(None))
    assert keys is not None and [k.operand for k in keys] == [0, 1, 2]
    assert keys[2].fn is not None and keys[0].fn is None
    assert [k.compare_type for k in keys] == ["SIGNED", "SIGNED", "TOTALORDER"]


def test_sort_lexicographic_chain_values():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 40).astype(np.int32)
    c = rng.integers(0, 3, 40).astype(np.int32)
    f = rng.choice(np.array([-0.0, 0.0, 1.5, -2.0], np.float32), 40)
    ra, rc, rf = sort_op([a, c, f], jax_style_comparator(["i32", "i32", "f32"]))
    # -0.0 is canonicalised to 0.0 in the key only: the payload keeps its sign.
    fk = np.where(f == 0, np.float32(0), f)
    order = np.lexsort((fk, c, a))
    np.testing.assert_array_equal(ra, a[order])
    np.testing.assert_array_equal(rc, c[order])
    assert bits(rf) == bits(f[order])


def test_sort_key_functions_and_unrecognised_comparators():
    # A comparator the analyser rejects, (a + b) > 2*b  <=> a > b: merge sort; then a key
    # function, abs(a) > abs(b): the key is computed once on the whole input.
    x = np.array([-3, 1, 2, -1, 3, 0], np.int32)
    b = B("i32", "i32")
    s = b.op("test.add", b[0], b[1])
    two_b = b.op("test.add", b[1], b[1])
    region = b.ret(b.op("test.gt", s, two_b, type="i1"))
    (r,) = sort_op([x], region)
    np.testing.assert_array_equal(r, [3, 2, 1, 0, -1, -3])
    b = B("i32", "i32")
    region = b.ret(b.op("stablehlo.compare", b.op("test.abs", b[0]), b.op("test.abs", b[1]),
                        type="i1", props=compare("GT", None, None, "SIGNED")))
    (r,) = sort_op([x], region)
    np.testing.assert_array_equal(r, [-3, 3, 2, 1, -1, 0])


def test_sort_multidim_batch_along_middle_axis():
    rng = np.random.default_rng(4)
    x = rng.integers(-50, 50, (3, 17, 4)).astype(np.int64)
    (r,) = sort_op([x], cmp_region(["i64"], "LT"), dimension=1)
    np.testing.assert_array_equal(r, np.sort(x, axis=1))
    b = B("i64", "i64")
    region = b.ret(b.op("test.lt", b[0], b[1], type="i1"))  # merge sort path
    (r,) = sort_op([x], region, dimension=1)
    np.testing.assert_array_equal(r, np.sort(x, axis=1))


# --- MLIR programs ------------------------------------------------------------------------------


def test_mlir_reduce_spec_example():
    text = """
    func.func @main(%input: tensor<1x6xi64>) -> tensor<1xi64> {
      %init_value = stablehlo.constant dense<0> : tensor<i64>
      %result = "stablehlo.reduce"(%input, %init_value) ({
        ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
          %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<i64>, tensor<i64>) -> tensor<i64>
          "stablehlo.return"(%0) : (tensor<i64>) -> ()
      }) {
        dimensions = array<i64: 1>
      } : (tensor<1x6xi64>, tensor<i64>) -> tensor<1xi64>
      func.return %result : tensor<1xi64>
    }"""
    (r,) = run_text(text, np.array([[0, 1, 2, 3, 4, 5]], np.int64))
    np.testing.assert_array_equal(r, [15])


def test_mlir_reduce_pretty_forms_and_complex_max_body():
    text = """
    func.func @main(%x: tensor<2x3xcomplex<f32>>, %y: tensor<2x3xf32>)
        -> (tensor<3xcomplex<f32>>, tensor<2xf32>) {
      %cst = stablehlo.constant dense<(0xFF800000,0xFF800000)> : tensor<complex<f32>>
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %0 = stablehlo.reduce(%x init: %cst) across dimensions = [0] : (tensor<2x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
       reducer(%arg0: tensor<complex<f32>>, %arg1: tensor<complex<f32>>)  {
        %3 = stablehlo.real %arg0 : (tensor<complex<f32>>) -> tensor<f32>
        %4 = stablehlo.real %arg1 : (tensor<complex<f32>>) -> tensor<f32>
        %5 = stablehlo.compare  EQ, %3, %4,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %6 = stablehlo.compare  GT, %3, %4,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %7 = stablehlo.imag %arg0 : (tensor<complex<f32>>) -> tensor<f32>
        %8 = stablehlo.imag %arg1 : (tensor<complex<f32>>) -> tensor<f32>
        %9 = stablehlo.compare  GT, %7, %8,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %10 = stablehlo.select %5, %9, %6 : tensor<i1>, tensor<i1>
        %11 = stablehlo.select %10, %arg0, %arg1 : tensor<i1>, tensor<complex<f32>>
        stablehlo.return %11 : tensor<complex<f32>>
      }
      %1 = stablehlo.reduce(%y init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
      func.return %0, %1 : tensor<3xcomplex<f32>>, tensor<2xf32>
    }"""
    x = np.array([[1 + 2j, 5 + 0j, 2 + 2j], [1 + 3j, 4 + 9j, 2 + 1j]], np.complex64)
    y = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    r0, r1 = run_text(text, x, y)
    np.testing.assert_array_equal(r0, [1 + 3j, 5 + 0j, 2 + 2j])
    np.testing.assert_array_equal(r1, [6, 15])
    assert r0.dtype == np.complex64 and r1.dtype == np.float32


def test_mlir_reduce_window_and_select_and_scatter_spec_examples():
    text = """
    func.func @main(%input: tensor<3x2xi64>, %operand: tensor<4x2xi64>, %source: tensor<2x2xi64>)
        -> (tensor<2x2xi64>, tensor<4x2xi64>) {
      %init_value = stablehlo.constant dense<0> : tensor<i64>
      %result = "stablehlo.reduce_window"(%input, %init_value) ({
        ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
          %0 = stablehlo.add %arg0, %arg1 : tensor<i64>
          stablehlo.return %0 : tensor<i64>
      }) {
        base_dilations = array<i64: 2, 1>,
        padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>,
        window_dilations = array<i64: 3, 1>,
        window_dimensions = array<i64: 2, 1>,
        window_strides = array<i64: 4, 1>
      } : (tensor<3x2xi64>, tensor<i64>) -> tensor<2x2xi64>
      %r2 = "stablehlo.select_and_scatter"(%operand, %source, %init_value) ({
        ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
          %0 = stablehlo.compare GE, %arg0, %arg1 : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %0 : tensor<i1>
      }, {
        ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
          %0 = stablehlo.add %arg0, %arg1 : tensor<i64>
          stablehlo.return %0 : tensor<i64>
      }) {
        window_dimensions = array<i64: 3, 1>,
        window_strides = array<i64: 2, 1>,
        padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>
      } : (tensor<4x2xi64>, tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>
      func.return %result, %r2 : tensor<2x2xi64>, tensor<4x2xi64>
    }"""
    r, s = run_text(text, np.array([[1, 2], [3, 4], [5, 6]], np.int64),
               np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.int64),
               np.array([[5, 6], [7, 8]], np.int64))
    np.testing.assert_array_equal(r, [[0, 0], [3, 4]])
    np.testing.assert_array_equal(s, [[0, 0], [0, 0], [5, 14], [7, 0]])


def test_mlir_map_and_sort_spec_examples():
    text = """
    func.func @main(%a: tensor<2x3xi64>, %b: tensor<2x3xi64>)
        -> (tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>) {
      %m = "stablehlo.map"(%a, %b) ({
        ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
          %0 = stablehlo.multiply %arg0, %arg1 : tensor<i64>
          stablehlo.return %0 : tensor<i64>
      }) {
        dimensions = array<i64: 0, 1>
      } : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
      %r0, %r1 = "stablehlo.sort"(%a, %b) ({
        ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>, %arg2: tensor<i64>, %arg3: tensor<i64>):
          %p = stablehlo.compare GT, %arg0, %arg1 : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %p : tensor<i1>
      }) {dimension = 0 : i64, is_stable = true}
        : (tensor<2x3xi64>, tensor<2x3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>)
      func.return %m, %r0, %r1 : tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>
    }"""
    a = np.array([[1, 2, 3], [3, 2, 1]], np.int64)
    b = np.array([[3, 2, 1], [1, 2, 3]], np.int64)
    m, r0, r1 = run_text(text, a, b)
    np.testing.assert_array_equal(m, a * b)
    np.testing.assert_array_equal(r0, [[3, 2, 3], [1, 2, 1]])
    np.testing.assert_array_equal(r1, [[1, 2, 1], [3, 2, 3]])


JAX_SORT_F32 = """
func.func @main(%x: tensor<9xf32>, %i: tensor<9xi32>) -> (tensor<9xf32>, tensor<9xi32>) {
  %r:2 = "stablehlo.sort"(%x, %i) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>):
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.compare  EQ, %arg0, %cst,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.select %3, %cst_0, %arg0 : tensor<i1>, tensor<f32>
    %5 = stablehlo.compare  NE, %arg0, %arg0,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %6 = stablehlo.select %5, %cst_1, %4 : tensor<i1>, tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.compare  EQ, %arg1, %cst_2,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.select %7, %cst_3, %arg1 : tensor<i1>, tensor<f32>
    %9 = stablehlo.compare  NE, %arg1, %arg1,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %10 = stablehlo.select %9, %cst_4, %8 : tensor<i1>, tensor<f32>
    %11 = stablehlo.compare  LT, %6, %10,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %11 : tensor<i1>
  }) : (tensor<9xf32>, tensor<9xi32>) -> (tensor<9xf32>, tensor<9xi32>)
  return %r#0, %r#1 : tensor<9xf32>, tensor<9xi32>
}"""


def test_mlir_jax_float_sort_comparator():
    x, i = run_text(JAX_SORT_F32, F32_SPECIALS, np.arange(9, dtype=np.int32))
    # Canonicalised keys: -0 == +0 (stable), every NaN equal and last.
    np.testing.assert_array_equal(i, [7, 3, 4, 2, 6, 0, 8, 1, 5])
    assert bits(x) == bits(F32_SPECIALS[[7, 3, 4, 2, 6, 0, 8, 1, 5]])


SORT_TEMPLATE = """
func.func @main(%x: tensor<3x23x{t}>, %i: tensor<3x23xi32>) -> (tensor<3x23x{t}>, tensor<3x23xi32>) {{
  %r:2 = "stablehlo.sort"(%x, %i) ({{
  ^bb0(%a: tensor<{t}>, %b: tensor<{t}>, %c: tensor<i32>, %d: tensor<i32>):
    %p = stablehlo.compare {dir}, %a, %b{ct} : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }}) {{dimension = 1 : i64, is_stable = true}}
    : (tensor<3x23x{t}>, tensor<3x23xi32>) -> (tensor<3x23x{t}>, tensor<3x23xi32>)
  return %r#0, %r#1 : tensor<3x23x{t}>, tensor<3x23xi32>
}}"""


def _sort_data(t, with_nan):
    rng = np.random.default_rng(abs(hash(t)) % 1000)
    dt = element_type(t).dtype
    if t == "i1":
        return rng.integers(0, 2, (3, 23)).astype(bool)
    if dt.kind in "iu" or t in ("i2", "i4", "ui2", "ui4"):
        et = element_type(t)
        return rng.integers(et.min, et.max + 1, (3, 23)).astype(dt)
    if t.startswith("complex"):
        v = rng.choice([-1.5, 0.0, -0.0, 2.0, np.inf], (2, 3, 23))
        out = np.empty((3, 23), dt)
        out.real, out.imag = v
        return out
    vals = [-2.0, -0.5, -0.0, 0.0, 0.25, 1.0, 3.0, np.inf, -np.inf] + ([np.nan] if with_nan else [])
    with np.errstate(invalid="ignore", over="ignore"):
        x = rng.choice(np.array(vals, np.float64), (3, 23)).astype(dt)
        if not with_nan:  # types without inf turn it into NaN
            x = np.where(np.isnan(x.astype(np.float32)), np.ones((), dt), x)
    return x


@pytest.mark.parametrize("t,ct", [
    ("i1", ""), ("i4", ""), ("i8", ", SIGNED"), ("ui8", ", UNSIGNED"), ("i64", ""),
    ("ui2", ""), ("f32", ", FLOAT"), ("f16", ""), ("bf16", ", FLOAT"), ("f8E4M3FNUZ", ""),
    ("f32", ", TOTALORDER"), ("bf16", ", TOTALORDER"), ("f8E4M3FN", ", TOTALORDER"),
    ("f8E4M3FNUZ", ", TOTALORDER"), ("f8E8M0FNU", ", TOTALORDER"), ("f4E2M1FN", ", TOTALORDER"),
    ("f64", ", TOTALORDER"), ("complex<f32>", ""),
])
@pytest.mark.parametrize("direction", ["LT", "GT"])
def test_sort_key_path_matches_merge_sort_with_the_compare_kernel(t, ct, direction):
    """The recognised-comparator path must order exactly as the comparator region does."""
    from shlo.ops import reduction

    text = SORT_TEMPLATE.format(t=t, dir=direction, ct=ct)
    module = shlo.parse(text)
    sort = next(op for op in module.walk() if op.name == "stablehlo.sort")
    ctx = PrepareContext(module)
    assert reduction._analyze(sort.regions[0].blocks[0], ctx) is not None
    comparator = ctx.region(sort.regions[0])
    x = _sort_data(t, with_nan="TOTALORDER" in ct)
    if t == "f8E8M0FNU":
        x = np.abs(x.astype(np.float32)).astype(x.dtype)
    payload = np.broadcast_to(np.arange(23, dtype=np.int32), (3, 23)).copy()
    rx, rp = run_text(text, x, payload)
    order = _merge_sort_order(comparator, [x, payload])
    np.testing.assert_array_equal(rp, order)
    assert rx.dtype == x.dtype
    assert rx.tobytes() == np.take_along_axis(x, order, 1).tobytes()


def test_sort_complex_key_with_nan_falls_back_to_comparator():
    text = SORT_TEMPLATE.format(t="complex<f32>", dir="LT", ct="")
    x = np.array([[1 + 1j, np.nan + 0j, 1 + 0j, -1 + 5j] * 5 + [0j, 2j, np.nan * 1j]] * 3,
                 np.complex64)
    payload = np.broadcast_to(np.arange(23, dtype=np.int32), (3, 23)).copy()
    module = shlo.parse(text)
    sort = next(op for op in module.walk() if op.name == "stablehlo.sort")
    comparator = PrepareContext(module).region(sort.regions[0])
    _, rp = run_text(text, x, payload)
    np.testing.assert_array_equal(rp, _merge_sort_order(comparator, [x, payload]))


# --- differential tests against XLA -------------------------------------------------------------

oracles = pytest.importorskip("shlo.testing.oracles")
needs_jax = pytest.mark.skipif(not oracles.available(), reason="jax is not installed")

XLA_CASES = [
    # (program, input arrays)
    ("""
func.func @main(%x: tensor<4x6x5xf32>) -> (tensor<6xf32>, tensor<4x5xf32>, tensor<4x6xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 2] : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<6xf32>
  %1 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<4x5xf32>
  %2 = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [2] : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0, %1, %2 : tensor<6xf32>, tensor<4x5xf32>, tensor<4x6xf32>
}""", [np.random.default_rng(5).standard_normal((4, 6, 5)).astype(np.float32)]),
    ("""
func.func @main(%x: tensor<2x9x8x3xf32>) -> (tensor<2x5x4x3xf32>, tensor<2x3x5x3xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>,
      padding = dense<[[0, 0], [1, 1], [1, 0], [0, 0]]> : tensor<4x2xi64>}
    : (tensor<2x9x8x3xf32>, tensor<f32>) -> tensor<2x5x4x3xf32>
  %1 = "stablehlo.reduce_window"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 3, 1>, window_strides = array<i64: 1, 3, 3, 1>,
      base_dilations = array<i64: 1, 1, 2, 1>, window_dilations = array<i64: 1, 2, 1, 1>}
    : (tensor<2x9x8x3xf32>, tensor<f32>) -> tensor<2x3x5x3xf32>
  return %0, %1 : tensor<2x5x4x3xf32>, tensor<2x3x5x3xf32>
}""", [np.random.default_rng(6).standard_normal((2, 9, 8, 3)).astype(np.float32)]),
    ("""
func.func @main(%x: tensor<6x7xf32>, %s: tensor<3x3xf32>) -> tensor<6x7xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %s, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 2, 2>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<6x7xf32>, tensor<3x3xf32>, tensor<f32>) -> tensor<6x7xf32>
  return %0 : tensor<6x7xf32>
}""", [np.random.default_rng(7).integers(0, 5, (6, 7)).astype(np.float32),
       np.arange(9, dtype=np.float32).reshape(3, 3)]),
    (JAX_SORT_F32, [F32_SPECIALS, np.arange(9, dtype=np.int32)]),
    ("""
func.func @main(%x: tensor<30x3xf16>) -> tensor<30x3xf16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %0 = "stablehlo.reduce_window"(%x, %z) <{padding = dense<[[11, 0], [0, 0]]> : tensor<2x2xi64>,
      window_dimensions = array<i64: 12, 1>}> ({
  ^bb0(%a: tensor<f16>, %b: tensor<f16>):
    %s = stablehlo.add %a, %b : tensor<f16>
    stablehlo.return %s : tensor<f16>
  }) : (tensor<30x3xf16>, tensor<f16>) -> tensor<30x3xf16>
  return %0 : tensor<30x3xf16>
}""", [np.random.default_rng(10).standard_normal((30, 3)).astype(np.float16) * 50]),
    ("""
func.func @main(%a: tensor<5x40xi32>, %b: tensor<5x40xui8>) -> (tensor<5x40xi32>, tensor<5x40xui8>) {
  %r:2 = "stablehlo.sort"(%a, %b) ({
  ^bb0(%a0: tensor<i32>, %a1: tensor<i32>, %b0: tensor<ui8>, %b1: tensor<ui8>):
    %lt = stablehlo.compare LT, %b0, %b1, UNSIGNED : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %b0, %b1, UNSIGNED : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
    %gt2 = stablehlo.compare GT, %a0, %a1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %and = stablehlo.and %eq, %gt2 : tensor<i1>
    %or = stablehlo.or %lt, %and : tensor<i1>
    stablehlo.return %or : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<5x40xi32>, tensor<5x40xui8>) -> (tensor<5x40xi32>, tensor<5x40xui8>)
  return %r#0, %r#1 : tensor<5x40xi32>, tensor<5x40xui8>
}""", [np.random.default_rng(8).integers(-9, 9, (5, 40)).astype(np.int32),
       np.random.default_rng(9).integers(250, 256, (5, 40)).astype(np.uint8)]),
]


@needs_jax
@pytest.mark.parametrize("case", range(len(XLA_CASES)))
def test_against_xla(case):
    text, args = XLA_CASES[case]
    expected = oracles.xla_run(text, args)
    actual = run_text(text, *args)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        if a.dtype == np.float16:  # same schedule (XLA rewrites windows longer than ~16)
            assert a.tobytes() == e.tobytes()
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)


# --- the official interpreter tests -------------------------------------------------------------

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"


@pytest.mark.skipif(not CONFORMANCE.exists(), reason="../shared/conformance is absent")
@pytest.mark.parametrize("name", ["reduce", "reduce_window", "select_and_scatter", "map",
                                  "sort"])
def test_conformance_interpret(name):
    from shlo.testing.runner import run_file

    results = run_file(str(CONFORMANCE / "interpret" / f"{name}.mlir"))
    failed = [m for r in results if r.status == "failed" for m in r.messages]
    assert results and not failed, failed
