"""Tests of the dynamic-shape ops (shlo/ops/dynamic.py): result shapes come from operand values."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from shlo.attributes import DenseArrayAttr, IntegerAttr, StructAttr
from shlo.types import I64, TensorType, element_type

import harness

F32 = element_type("f32")


def dyn(rank: int, et: str = "f32") -> TensorType:
    return TensorType((None,) * rank, element_type(et))


def i64s(*v: int) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(v))


# The ops here take their first operand with every dimension dynamic (`tensor<?x?xf32>`).
run1 = functools.partial(harness.run1, dynamic=[0])


def test_dynamic_broadcast_in_dim() -> None:
    operand = np.array([[1], [2], [3]], np.int64)
    out = run1("stablehlo.dynamic_broadcast_in_dim", [operand, np.array([3, 2, 2], np.int64)],
               results=TensorType((3, 2, 2), element_type("i64")), broadcast_dimensions=i64s(0, 2),
               known_expanding_dimensions=i64s(1), known_nonexpanding_dimensions=i64s(0))
    np.testing.assert_array_equal(out, [[[1, 1], [1, 1]], [[2, 2], [2, 2]], [[3, 3], [3, 3]]])
    out = run1("stablehlo.dynamic_broadcast_in_dim", [np.float32(2.5), np.array([4], np.int32)],
               results=dyn(1), broadcast_dimensions=i64s())
    np.testing.assert_array_equal(out, [2.5] * 4)


def test_dynamic_broadcast_in_dim_rejects_mismatching_static_dims() -> None:
    with pytest.raises(Exception):
        run1("stablehlo.dynamic_broadcast_in_dim", [np.float32(1), np.array([4], np.int32)],
             results=TensorType((3,), F32), broadcast_dimensions=i64s())


@pytest.mark.parametrize("dim", [0, 1])
def test_dynamic_iota(dim: int) -> None:
    out = run1("stablehlo.dynamic_iota", [np.array([3, 4], np.int64)], results=dyn(2, "i64"),
               iota_dimension=IntegerAttr(dim))
    expected = np.indices((3, 4))[dim]
    np.testing.assert_array_equal(out, expected)
    # a second run with another shape (the kernel caches per shape)
    run = harness.prepare_op("stablehlo.dynamic_iota", [TensorType((2,), I64)], dyn(2, "f32"),
                             iota_dimension=IntegerAttr(dim))
    np.testing.assert_array_equal(run(np.array([2, 5]))[0], np.indices((2, 5))[dim])
    np.testing.assert_array_equal(run(np.array([1, 2]))[0], np.indices((1, 2))[dim])


def test_dynamic_reshape() -> None:
    x = np.array([[1, 2, 3, 4, 5, 6]], np.int64)
    out = run1("stablehlo.dynamic_reshape", [x, np.array([6], np.int64)], results=dyn(1, "i64"))
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 5, 6])
    out = run1("stablehlo.dynamic_reshape", [x, np.array([3, 2], np.int32)], results=dyn(2, "i64"))
    np.testing.assert_array_equal(out, [[1, 2], [3, 4], [5, 6]])
    with pytest.raises(Exception):
        run1("stablehlo.dynamic_reshape", [x, np.array([4], np.int32)], results=dyn(1, "i64"))


def test_dynamic_pad() -> None:
    x = np.array([[0, 0, 0, 0], [0, 1, 2, 0], [0, 3, 4, 0], [0, 5, 6, 0], [0, 0, 0, 0]],
                 np.int64)
    out = run1("stablehlo.dynamic_pad", [x, np.array(-1, np.int64), np.array([1, -1]),
                                         np.array([1, -1]), np.array([0, 1])],
               results=TensorType((7, 5), element_type("i64")))
    np.testing.assert_array_equal(out, [
        [-1, -1, -1, -1, -1],
        [-1, 0, -1, 0, -1],
        [-1, 1, -1, 2, -1],
        [-1, 3, -1, 4, -1],
        [-1, 5, -1, 6, -1],
        [-1, 0, -1, 0, -1],
        [-1, -1, -1, -1, -1]])


def test_dynamic_gather() -> None:
    operand = np.arange(1, 25, dtype=np.int64).reshape(3, 4, 2)
    idx = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]], np.int64)
    dn = StructAttr("stablehlo.gather", (("offset_dims", (2, 3)), ("collapsed_slice_dims", (0,)),
                                         ("start_index_map", (1, 0)), ("index_vector_dim", 2)))
    out = run1("stablehlo.dynamic_gather", [operand, idx, np.array([1, 2, 2], np.int64)],
               results=dyn(4, "i64"), dimension_numbers=dn)
    np.testing.assert_array_equal(out, [[[[1, 2], [3, 4]], [[3, 4], [5, 6]],
                                         [[13, 14], [15, 16]]],
                                        [[[9, 10], [11, 12]], [[11, 12], [13, 14]],
                                         [[17, 18], [19, 20]]]])


def test_real_dynamic_slice() -> None:
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = run1("stablehlo.real_dynamic_slice", [x, np.array([1, 0], np.int32),
                                                np.array([4, 5], np.int32),
                                                np.array([2, 2], np.int32)], results=dyn(2))
    np.testing.assert_array_equal(out, x[1:4:2, 0:5:2])
    # a start that would overrun is clamped (the slice keeps its size)
    out = run1("stablehlo.real_dynamic_slice", [x, np.array([3, 1]), np.array([6, 3]),
                                                np.array([1, 1])], results=dyn(2))
    np.testing.assert_array_equal(out, x[1:4, 1:3])
    with pytest.raises(Exception):  # more elements than the dimension has
        run1("stablehlo.real_dynamic_slice", [x, np.array([0, 0]), np.array([5, 5]),
                                              np.array([1, 1])], results=dyn(2))
    with pytest.raises(Exception):  # limit < start
        run1("stablehlo.real_dynamic_slice", [x, np.array([2, 0]), np.array([1, 5]),
                                              np.array([1, 1])], results=dyn(2))


def test_set_and_get_dimension_size() -> None:
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = run1("stablehlo.set_dimension_size", [x, np.array(3, np.int32)], results=dyn(2),
               dimension=IntegerAttr(0))
    np.testing.assert_array_equal(out, x[:3])
    size = run1("stablehlo.get_dimension_size", [out], results=TensorType((), element_type("i32")),
                dimension=IntegerAttr(0))
    assert size == 3 and size.dtype == np.int32


# --- programs with dynamic shapes, run end to end ---------------------------------------------


def test_program_dynamic_shapes_end_to_end() -> None:
    import shlo

    text = """
func.func @main(%x: tensor<?xf32>, %n: tensor<i64>) -> (tensor<?xf32>, tensor<?x2xf32>,
                                                        tensor<i32>, tensor<?xf32>) {
  %0 = stablehlo.constant dense<2> : tensor<i64>
  %1 = stablehlo.multiply %n, %0 : tensor<i64>
  %2 = stablehlo.convert %1 : (tensor<i64>) -> tensor<i32>
  %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32>
  %4 = stablehlo.dynamic_iota %3, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
  %6 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %7 = stablehlo.reshape %6 : (tensor<i32>) -> tensor<1xi32>
  %c2 = stablehlo.constant dense<2> : tensor<1xi32>
  %8 = stablehlo.concatenate %7, %c2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %5 = stablehlo.dynamic_broadcast_in_dim %x, %8, dims = [0]
    : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  %s0 = stablehlo.constant dense<1> : tensor<1xi32>
  %s2 = stablehlo.constant dense<1> : tensor<1xi32>
  %9 = stablehlo.real_dynamic_slice %x, %s0, %7, %s2
    : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  return %4, %5, %6, %9 : tensor<?xf32>, tensor<?x2xf32>, tensor<i32>, tensor<?xf32>
}"""
    x = np.arange(3, dtype=np.float32)
    iota, bcast, size, sl = shlo.run(text, x, np.array(2))
    np.testing.assert_array_equal(iota, [0, 1, 2, 3])
    np.testing.assert_array_equal(bcast, np.stack([x, x], 1))
    assert size == 3
    np.testing.assert_array_equal(sl, [1, 2])
    # the same prepared program with another run-time shape
    iota, bcast, size, sl = shlo.run(text, np.arange(5, dtype=np.float32), np.array(1))
    np.testing.assert_array_equal(iota, [0, 1])
    assert bcast.shape == (5, 2) and size == 5 and sl.shape == (4,)


def test_set_dimension_size_static_result_keeps_its_size() -> None:
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = run1("stablehlo.set_dimension_size", [x, np.array(3, np.int32)],
               results=TensorType((4, 2), F32), dimension=IntegerAttr(0))
    np.testing.assert_array_equal(out, x)
    out = run1("stablehlo.set_dimension_size", [x, np.array(3, np.int32)],
               results=TensorType((2, 2), F32), dimension=IntegerAttr(0))
    np.testing.assert_array_equal(out, x[:2])
