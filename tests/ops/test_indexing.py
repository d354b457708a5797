"""Tests of gather, scatter, dynamic_slice and dynamic_update_slice (shlo/ops/indexing.py).

Kernels are checked against the spec examples, against slow per-element models written
straight from the spec's formulas (random dimension numbers, batching dims included), and,
when jax is installed, against XLA.
"""

from __future__ import annotations

import itertools
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from shlo.attributes import BoolAttr, DenseArrayAttr, DenseElementsAttr, StructAttr
from shlo.ir import Block, Operation, Region
from shlo.ops.indexing import (GatherDimensionNumbers, ScatterDimensionNumbers, gather_array,
                               occurrence_rank)
from shlo.registry import lookup
from shlo.types import I64, TensorType, tensor

from harness import run1, run_op, run_text, type_of

# --- helpers --------------------------------------------------------------------------------------

ALL_DTYPES = [np.bool_, ml_dtypes.int2, ml_dtypes.int4, np.int8, np.int32, np.int64,
              ml_dtypes.uint4, np.uint8, np.uint64, ml_dtypes.bfloat16, np.float16, np.float32,
              np.float64, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, np.complex64,
              np.complex128]


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def sample(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    n = int(np.prod(shape))
    if np.dtype(dtype) == np.bool_:
        return (np.arange(n) % 2 == 1).reshape(shape)
    mod = 2 if "2" in np.dtype(dtype).name and np.dtype(dtype).itemsize == 1 else 8
    return (np.arange(n) % mod).astype(np.int64).astype(dtype).reshape(shape)


def i64s(*v: int) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(v))


def gather_attr(**params: Any) -> StructAttr:
    return StructAttr("stablehlo.gather", tuple(params.items()))


def scatter_attr(**params: Any) -> StructAttr:
    return StructAttr("stablehlo.scatter", tuple(params.items()))


# --- slow models straight from the spec --------------------------------------------------------


def gather_model(operand: np.ndarray, start_indices: np.ndarray, d: GatherDimensionNumbers,
                 slice_sizes: tuple[int, ...], result_shape: tuple[int, ...]) -> np.ndarray:
    result = np.zeros(result_shape, operand.dtype)
    batch_dims = [i for i in range(len(result_shape)) if i not in d.offset_dims]
    for result_index in np.ndindex(*result_shape):
        batch_index = [result_index[i] for i in batch_dims]
        si_index: list[Any] = list(batch_index)
        if d.index_vector_dim < start_indices.ndim:
            si_index.insert(d.index_vector_dim, slice(None))
            start_index = list(start_indices[tuple(si_index)])
        else:
            start_index = [start_indices[tuple(si_index)]]
        full_start = [0] * operand.ndim
        for d_start, d_op in enumerate(d.start_index_map):
            full_start[d_op] = int(np.clip(int(start_index[d_start]), 0,
                                           operand.shape[d_op] - slice_sizes[d_op]))
        full_batching = [0] * operand.ndim
        for i, d_op in enumerate(d.operand_batching_dims):
            full_batching[d_op] = si_index[d.start_indices_batching_dims[i]]
        offset_index = [result_index[i] for i in d.offset_dims]
        full_offset, oi = [0] * operand.ndim, 0
        for i in range(operand.ndim):
            if i in d.collapsed_slice_dims or i in d.operand_batching_dims:
                continue
            full_offset[i] = offset_index[oi]
            oi += 1
        operand_index = tuple(a + b + c for a, b, c in zip(full_start, full_batching, full_offset))
        result[result_index] = operand[operand_index]
    return result


def scatter_model(inputs: list[np.ndarray], scatter_indices: np.ndarray,
                  updates: list[np.ndarray], d: ScatterDimensionNumbers, body: Any
                  ) -> list[np.ndarray]:
    results = [x.copy() for x in inputs]
    rank = updates[0].ndim
    scatter_dims = [i for i in range(rank) if i not in d.update_window_dims]
    for update_index in np.ndindex(*updates[0].shape):
        usi = [update_index[i] for i in scatter_dims]
        si_index: list[Any] = list(usi)
        if d.index_vector_dim < scatter_indices.ndim:
            si_index.insert(d.index_vector_dim, slice(None))
            start_index = list(scatter_indices[tuple(si_index)])
        else:
            start_index = [scatter_indices[tuple(si_index)]]
        full_start = [0] * results[0].ndim
        for d_start, d_in in enumerate(d.scatter_dims_to_operand_dims):
            full_start[d_in] = int(start_index[d_start])
        full_batching = [0] * results[0].ndim
        for i, d_in in enumerate(d.input_batching_dims):
            full_batching[d_in] = si_index[d.scatter_indices_batching_dims[i]]
        window = [update_index[i] for i in d.update_window_dims]
        full_window, wi = [0] * results[0].ndim, 0
        for i in range(results[0].ndim):
            if i in d.inserted_window_dims or i in d.input_batching_dims:
                continue
            full_window[i] = window[wi]
            wi += 1
        ri = tuple(a + b + c for a, b, c in zip(full_start, full_batching, full_window))
        if not all(0 <= i < n for i, n in zip(ri, results[0].shape)):
            continue
        new = body(*[r[ri] for r in results], *[u[update_index] for u in updates])
        for r, v in zip(results, new):
            r[ri] = v
    return results


# --- gather ------------------------------------------------------------------------------------


SPEC_OPERAND = np.array([[[1, 2], [3, 4], [5, 6], [7, 8]],
                         [[9, 10], [11, 12], [13, 14], [15, 16]],
                         [[17, 18], [19, 20], [21, 22], [23, 24]]], np.int32)


def test_gather_spec_example() -> None:
    start_indices = np.array([[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 2]]], np.int64)
    out = run1("stablehlo.gather", [SPEC_OPERAND, start_indices],
               results=tensor((2, 3, 2, 2), "i32"),
               dimension_numbers=gather_attr(offset_dims=(2, 3), collapsed_slice_dims=(0,),
                                             start_index_map=(1, 0), index_vector_dim=2),
               slice_sizes=i64s(1, 2, 2), indices_are_sorted=BoolAttr(False))
    np.testing.assert_array_equal(out, [[[[1, 2], [3, 4]], [[3, 4], [5, 6]],
                                         [[13, 14], [15, 16]]],
                                        [[[9, 10], [11, 12]], [[11, 12], [13, 14]],
                                         [[17, 18], [19, 20]]]])


def test_gather_clamps_start_indices() -> None:
    # start_index_map = [1, 0]: [9, 0] -> operand[0, clamp(9, 0, 4 - 2) = 2:4]; [7, -5] too
    start_indices = np.array([[9, 0], [7, -5]], np.int32)
    out = run1("stablehlo.gather", [SPEC_OPERAND, start_indices], results=tensor((2, 2, 2), "i32"),
               dimension_numbers=gather_attr(offset_dims=(1, 2), collapsed_slice_dims=(0,),
                                             start_index_map=(1, 0), index_vector_dim=1),
               slice_sizes=i64s(1, 2, 2))
    np.testing.assert_array_equal(out, [[[5, 6], [7, 8]], [[5, 6], [7, 8]]])


def test_gather_batching_dims() -> None:
    operand = np.arange(2 * 3 * 4 * 2, dtype=np.int64).reshape(2, 3, 4, 2)
    start_indices = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                              [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)
    d = GatherDimensionNumbers(offset_dims=(3, 4), collapsed_slice_dims=(1,),
                               operand_batching_dims=(0,), start_indices_batching_dims=(1,),
                               start_index_map=(2, 1), index_vector_dim=3)
    out = run1("stablehlo.gather", [operand, start_indices], results=tensor((2, 2, 3, 2, 2), "i64"),
               dimension_numbers=gather_attr(offset_dims=(3, 4), collapsed_slice_dims=(1,),
                                             operand_batching_dims=(0,),
                                             start_indices_batching_dims=(1,),
                                             start_index_map=(2, 1), index_vector_dim=3),
               slice_sizes=i64s(1, 1, 2, 2))
    expected = gather_model(operand, start_indices, d, (1, 1, 2, 2), (2, 2, 3, 2, 2))
    np.testing.assert_array_equal(out, expected)
    # by hand: result[0, 1, 0] uses operand batch 1; start [0, 1] maps to dims (2, 1)
    np.testing.assert_array_equal(out[0, 1, 0], operand[1, 1, 0:2, :])


def test_gather_implicit_index_vector_dim() -> None:
    # index_vector_dim == rank(start_indices): each scalar is a start index (a take)
    x = np.arange(10, dtype=np.float32) * 1.5
    idx = np.array([[3, 0], [9, 12]], np.int32)
    out = run1("stablehlo.gather", [x, idx], results=tensor((2, 2), "f32"),
               dimension_numbers=gather_attr(collapsed_slice_dims=(0,), start_index_map=(0,),
                                             index_vector_dim=2), slice_sizes=i64s(1))
    np.testing.assert_array_equal(out, x[[[3, 0], [9, 9]]])


def test_gather_defaults_index_vector_dim_zero() -> None:
    x = np.arange(5, dtype=np.float32)
    out = run1("stablehlo.gather", [x, np.array([2], np.int64)], results=tensor((), "f32"),
               dimension_numbers=gather_attr(collapsed_slice_dims=(0,), start_index_map=(0,)),
               slice_sizes=i64s(1))
    assert out == 2.0


def test_gather_empty_start_index_map() -> None:
    # no index components: every batch element takes the same slice
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    idx = np.zeros((4, 0), np.int64)
    out = run1("stablehlo.gather", [x, idx], results=tensor((4, 2, 2), "i32"),
               dimension_numbers=gather_attr(offset_dims=(1, 2), index_vector_dim=1),
               slice_sizes=i64s(2, 2))
    np.testing.assert_array_equal(out, np.broadcast_to(x[:, :2], (4, 2, 2)))


@pytest.mark.parametrize("idx_dtype", [np.int8, np.uint8, np.int32, np.uint64, ml_dtypes.int4,
                                       ml_dtypes.uint4])
def test_gather_index_dtypes(idx_dtype: Any) -> None:
    x = np.arange(20, dtype=np.int16)
    idx = np.array([[1], [7], [15]], np.int64).astype(idx_dtype)
    out = run1("stablehlo.gather", [x, idx], results=tensor((3, 2), "i16"),
               dimension_numbers=gather_attr(offset_dims=(1,), start_index_map=(0,),
                                             index_vector_dim=1), slice_sizes=i64s(2))
    starts = np.clip(idx.astype(np.int64).reshape(-1), 0, 18)
    np.testing.assert_array_equal(out, np.stack([x[s:s + 2] for s in starts]))


def test_gather_uint64_huge_index_clamps_high() -> None:
    x = np.arange(5, dtype=np.int32)
    idx = np.array([[2 ** 64 - 1]], np.uint64)
    out = run1("stablehlo.gather", [x, idx], results=tensor((1,), "i32"),
               dimension_numbers=gather_attr(collapsed_slice_dims=(0,), start_index_map=(0,),
                                             index_vector_dim=1), slice_sizes=i64s(1))
    np.testing.assert_array_equal(out, [4])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_every_dtype(dtype: Any) -> None:
    x = sample((4, 3), dtype)
    idx = np.array([[2], [0], [3]], np.int32)
    out = run1("stablehlo.gather", [x, idx], results=TensorType((3, 3), type_of(x).element_type),
               dimension_numbers=gather_attr(offset_dims=(1,), collapsed_slice_dims=(0,),
                                             start_index_map=(0,), index_vector_dim=1),
               slice_sizes=i64s(1, 3))
    np.testing.assert_array_equal(bits(out), bits(x[[2, 0, 3]]))


def _random_gather_case(rng: np.random.Generator) -> tuple[Any, ...]:
    """Random valid gather: operand rank 1-4, optional batching dims, any index_vector_dim."""
    op_rank = int(rng.integers(1, 5))
    operand_shape = tuple(int(v) for v in rng.integers(1, 5, op_rank))
    dims = list(range(op_rank))
    rng.shuffle(dims)
    n_batch = int(rng.integers(0, min(2, op_rank) + 1)) if op_rank > 1 else 0
    operand_batching = sorted(dims[:n_batch])
    rest = dims[n_batch:]
    n_map = int(rng.integers(0, len(rest) + 1))
    start_index_map = [int(v) for v in rng.permutation(rest)[:n_map]]
    collapsed = sorted(int(v) for v in rng.permutation(start_index_map)[
        :int(rng.integers(0, n_map + 1))])
    slice_sizes = [1 if (d in collapsed or d in operand_batching) else
                   int(rng.integers(0, operand_shape[d] + 1)) for d in range(op_rank)]
    # start_indices: batch dims (incl. the batching ones) plus the index vector dim
    n_idx_batch = int(rng.integers(n_batch, n_batch + 3))
    implicit = n_map == 1 and rng.random() < 0.3  # index_vector_dim == rank(start_indices)
    if implicit:
        idx_rank = index_vector_dim = n_idx_batch
    else:
        idx_rank = n_idx_batch + 1
        index_vector_dim = int(rng.integers(0, idx_rank))
    batch_positions = [p for p in range(idx_rank) if p != index_vector_dim]
    idx_batch_sizes = [int(v) for v in rng.integers(1, 4, len(batch_positions))]
    sib = [int(v) for v in rng.permutation(batch_positions)[:n_batch]]
    for ob, sb in zip(operand_batching, sib):
        idx_batch_sizes[batch_positions.index(sb)] = operand_shape[ob]
    idx_shape = [0] * idx_rank
    for p, s in zip(batch_positions, idx_batch_sizes):
        idx_shape[p] = s
    if not implicit:
        idx_shape[index_vector_dim] = n_map
    start_indices = rng.integers(-2, 6, idx_shape).astype(np.int32)
    offset_sizes = [slice_sizes[d] for d in range(op_rank)
                    if d not in collapsed and d not in operand_batching]
    res_rank = len(idx_batch_sizes) + len(offset_sizes)
    offset_dims = sorted(int(v) for v in rng.permutation(res_rank)[:len(offset_sizes)])
    result_shape = [0] * res_rank
    batch_iter = iter(idx_batch_sizes)
    off_iter = iter(offset_sizes)
    for r in range(res_rank):
        result_shape[r] = next(off_iter) if r in offset_dims else next(batch_iter)
    d = GatherDimensionNumbers(tuple(offset_dims), tuple(collapsed), tuple(operand_batching),
                               tuple(sib), tuple(start_index_map), index_vector_dim)
    operand = rng.standard_normal(operand_shape).astype(np.float32)
    return operand, start_indices, d, tuple(slice_sizes), tuple(result_shape)


def test_gather_random_against_spec_model() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        operand, idx, d, sizes, rshape = _random_gather_case(rng)
        expected = gather_model(operand, idx, d, sizes, rshape)
        out = gather_array(operand, idx, d, sizes)
        assert out.shape == rshape, (d, sizes)
        np.testing.assert_array_equal(out, expected, err_msg=str((d, sizes)))


# --- scatter -----------------------------------------------------------------------------------


def _region(n: int, et: str, body: str | None) -> Region:
    """A scatter update_computation over ``n`` inputs: ``body`` is an op name applied to
    (current, update), or "update" / "current" for a body returning one of its arguments."""
    t = tensor((), et)
    block = Block([t] * (2 * n))
    args = block.arguments
    if body == "update":
        rets = args[n:]
    elif body == "current":
        rets = args[:n]
    else:
        rets = []
        for i in range(n):
            op = Operation(body, [args[i], args[n + i]], [t])
            block.append(op)
            rets.append(op.result)
    block.append(Operation("stablehlo.return", list(rets), []))
    return Region([block])


def run_scatter(inputs: list[np.ndarray], indices: np.ndarray, updates: list[np.ndarray],
                body: str, **dims: Any) -> list[np.ndarray]:
    et = type_of(inputs[0]).element_type.name
    n = len(inputs)
    return run_op("stablehlo.scatter", inputs + [indices] + updates,
                  results=[type_of(x) for x in inputs], regions=[_region(n, et, body)],
                  scatter_dimension_numbers=scatter_attr(**dims),
                  indices_are_sorted=BoolAttr(False), unique_indices=BoolAttr(False))


def _have(*names: str) -> bool:
    return all((d := lookup(n)) is not None and d.prepare is not None for n in names)


SPEC_SCATTER_DIMS = dict(update_window_dims=(3, 4), inserted_window_dims=(1,),
                         input_batching_dims=(0,), scatter_indices_batching_dims=(1,),
                         scatter_dims_to_operand_dims=(2, 1), index_vector_dim=3)


def test_scatter_spec_example_add() -> None:
    """The spec's example (batching dims; the index [0, 9] is out of bounds and skipped)."""
    inputs = np.arange(1, 49, dtype=np.int64).reshape(2, 3, 4, 2)
    indices = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                        [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)
    updates = np.ones((2, 2, 3, 2, 2), np.int64)
    (out,) = run_scatter([inputs], indices, [updates], "stablehlo.add", **SPEC_SCATTER_DIMS)
    d = ScatterDimensionNumbers(**SPEC_SCATTER_DIMS)
    (expected,) = scatter_model([inputs], indices, [updates], d, lambda a, b: (a + b,))
    np.testing.assert_array_equal(out, expected)
    # by hand: [0, 0] is the start of two windows of batch 0 (indices [0, 0, 0] and [1, 0, 0])
    np.testing.assert_array_equal(out[0, 0, 0], [3, 4])
    assert out.sum() - inputs.sum() == 11 * 4  # 12 windows of 4 elements, one out of bounds


@pytest.mark.parametrize("body,ufunc", [("stablehlo.add", np.add),
                                        ("stablehlo.multiply", np.multiply),
                                        ("stablehlo.maximum", np.maximum),
                                        ("stablehlo.minimum", np.minimum)])
def test_scatter_single_op_bodies_with_duplicates(body: str, ufunc: Any) -> None:
    x = np.arange(6, dtype=np.float32) - 2
    idx = np.array([[1], [1], [4], [1], [5], [9], [-1]], np.int32)
    upd = np.array([3, -2, 5, 0.5, -7, 100, 100], np.float32)
    (out,) = run_scatter([x], idx, [upd], body, inserted_window_dims=(0,),
                         scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    expected = x.copy()
    ufunc.at(expected, [1, 1, 4, 1, 5], upd[:5])
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float32


def test_scatter_assign_last_writer_wins() -> None:
    x = np.zeros((3, 2), np.int32)
    idx = np.array([[2], [0], [2], [2]], np.int64)
    upd = np.array([[1, 1], [2, 2], [3, 3], [4, 4]], np.int32)
    (out,) = run_scatter([x], idx, [upd], "update", update_window_dims=(1,),
                         inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                         index_vector_dim=1)
    np.testing.assert_array_equal(out, [[2, 2], [0, 0], [4, 4]])


def test_scatter_keep_body_is_identity_and_copies() -> None:
    x = np.arange(4, dtype=np.float64)
    (out,) = run_scatter([x], np.array([[1]], np.int32), [np.array([9.0])], "current",
                         inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                         index_vector_dim=1)
    np.testing.assert_array_equal(out, x)
    out[0] = 42
    assert x[0] == 0


def test_scatter_variadic_assign() -> None:
    a = np.zeros(4, np.float32)
    idx = np.array([[3], [0]], np.int32)
    b = np.zeros(4, np.float32)
    outs = run_scatter([a, b], idx, [np.array([1.5, 2.5], np.float32),
                                     np.array([7, 8], np.float32)], "update",
                       inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                       index_vector_dim=1)
    np.testing.assert_array_equal(outs[0], [2.5, 0, 0, 1.5])
    np.testing.assert_array_equal(outs[1], [8, 0, 0, 7])


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16, ml_dtypes.float8_e4m3fn,
                                   ml_dtypes.int4, np.uint8, np.int64, np.complex64, np.bool_])
def test_scatter_add_every_dtype(dtype: Any) -> None:
    x = sample((5,), dtype)
    upd = sample((3,), dtype)
    idx = np.array([[0], [0], [3]], np.int32)
    (out,) = run_scatter([x], idx, [upd], "stablehlo.add", inserted_window_dims=(0,),
                         scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    expected = x.copy()
    np.add.at(expected, [0, 0, 3], upd)
    np.testing.assert_array_equal(bits(out), bits(expected))


def test_occurrence_rank() -> None:
    np.testing.assert_array_equal(occurrence_rank(np.array([5, 1, 5, 5, 2, 1])),
                                  [0, 0, 1, 2, 0, 1])
    assert occurrence_rank(np.zeros(0, np.int64)).size == 0


@pytest.mark.skipif(not _have("stablehlo.subtract", "stablehlo.multiply", "stablehlo.add"),
                    reason="element-wise kernels not available yet")
def test_scatter_general_body_rounds_match_sequential() -> None:
    """A non-commutative body (current * 2 - update) with duplicate targets: processed in
    rounds, the result equals applying the updates one at a time in update order."""
    t = tensor((), "f64")
    block = Block([t, t])
    cur, upd = block.arguments
    two = Operation("stablehlo.constant", [], [t],
                    properties={"value": DenseElementsAttr(t, np.array(2.0))})
    mul = Operation("stablehlo.multiply", [cur, two.result], [t])
    sub = Operation("stablehlo.subtract", [mul.result, upd], [t])
    for o in (two, mul, sub):
        block.append(o)
    block.append(Operation("stablehlo.return", [sub.result], []))
    x = np.arange(5, dtype=np.float64)
    idx = np.array([[1], [3], [1], [1], [0], [3], [7]], np.int64)
    upd = np.array([1, 2, 3, 4, 5, 6, 7], np.float64)
    (out,) = run_op("stablehlo.scatter", [x, idx, upd], results=[type_of(x)],
                    regions=[Region([block])],
                    scatter_dimension_numbers=scatter_attr(inserted_window_dims=(0,),
                                                           scatter_dims_to_operand_dims=(0,),
                                                           index_vector_dim=1))
    d = ScatterDimensionNumbers(inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                                index_vector_dim=1)
    (expected,) = scatter_model([x], idx, [upd], d, lambda a, b: (a * 2 - b,))
    np.testing.assert_array_equal(out, expected)


def _random_scatter_case(rng: np.random.Generator) -> tuple[Any, ...]:
    """A random valid scatter, derived from a random gather (scatter is its transpose)."""
    operand, idx, gd, sizes, rshape = _random_gather_case(rng)
    d = ScatterDimensionNumbers(update_window_dims=gd.offset_dims,
                                inserted_window_dims=gd.collapsed_slice_dims,
                                input_batching_dims=gd.operand_batching_dims,
                                scatter_indices_batching_dims=gd.start_indices_batching_dims,
                                scatter_dims_to_operand_dims=gd.start_index_map,
                                index_vector_dim=gd.index_vector_dim)
    updates = rng.integers(-9, 10, rshape).astype(np.float64)
    return operand.astype(np.float64), idx, updates, d


@pytest.mark.parametrize("body,fn", [("stablehlo.add", lambda a, b: (a + b,)),
                                     ("update", lambda a, b: (b,)),
                                     ("stablehlo.maximum", lambda a, b: (max(a, b),))])
def test_scatter_random_against_spec_model(body: str, fn: Any) -> None:
    rng = np.random.default_rng(1)
    for _ in range(150):
        x, idx, upd, d = _random_scatter_case(rng)
        (expected,) = scatter_model([x], idx, [upd], d, fn)
        (out,) = run_scatter([x], idx, [upd], body, **{
            k: getattr(d, k) for k in ScatterDimensionNumbers.__dataclass_fields__})
        np.testing.assert_array_equal(out, expected, err_msg=str(d))


# --- dynamic_slice / dynamic_update_slice ------------------------------------------------------


def test_dynamic_slice_spec_example() -> None:
    x = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]], np.int32)
    out = run1("stablehlo.dynamic_slice", [x, np.array(-1, np.int64), np.array(3, np.int64)],
               results=tensor((2, 2), "i32"), slice_sizes=i64s(2, 2))
    np.testing.assert_array_equal(out, [[1, 1], [1, 1]])


@pytest.mark.parametrize("starts", list(itertools.product([-3, 0, 1, 2, 5], repeat=2)))
def test_dynamic_slice_clamping(starts: tuple[int, int]) -> None:
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = run1("stablehlo.dynamic_slice", [x, np.array(starts[0], np.int32),
                                           np.array(starts[1], np.uint8 if starts[1] >= 0
                                                    else np.int8)],
               results=tensor((2, 3), "f32"), slice_sizes=i64s(2, 3))
    s0 = min(max(starts[0], 0), 2)
    s1 = min(max(starts[1], 0), 2)
    np.testing.assert_array_equal(out, x[s0:s0 + 2, s1:s1 + 3])


def test_dynamic_update_slice_spec_example() -> None:
    x = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]], np.int32)
    upd = np.ones((2, 2), np.int32)
    out = run1("stablehlo.dynamic_update_slice",
               [x, upd, np.array(-1, np.int64), np.array(3, np.int64)],
               results=tensor((4, 4), "i32"))
    np.testing.assert_array_equal(out, np.ones((4, 4)))
    assert x[0, 2] == 0  # operand untouched


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dynamic_update_slice_every_dtype(dtype: Any) -> None:
    x = sample((3, 3), dtype)
    upd = sample((1, 2), dtype)[:, ::-1].copy()
    out = run1("stablehlo.dynamic_update_slice",
               [x, upd, np.array(2, np.int32), np.array(5, np.int32)], results=type_of(x))
    expected = x.copy()
    expected[2:3, 1:3] = upd
    np.testing.assert_array_equal(bits(out), bits(expected))
    out = run1("stablehlo.dynamic_slice", [x, np.array(1, np.int32), np.array(-1, np.int32)],
               results=TensorType((2, 2), type_of(x).element_type), slice_sizes=i64s(2, 2))
    np.testing.assert_array_equal(bits(out), bits(x[1:3, 0:2]))



# --- differential tests against XLA (skipped without jax) --------------------------------------


@pytest.fixture(scope="module")
def xla() -> Any:
    """``run(mlir_text, *args) -> list of arrays`` on XLA's CPU client."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax._src import xla_bridge
    from jax._src.lib import xla_client

    backend = xla_bridge.get_backend("cpu")
    dev = backend.devices()[0]

    def run(text: str, *args: np.ndarray) -> list[np.ndarray]:
        exe = backend.compile_and_load(text, xla_client.DeviceList((dev,)),
                                       xla_client.CompileOptions())
        return [np.asarray(o) for o in exe.execute([jax.device_put(a, dev) for a in args])]

    return run


def _ty(shape: Any, et: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def _struct(name: str, dn: Any) -> str:
    parts = []
    for f in dn.__dataclass_fields__:
        v = getattr(dn, f)
        if isinstance(v, tuple):
            if v:
                parts.append(f"{f} = [{', '.join(map(str, v))}]")
        else:
            parts.append(f"{f} = {v}")
    return f"#stablehlo.{name}<{', '.join(parts)}>"


def test_gather_random_against_xla(xla: Any) -> None:
    rng = np.random.default_rng(2)
    for _ in range(40):
        operand, idx, d, sizes, rshape = _random_gather_case(rng)
        text = f"""func.func @main(%a: {_ty(operand.shape, 'f32')}, %i: {_ty(idx.shape, 'i32')})
    -> {_ty(rshape, 'f32')} {{
  %r = "stablehlo.gather"(%a, %i) {{dimension_numbers = {_struct('gather', d)},
    slice_sizes = array<i64: {', '.join(map(str, sizes))}>, indices_are_sorted = false}}
    : ({_ty(operand.shape, 'f32')}, {_ty(idx.shape, 'i32')}) -> {_ty(rshape, 'f32')}
  func.return %r : {_ty(rshape, 'f32')}
}}"""
        (expected,) = xla(text, operand, idx)
        np.testing.assert_array_equal(gather_array(operand, idx, d, sizes), expected,
                                      err_msg=text)


def _in_bounds_windows(x: np.ndarray, idx: np.ndarray, upd: np.ndarray,
                       d: ScatterDimensionNumbers) -> np.ndarray:
    """Clip scatter indices so that every window is in bounds (XLA skips a whole window when
    any element of it is out of bounds; the spec skips element by element)."""
    window_sizes = {}
    wdims = [i for i in range(x.ndim) if i not in d.inserted_window_dims
             and i not in d.input_batching_dims]
    for i, u in zip(wdims, d.update_window_dims):
        window_sizes[i] = upd.shape[u]
    idx = idx.copy()
    vec = idx[..., None] if d.index_vector_dim == idx.ndim else np.moveaxis(
        idx, d.index_vector_dim, -1)
    for k, dim in enumerate(d.scatter_dims_to_operand_dims):
        vec[..., k] = np.clip(vec[..., k], 0, x.shape[dim] - window_sizes.get(dim, 1))
    return idx


@pytest.mark.parametrize("body", ["stablehlo.add", "stablehlo.maximum", "stablehlo.multiply"])
def test_scatter_random_against_xla(xla: Any, body: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(25):
        x, idx, upd, d = _random_scatter_case(rng)
        if idx.size == 0:
            continue  # XLA applies only one of several updates when the index vector is empty
        idx = _in_bounds_windows(x, idx, upd, d)
        x, upd = x.astype(np.int64), upd.astype(np.int64)
        text = f"""func.func @main(%a: {_ty(x.shape, 'i64')}, %i: {_ty(idx.shape, 'i32')},
    %u: {_ty(upd.shape, 'i64')}) -> {_ty(x.shape, 'i64')} {{
  %r = "stablehlo.scatter"(%a, %i, %u) ({{
    ^bb0(%p: tensor<i64>, %q: tensor<i64>):
      %s = "{body}"(%p, %q) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%s) : (tensor<i64>) -> ()
  }}) {{scatter_dimension_numbers = {_struct('scatter', d)}, indices_are_sorted = false,
     unique_indices = false}}
    : ({_ty(x.shape, 'i64')}, {_ty(idx.shape, 'i32')}, {_ty(upd.shape, 'i64')})
    -> {_ty(x.shape, 'i64')}
  func.return %r : {_ty(x.shape, 'i64')}
}}"""
        (expected,) = xla(text, x, idx, upd)
        (out,) = run_scatter([x], idx, [upd], body, **{
            k: getattr(d, k) for k in ScatterDimensionNumbers.__dataclass_fields__})
        np.testing.assert_array_equal(out, expected, err_msg=text)


def test_dynamic_slice_and_update_against_xla(xla: Any) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    upd = rng.standard_normal((2, 4)).astype(np.float32)
    text = f"""func.func @main(%a: tensor<5x6xf32>, %u: tensor<2x4xf32>, %i: tensor<i32>,
    %j: tensor<i32>) -> (tensor<2x4xf32>, tensor<5x6xf32>) {{
  %s = "stablehlo.dynamic_slice"(%a, %i, %j) {{slice_sizes = array<i64: 2, 4>}}
    : (tensor<5x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
  %t = "stablehlo.dynamic_update_slice"(%a, %u, %i, %j)
    : (tensor<5x6xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<5x6xf32>
  func.return %s, %t : tensor<2x4xf32>, tensor<5x6xf32>
}}"""
    for i, j in [(-3, 1), (2, 9), (4, -1), (1, 2)]:
        si, sj = np.array(i, np.int32), np.array(j, np.int32)
        es, et = xla(text, x, upd, si, sj)
        s = run1("stablehlo.dynamic_slice", [x, si, sj], results=tensor((2, 4), "f32"),
                 slice_sizes=i64s(2, 4))
        t = run1("stablehlo.dynamic_update_slice", [x, upd, si, sj], results=tensor((5, 6), "f32"))
        np.testing.assert_array_equal(s, es)
        np.testing.assert_array_equal(t, et)


# --- spec examples as MLIR programs (parser + verifier + evaluator) ---------------------------


def test_program_gather_generic_form() -> None:
    (out,) = run_text("""
func.func @main() -> tensor<2x3x2x2xi32> {
  %operand = stablehlo.constant dense<[[[1, 2], [3, 4], [5, 6], [7, 8]],
                                       [[9, 10], [11, 12], [13, 14], [15, 16]],
                                       [[17, 18], [19, 20], [21, 22], [23, 24]]]>
    : tensor<3x4x2xi32>
  %start_indices = stablehlo.constant dense<[[[0, 0], [1, 0], [2, 1]],
                                             [[0, 1], [1, 1], [0, 2]]]> : tensor<2x3x2xi64>
  %result = "stablehlo.gather"(%operand, %start_indices) {
    dimension_numbers = #stablehlo.gather<
      offset_dims = [2, 3],
      collapsed_slice_dims = [0],
      start_index_map = [1, 0],
      index_vector_dim = 2>,
    slice_sizes = array<i64: 1, 2, 2>,
    indices_are_sorted = false
  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32>
  func.return %result : tensor<2x3x2x2xi32>
}""", verify=True)
    np.testing.assert_array_equal(out, [[[[1, 2], [3, 4]], [[3, 4], [5, 6]],
                                         [[13, 14], [15, 16]]],
                                        [[[9, 10], [11, 12]], [[11, 12], [13, 14]],
                                         [[17, 18], [19, 20]]]])


def test_program_scatter_jax_style_set_and_add() -> None:
    """The forms JAX exports: properties `<{...}>`, defaulted index_vector_dim, region bodies
    returning the update (`.at[].set`) or adding it (`.at[].add`)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    idx = np.array([[1], [0], [1]], np.int32)
    upd = np.array([[10, 20, 30], [1, 2, 3], [100, 200, 300]], np.float32)
    text = """
func.func @main(%x: tensor<2x3xf32>, %i: tensor<3x1xi32>, %u: tensor<3x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [1], inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<f32>):
    stablehlo.return %arg1 : tensor<f32>
  }) : (tensor<2x3xf32>, tensor<3x1xi32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %1 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [1], inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<f32>):
    %s = stablehlo.add %arg0, %arg1 : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x3xf32>, tensor<3x1xi32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}"""
    set_, add = run_text(text, x, idx, upd, verify=True)
    np.testing.assert_array_equal(set_, [[1, 2, 3], [100, 200, 300]])
    np.testing.assert_array_equal(add, [[1, 3, 5], [113, 224, 335]])


def test_program_scatter_variadic_general_body() -> None:
    """Two inputs, a body mixing them (a scatter-argmax), duplicate targets: rounds."""
    text = """
func.func @main(%v: tensor<3xf32>, %k: tensor<3xi32>, %i: tensor<5x1xi32>, %uv: tensor<5xf32>,
                %uk: tensor<5xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0:2 = "stablehlo.scatter"(%v, %k, %i, %uv, %uk) <{scatter_dimension_numbers =
      #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],
      index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<i32>):
    %gt = stablehlo.compare GT, %c, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %nv = stablehlo.select %gt, %c, %a : tensor<i1>, tensor<f32>
    %nk = stablehlo.select %gt, %d, %b : tensor<i1>, tensor<i32>
    stablehlo.return %nv, %nk : tensor<f32>, tensor<i32>
  }) : (tensor<3xf32>, tensor<3xi32>, tensor<5x1xi32>, tensor<5xf32>, tensor<5xi32>)
    -> (tensor<3xf32>, tensor<3xi32>)
  func.return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
}"""
    v = np.full(3, -np.inf, np.float32)
    k = np.full(3, -1, np.int32)
    idx = np.array([[2], [0], [2], [2], [5]], np.int32)
    uv = np.array([1.0, 4.0, 7.0, 3.0, 9.0], np.float32)
    uk = np.array([0, 1, 2, 3, 4], np.int32)
    vals, keys = run_text(text, v, k, idx, uv, uk, verify=True)
    np.testing.assert_array_equal(vals, [4.0, -np.inf, 7.0])
    np.testing.assert_array_equal(keys, [1, -1, 2])


def test_program_dynamic_slice_and_update() -> None:
    s, u = run_text("""
func.func @main() -> (tensor<2x2xi32>, tensor<4x4xi32>) {
  %operand = stablehlo.constant dense<[[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1],
                                       [1, 1, 1, 1]]> : tensor<4x4xi32>
  %update = stablehlo.constant dense<1> : tensor<2x2xi32>
  %i = stablehlo.constant dense<-1> : tensor<i64>
  %j = stablehlo.constant dense<3> : tensor<i64>
  %s = stablehlo.dynamic_slice %operand, %i, %j, sizes = [2, 2]
    : (tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>
  %u = stablehlo.dynamic_update_slice %operand, %update, %i, %j
    : (tensor<4x4xi32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<4x4xi32>
  func.return %s, %u : tensor<2x2xi32>, tensor<4x4xi32>
}""", verify=True)
    np.testing.assert_array_equal(s, [[0, 0], [0, 0]])
    np.testing.assert_array_equal(u, np.ones((4, 4)))


@pytest.mark.skipif(not _have("stablehlo.add"), reason="element-wise kernels not available yet")
def test_scatter_promoted_region_types() -> None:
    """Region arguments wider than the inputs (bf16 inputs, f32 body): current and update values
    are converted to the region's types, results back to bf16 after every update."""
    f32 = tensor((), "f32")
    block = Block([f32, f32])
    add = Operation("stablehlo.add", list(block.arguments), [f32])
    block.append(add)
    block.append(Operation("stablehlo.return", [add.result], []))
    x = np.array([1, 256, 3], ml_dtypes.bfloat16)
    idx = np.array([[1], [1], [1], [0]], np.int32)
    upd = np.array([1, 1, 1, 0.5], ml_dtypes.bfloat16)
    (out,) = run_op("stablehlo.scatter", [x, idx, upd], results=[type_of(x)],
                    regions=[Region([block])],
                    scatter_dimension_numbers=scatter_attr(inserted_window_dims=(0,),
                                                           scatter_dims_to_operand_dims=(0,),
                                                           index_vector_dim=1))
    assert out.dtype == ml_dtypes.bfloat16
    # 256 + 1 rounds back to 256 in bf16 after each update (sequential semantics)
    np.testing.assert_array_equal(out.astype(np.float32), [1.5, 256, 3])
