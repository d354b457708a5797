"""Dynamic-shape ops (beyond the spec: its "Dynamism" category bootstrapped from MHLO).

dynamic_broadcast_in_dim, dynamic_iota, dynamic_reshape, dynamic_pad, dynamic_gather,
real_dynamic_slice and set_dimension_size take the shape-determining values (output shapes,
paddings, slice bounds) as operand *tensors* instead of attributes, so result types may contain
`?`. At run time those operand values decide the result's shape; each op otherwise behaves as
its static counterpart (the upstream interpreter does the same: e.g. dynamic_iota evaluates as
iota, dynamic_pad as pad with the operands' values). get_dimension_size (shape.py) returns the
run-time size.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ir import Operation
from .indexing import GatherDimensionNumbers, gather_array, to_index
from .registry import kernel
from .shape import (Run, as_dtype, broadcast_in_dim_array, int_attr, ints_attr, iota_array,
                    pad_array, result_type)


def shape_values(x: Any) -> tuple[int, ...]:
    """A 1-dimensional integer tensor operand (an output shape, paddings...) as Python ints."""
    return tuple(int(v) for v in to_index(x).reshape(-1))


def _check_shape(op: Operation, shape: Sequence[int]) -> None:
    """The run-time shape must agree with the static dimensions of the result type."""
    t = result_type(op)
    if t.shape is not None and (len(t.shape) != len(shape) or any(
            d is not None and d != s for d, s in zip(t.shape, shape))):
        raise ValueError(f"run-time shape {tuple(shape)} does not match the result type {t}")
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension size in run-time shape {tuple(shape)}")


@kernel("stablehlo.dynamic_broadcast_in_dim", quantized_aware=True)
def dynamic_broadcast_in_dim(op: Operation, ctx: Any) -> Run:
    """broadcast_in_dim to the shape held by ``output_dimensions``.

    ``known_expanding_dimensions`` / ``known_nonexpanding_dimensions`` are optimisation hints
    and do not change the result.
    """
    bd = ints_attr(op, "broadcast_dimensions")
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, output_dimensions: np.ndarray) -> Sequence[Any]:
        shape = shape_values(output_dimensions)
        _check_shape(op, shape)
        return (broadcast_in_dim_array(as_dtype(operand, dtype), bd, shape),)

    return run


@kernel("stablehlo.dynamic_iota")
def dynamic_iota(op: Operation, ctx: Any) -> Run:
    """iota with the shape held by ``output_shape`` (arrays cached per shape)."""
    dim = int_attr(op, "iota_dimension")
    dtype = result_type(op).dtype
    cache: dict[tuple[int, ...], np.ndarray] = {}

    def run(output_shape: np.ndarray) -> Sequence[Any]:
        shape = shape_values(output_shape)
        out = cache.get(shape)
        if out is None:
            _check_shape(op, shape)
            if len(cache) > 16:
                cache.clear()
            out = cache[shape] = iota_array(shape, dim, dtype)
        return (out,)

    return run


@kernel("stablehlo.dynamic_reshape", quantized_aware=True)
def dynamic_reshape(op: Operation, ctx: Any) -> Run:
    """reshape to the shape held by ``output_shape`` (same element count required)."""
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, output_shape: np.ndarray) -> Sequence[Any]:
        shape = shape_values(output_shape)
        _check_shape(op, shape)
        operand = as_dtype(operand, dtype)
        if int(np.prod(shape, dtype=np.int64)) != operand.size:
            raise ValueError(f"cannot reshape {operand.shape} to {shape}: element counts differ")
        return (operand.reshape(shape),)

    return run


@kernel("stablehlo.dynamic_pad", quantized_aware=True)
def dynamic_pad(op: Operation, ctx: Any) -> Run:
    """pad with ``edge_padding_low``, ``edge_padding_high``, ``interior_padding`` operands."""
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, padding_value: np.ndarray, edge_padding_low: np.ndarray,
            edge_padding_high: np.ndarray, interior_padding: np.ndarray) -> Sequence[Any]:
        low, high = shape_values(edge_padding_low), shape_values(edge_padding_high)
        interior = shape_values(interior_padding)
        if any(i < 0 for i in interior):
            raise ValueError(f"negative interior padding {interior}")
        out = pad_array(as_dtype(operand, dtype), padding_value, low, high, interior)
        _check_shape(op, out.shape)
        return (out,)

    return run


@kernel("stablehlo.dynamic_gather", quantized_aware=True)
def dynamic_gather(op: Operation, ctx: Any) -> Run:
    """gather with ``slice_sizes`` given as an operand tensor."""
    dims = GatherDimensionNumbers.from_attr(op.attr("dimension_numbers"))
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, start_indices: np.ndarray, slice_sizes: np.ndarray
            ) -> Sequence[Any]:
        operand = as_dtype(operand, dtype)
        sizes = shape_values(slice_sizes)
        if len(sizes) != operand.ndim or any(
                not 0 <= k <= n for k, n in zip(sizes, operand.shape)):
            raise ValueError(f"slice_sizes {sizes} out of range for operand shape "
                             f"{operand.shape}")
        return (gather_array(operand, start_indices, dims, sizes),)

    return run


@kernel("stablehlo.real_dynamic_slice", quantized_aware=True)
def real_dynamic_slice(op: Operation, ctx: Any) -> Run:
    """slice with ``start_indices``, ``limit_indices`` and ``strides`` given as operands.

    Like `slice`, the bounds must satisfy ``0 <= start <= limit <= dim`` and ``strides > 0``;
    they are checked at run time (no clamping: out-of-range bounds are an error).
    """
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, start_indices: np.ndarray, limit_indices: np.ndarray,
            strides: np.ndarray) -> Sequence[Any]:
        operand = as_dtype(operand, dtype)
        start, limit = shape_values(start_indices), shape_values(limit_indices)
        step = shape_values(strides)
        for s, l, st, n in zip(start, limit, step, operand.shape):
            if not (0 <= s <= l <= n and st > 0):
                raise ValueError(f"slice bounds start={start} limit={limit} strides={step} "
                                 f"out of range for operand shape {operand.shape}")
        out = operand[tuple(slice(s, l, st) for s, l, st in zip(start, limit, step))]
        _check_shape(op, out.shape)
        return (out,)

    return run


@kernel("stablehlo.set_dimension_size", quantized_aware=True)
def set_dimension_size(op: Operation, ctx: Any) -> Run:
    """Sets the run-time size of ``dimension`` to ``size`` (XLA's dynamic padding semantics).

    The result keeps the first ``size`` elements along ``dimension`` (``size`` is clamped to
    ``[0, dim(operand, dimension)]``): the elements XLA treats as padding are dropped.
    """
    dimension = int_attr(op, "dimension")

    def run(operand: np.ndarray, size: np.ndarray) -> Sequence[Any]:
        operand = np.asarray(operand)
        n = min(max(int(to_index(size)), 0), operand.shape[dimension])
        index = [slice(None)] * operand.ndim
        index[dimension] = slice(0, n)
        return (operand[tuple(index)],)

    return run
