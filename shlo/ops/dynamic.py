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
from ..registry import kernel
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


def _real_dynamic_slice_index(start: Sequence[int], limit: Sequence[int], strides: Sequence[int],
                              shape: Sequence[int]) -> tuple[slice, ...]:
    """Slices for real_dynamic_slice: the result size per dimension is
    ``ceil((limit - start) / stride)``; a start that would make the slice overrun the operand is
    clamped like dynamic_slice's (``[0, dim - span]``), which is what the slice becomes once its
    bounds are refined (canonicalized to `dynamic_slice`)."""
    index = []
    for s, l, st, n in zip(start, limit, strides, shape):
        if st <= 0 or l < s:
            raise ValueError(f"invalid slice bounds start={tuple(start)} limit={tuple(limit)} "
                             f"strides={tuple(strides)}")
        size = -(-(l - s) // st)
        span = (size - 1) * st + 1 if size else 0
        if span > n:
            raise ValueError(f"slice of {size} elements with stride {st} does not fit in a "
                             f"dimension of size {n}")
        s = min(max(s, 0), n - span)
        index.append(slice(s, s + span, st))
    return tuple(index)


@kernel("stablehlo.real_dynamic_slice", quantized_aware=True)
def real_dynamic_slice(op: Operation, ctx: Any) -> Run:
    """slice with ``start_indices``, ``limit_indices`` and ``strides`` given as operands.

    The result has ``ceil((limit - start) / stride)`` elements per dimension; starts are clamped
    so that the slice fits (as dynamic_slice does), see docs/semantics/shape_indexing.md.
    """
    dtype = result_type(op).dtype

    def run(operand: np.ndarray, start_indices: np.ndarray, limit_indices: np.ndarray,
            strides: np.ndarray) -> Sequence[Any]:
        operand = as_dtype(operand, dtype)
        index = _real_dynamic_slice_index(shape_values(start_indices),
                                          shape_values(limit_indices), shape_values(strides),
                                          operand.shape)
        out = operand[index]
        _check_shape(op, out.shape)
        return (out,)

    return run


@kernel("stablehlo.set_dimension_size", quantized_aware=True)
def set_dimension_size(op: Operation, ctx: Any) -> Run:
    """Sets the run-time size of ``dimension`` to ``size`` (XLA's dynamic padding semantics).

    The result keeps the first ``size`` elements along ``dimension`` (``size`` is clamped to
    ``[0, dim(operand, dimension)]``): the elements XLA treats as padding are dropped. When the
    result type has a static size there, that size wins (the result type is the authority on
    static dimensions; `tensor<4x2xf32> -> tensor<4x2xf32>` returns the operand).
    """
    dimension = int_attr(op, "dimension")
    t = result_type(op)
    static = t.shape[dimension] if t.shape is not None else None

    def run(operand: np.ndarray, size: np.ndarray) -> Sequence[Any]:
        operand = np.asarray(operand)
        n = static if static is not None else int(to_index(size))
        n = min(max(n, 0), operand.shape[dimension])
        if n == operand.shape[dimension]:
            return (operand,)
        index = [slice(None)] * operand.ndim
        index[dimension] = slice(0, n)
        return (operand[tuple(index)],)

    return run


# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# The verifiers of the dynamic-shape ops (beyond the seed spec; shlo/verifier.py calls them
# through the registry). Shape operands defined by constants are checked against the result.

from typing import Any as _Any  # noqa: E402

from ..ir import Operation as _Operation  # noqa: E402
from ..types import TensorType as _TensorType  # noqa: E402
from . import _constraints as _c  # noqa: E402
from ..registry import verifier  # noqa: E402

_SHAPE_TENSOR = _c.TC(_c.I | _c.INDEX, rank=1, static=True,
                      description="statically shaped 1-dimensional tensor of index or "
                                  "2/4/8/16/32/64-bit integer values")


def _output_shape(op: _Operation, diag: _Any, label: str, shape_value: _Any) -> bool:
    """A constant output shape must be non-negative and agree with the result type."""
    values = _c.constant_ints(shape_value)
    res = op.results[0].type
    if values is None or not isinstance(res, _TensorType) or res.shape is None:
        return True
    if len(values) != len(res.shape) or any(v < 0 for v in values) or \
            not _c.compatible_shapes(values, res.shape):
        diag.error(op, label, f"output shape {_c.dims_str(values)} is incompatible with return "
                              f"type of operation '{_c.type_str(res)}'")
        return False
    return True


@verifier("stablehlo.dynamic_broadcast_in_dim")
def _verify_dynamic_broadcast_in_dim(op: _Operation, diag: _Any) -> None:
    """broadcast_in_dim's constraints with the result shape given by `output_dimensions`;
    the expansion hints name distinct operand dimensions."""
    if not _c.signature(op, diag, [_c.TENSOR_QA, _SHAPE_TENSOR], [_c.TENSOR_QA],
                        attrs={"broadcast_dimensions": "ints"},
                        optional_attrs={"known_expanding_dimensions": "ints",
                                        "known_nonexpanding_dimensions": "ints"}):
        return
    operand, result = op.operands[0].type, op.results[0].type
    if not _c.compatible_element_types(operand.element_type, result.element_type) and \
            not (isinstance(operand.element_type, _c.QuantizedType) and
                 isinstance(result.element_type, _c.QuantizedType)):
        diag.error(op, "C1", f"expects operand and result to have compatible element type: "
                             f"{_c.types_str([operand, result])}")
        return
    dims = _c.ints_attr(op, "broadcast_dimensions")
    shape_len = op.operands[1].type.shape
    if result.shape is not None and shape_len and shape_len[0] is not None and \
            shape_len[0] != len(result.shape):
        diag.error(op, "C7", f"result rank ({len(result.shape)}) does not match the size of "
                             f"output_dimensions ({shape_len[0]})")
        return
    if not _c.check_broadcast_in_dim(op, diag, operand, result, dims):
        return
    values = _c.constant_ints(op.operands[1])
    if values is not None and operand.shape is not None and len(values) == len(result.shape or
                                                                                 values):
        for i, d in enumerate(dims):
            a = operand.shape[i]
            if a is not None and a != 1 and d < len(values) and values[d] != a:
                diag.error(op, "C5", f"size of operand dimension {i} ({a}) is not equal to 1 or "
                                     f"value of shape at index {d} ({values[d]})")
                return
    if not _output_shape(op, diag, "C7", op.operands[1]):
        return
    expanding = _c.ints_attr(op, "known_expanding_dimensions", ())
    nonexpanding = _c.ints_attr(op, "known_nonexpanding_dimensions", ())
    hints = list(expanding) + list(nonexpanding)
    if not _c.is_unique(hints):
        diag.error(op, "C8", "duplicate expansion hint for at least one operand dimension")
        return
    rank = _c.rank_of(operand)
    for h in hints:
        if rank is not None and not 0 <= h < rank:
            diag.error(op, "C8", f"hint for expanding dimension {h} does not refer to a valid "
                                 f"operand dimension")
            return


@verifier("stablehlo.dynamic_iota")
def _verify_dynamic_iota(op: _Operation, diag: _Any) -> None:
    """iota's constraint with the result shape given by `output_shape`."""
    if not _c.signature(op, diag, [_SHAPE_TENSOR], [_c.TENSOR],
                        attrs={"iota_dimension": "int"}):
        return
    d = _c.int_attr(op, "iota_dimension")
    if d < 0:
        diag.error(op, "C1", f"op attribute 'iota_dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {d})")
        return
    rank = _c.rank_of(op.results[0].type)
    if rank is not None and d >= rank:
        diag.error(op, "C1", f"iota dimension cannot go beyond the output rank: iota_dimension "
                             f"= {d}, rank = {rank}")
        return
    _output_shape(op, diag, "C2", op.operands[0])


@verifier("stablehlo.dynamic_reshape")
def _verify_dynamic_reshape(op: _Operation, diag: _Any) -> None:
    """reshape's constraints with the result shape given by `output_shape`."""
    if not _c.signature(op, diag, [_c.TENSOR_QA, _SHAPE_TENSOR], [_c.TENSOR_QA]):
        return
    operand, result = op.operands[0].type, op.results[0].type
    if not _c.compatible_element_types(operand.element_type, result.element_type) and \
            not (isinstance(operand.element_type, _c.QuantizedType) and
                 isinstance(result.element_type, _c.QuantizedType)):
        diag.error(op, "C1", f"expects operand and result to have compatible element type: "
                             f"{_c.types_str([operand, result])}")
        return
    n_shape = op.operands[1].type.shape
    if result.shape is not None and n_shape and n_shape[0] is not None and \
            n_shape[0] != len(result.shape):
        diag.error(op, "C3", f"result should have a rank equal to the number of elements in "
                             f"output_shape: rank {len(result.shape)}, {n_shape[0]} elements")
        return
    if operand.is_static and result.is_static and operand.num_elements != result.num_elements:
        diag.error(op, "C2", f"number of output elements ({result.num_elements}) doesn't match "
                             f"expected number of elements ({operand.num_elements})")
        return
    values = _c.constant_ints(op.operands[1])
    if values is not None and operand.is_static and all(v >= 0 for v in values):
        n = 1
        for v in values:
            n *= v
        if n != operand.num_elements:
            diag.error(op, "C2", f"output_shape is incompatible with input type of operation: "
                                 f"input has {operand.num_elements} elements, but output_shape has "
                                 f"{n}")
            return
    _output_shape(op, diag, "C3", op.operands[1])


@verifier("stablehlo.dynamic_pad")
def _verify_dynamic_pad(op: _Operation, diag: _Any) -> None:
    """pad's constraints with the paddings given as operands."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TC(_c.F | _c.B | _c.I | _c.C | _c.Q, rank=0),
                                   _SHAPE_TENSOR, _SHAPE_TENSOR, _SHAPE_TENSOR], [_c.TENSOR]):
        return
    operand, pad_value = op.operands[0].type, op.operands[1].type
    if not _c.compatible_element_types(operand.element_type, pad_value.element_type):
        diag.error(op, "C1", "expects operand and padding_value to have the same element type: "
                             + _c.types_str([operand, pad_value]))
        return
    rank = _c.rank_of(operand)
    for v in op.operands[2:]:
        n = v.type.shape[0] if v.type.shape else None
        if rank is not None and n is not None and n != rank:
            diag.error(op, "C2", f"padding operands size ({n}) must match operand rank ({rank})")
            return
    interior = _c.constant_ints(op.operands[4])
    for p in interior or ():
        if p < 0:
            diag.error(op, "C3", f"interior_padding must be non-negative, but got {p}")
            return
    res_rank = _c.rank_of(op.results[0].type)
    if rank is not None and res_rank is not None and rank != res_rank:
        diag.error(op, "C4", f"operand and result must have the same rank: {rank} vs {res_rank}")
        return
    if not _c.compatible_element_types(operand.element_type, op.results[0].type.element_type):
        diag.error(op, "C1", "expects operand and result to have the same element type: "
                             + _c.types_str([operand, op.results[0].type]))


@verifier("stablehlo.dynamic_gather")
def _verify_dynamic_gather(op: _Operation, diag: _Any) -> None:
    """gather's constraints with `slice_sizes` as an operand (checked when constant)."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.INT_TENSOR,
                                   _c.TC(_c.I, rank=1, static=True)], [_c.TENSOR],
                        attrs={"dimension_numbers": "any"},
                        optional_attrs={"indices_are_sorted": "bool"}):
        return
    operand, indices = op.operands[0].type, op.operands[1].type
    sizes = _c.constant_ints(op.operands[2])
    if sizes is None and op.operands[2].type.shape and op.operands[2].type.shape[0] is not None:
        sizes = [None] * op.operands[2].type.shape[0]
    shape = _c.check_gather(op, diag, operand, indices, sizes, op.attr("dimension_numbers"))
    if shape is not None:
        _c.check_inferred(op, diag, "C13, C14", [_TensorType(shape, operand.element_type)])


@verifier("stablehlo.real_dynamic_slice")
def _verify_real_dynamic_slice(op: _Operation, diag: _Any) -> None:
    """slice's constraints with the indices given as operands."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.DIMENSION_TENSOR, _c.DIMENSION_TENSOR,
                                   _c.DIMENSION_TENSOR], [_c.TENSOR]):
        return
    operand, result = op.operands[0].type, op.results[0].type
    if not _c.compatible_element_types(operand.element_type, result.element_type):
        diag.error(op, "C1", "expects operand and result to have the same element type: "
                             + _c.types_str([operand, result]))
        return
    rank = _c.rank_of(operand)
    sizes = [v.type.shape[0] if v.type.shape else None for v in op.operands[1:]]
    if rank is not None and sizes[0] is not None and sizes[0] != rank:
        diag.error(op, "C2", f"has mismatched number of operand rank ({rank}) and start_indices "
                             f"size ({sizes[0]})")
        return
    for name, n in (("limit_indices", sizes[1]), ("strides", sizes[2])):
        if rank is not None and n is not None and n != rank:
            diag.error(op, "C2", f"has mismatched number of operand rank ({rank}) and {name} "
                                 f"size ({n})")
            return
    starts, limits, strides = (_c.constant_ints(v) for v in op.operands[1:])
    for i, s in enumerate(strides or ()):
        if s <= 0:
            diag.error(op, "C4", f"stride must be positive but got {s} in dimension {i}")
            return
    if starts is not None and limits is not None:
        for i, (s, l) in enumerate(zip(starts, limits)):
            if s < 0:
                diag.error(op, "C3", f"negative start index {s} in dimension {i}")
                return
            if s > l:
                diag.error(op, "C3", f"start index {s} is larger than limit index {l} in "
                                     f"dimension {i}")
                return


@verifier("stablehlo.set_dimension_size")
def _verify_set_dimension_size(op: _Operation, diag: _Any) -> None:
    """`dimension` indexes the operand; `size` is a 0-dimensional tensor of i32."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TC(only=frozenset({"i32"}),
                                                    description="ranked tensor of 32-bit "
                                                                "signless integer values")],
                        [_c.TENSOR], attrs={"dimension": "int"}):
        return
    d = _c.int_attr(op, "dimension")
    operand = op.operands[0].type
    if d < 0:
        diag.error(op, "C1", f"op attribute 'dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {d})")
        return
    rank = _c.rank_of(operand)
    if rank is not None and d >= rank:
        diag.error(op, "C1", f"requires dimension attribute in range [0, {rank}); found ({d})")
        return
    if rank is None:
        return
    size = _c.constant_ints(op.operands[1])
    shape = list(operand.shape)
    shape[d] = size[0] if size else None
    res = op.results[0].type
    if not _c.compatible(_TensorType(tuple(shape), operand.element_type), res):
        diag.error(op, "C2", f"inferred type(s) "
                             f"{_c.types_str([_TensorType(tuple(shape), operand.element_type)])} "
                             f"are incompatible with return type(s) of operation "
                             f"{_c.types_str([res])}")
