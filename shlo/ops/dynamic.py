"""Dynamic-shape ops: dynamic_broadcast_in_dim, dynamic_iota, dynamic_reshape, dynamic_pad,
dynamic_gather (spec sections of the same names), real_dynamic_slice, set_dimension_size,
compute_reshape_shape and cstr_reshapable (the spec's "Dynamism" category, bootstrapped from
MHLO and not specified).

These ops take the shape-determining values (output shapes, paddings, slice bounds) as operand
*tensors* instead of attributes, so result types may contain `?`. At run time those operand
values decide the result's shape; each op otherwise behaves as its static counterpart (the
upstream interpreter does the same: e.g. dynamic_iota evaluates as iota, dynamic_pad as pad with
the operands' values), and shares its helpers and constraints. get_dimension_size
(:mod:`shlo.ops.shape.layout`) returns the run-time size. The constraints check shape operands
defined by constants against the result type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..attributes import int_attr, ints_attr
from ..errors import Diagnostics
from ..ir import Operation, Value
from ..registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ..syntax.directives import ATTRDICT, COMMA, OPERAND, OPERANDS, declarative, named, types
from ..types import QuantizedType, TensorType, Type
from . import _constraints as _c
from ._arrays import as_dtype, result_type
from .indexing import GatherDimensionNumbers, gather_array, infer_gather_shape, to_index
from .shape import broadcast_in_dim_array, check_broadcast_in_dim, iota_array, pad_array

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext

__all__ = ["shape_values", "dynamic_broadcast_in_dim", "dynamic_iota", "dynamic_reshape",
           "dynamic_pad", "dynamic_gather", "real_dynamic_slice", "set_dimension_size"]


def shape_values(x: Any) -> tuple[int, ...]:
    """A 1-dimensional integer tensor operand (an output shape, paddings...) as Python ints."""
    return tuple(int(v) for v in to_index(x).reshape(-1))


def _check_shape(op: Operation, shape: Sequence[int], process: Any = None) -> None:
    """The run-time shape must agree with the static dimensions of the result type (and,
    given the running ``process``, fit in its memory limit: checked before the result is
    made)."""
    t = result_type(op)
    if t.shape is not None and (len(t.shape) != len(shape) or any(
            d is not None and d != s for d, s in zip(t.shape, shape))):
        raise ValueError(f"run-time shape {tuple(shape)} does not match the result type {t}")
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension size in run-time shape {tuple(shape)}")
    if process is not None:
        process.check_shape(op, tuple(shape))


_SHAPE_TENSOR = _c.TC(_c.I | _c.INDEX, rank=1, static=True,
                      description="statically shaped 1-dimensional tensor of index or "
                                  "2/4/8/16/32/64-bit integer values")


def _output_shape(op: Operation, diag: Diagnostics, label: str, shape_value: Value) -> bool:
    """A constant output shape must be non-negative and agree with the result type."""
    values = _c.constant_ints(shape_value)
    res = op.results[0].type
    if values is None or not isinstance(res, TensorType) or res.shape is None:
        return True
    if len(values) != len(res.shape) or any(v < 0 for v in values) or \
            not _c.compatible_shapes(values, res.shape):
        diag.error(op, label, f"output shape {_c.dims_str(values)} is incompatible with return "
                              f"type of operation '{_c.type_str(res)}'")
        return False
    return True


def _compatible_or_quantized(op: Operation, diag: Diagnostics, operand: TensorType,
                             result: TensorType) -> bool:
    """(C1) the element types agree (any two quantized types pass: their own checks follow)."""
    if not _c.compatible_element_types(operand.element_type, result.element_type) and \
            not (isinstance(operand.element_type, QuantizedType) and
                 isinstance(result.element_type, QuantizedType)):
        diag.error(op, "C1", f"expects operand and result to have compatible element type: "
                             f"{_c.types_str([operand, result])}")
        return False
    return True


# --- dynamic_broadcast_in_dim (spec "dynamic_broadcast_in_dim") ----------------------------------

define("stablehlo.dynamic_broadcast_in_dim", spec="dynamic_broadcast_in_dim",
       summary="broadcast_in_dim to a shape given as an operand",
       traits={QUANTIZED_STORAGE},
       inherent="broadcast_dimensions known_expanding_dimensions known_nonexpanding_dimensions",
       syntax=declarative(OPERAND, COMMA, OPERAND, COMMA,
                          *named("dims", "broadcast_dimensions", "i64list"), ATTRDICT,
                          types("functional")))


@kernel("stablehlo.dynamic_broadcast_in_dim", quantized_aware=True)
def dynamic_broadcast_in_dim(op: Operation, ctx: PrepareContext) -> Kernel:
    """broadcast_in_dim to the shape held by ``output_dimensions``.

    ``known_expanding_dimensions`` / ``known_nonexpanding_dimensions`` are optimisation hints
    and do not change the result.
    """
    bd = ints_attr(op, "broadcast_dimensions")
    dtype = result_type(op).dtype
    process = ctx.process

    def run(operand: np.ndarray, output_dimensions: np.ndarray) -> Sequence[Any]:
        shape = shape_values(output_dimensions)
        _check_shape(op, shape, process)
        return (broadcast_in_dim_array(as_dtype(operand, dtype), bd, shape),)

    return run


@verifier("stablehlo.dynamic_broadcast_in_dim")
def _verify_dynamic_broadcast_in_dim(op: Operation, diag: Diagnostics) -> None:
    """broadcast_in_dim's constraints (C1-C6) with the result shape given by
    `output_dimensions` (C7); the expansion hints name distinct operand dimensions (C8)."""
    if not _c.signature(op, diag, [_c.TENSOR_QA, _SHAPE_TENSOR], [_c.TENSOR_QA],
                        attrs={"broadcast_dimensions": "ints"},
                        optional_attrs={"known_expanding_dimensions": "ints",
                                        "known_nonexpanding_dimensions": "ints"}):
        return
    operand, result = op.operands[0].type, op.results[0].type
    if not _compatible_or_quantized(op, diag, operand, result):
        return
    dims = ints_attr(op, "broadcast_dimensions", None)
    shape_len = op.operands[1].type.shape
    if result.shape is not None and shape_len and shape_len[0] is not None and \
            shape_len[0] != len(result.shape):
        diag.error(op, "C7", f"result rank ({len(result.shape)}) does not match the size of "
                             f"output_dimensions ({shape_len[0]})")
        return
    if not check_broadcast_in_dim(op, diag, operand, result, dims):
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
    expanding = ints_attr(op, "known_expanding_dimensions", ())
    nonexpanding = ints_attr(op, "known_nonexpanding_dimensions", ())
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


# --- dynamic_iota (spec "dynamic_iota") ----------------------------------------------------------

define("stablehlo.dynamic_iota", spec="dynamic_iota",
       summary="iota with the shape given as an operand",
       syntax=declarative(OPERAND, COMMA, *named("dim", "iota_dimension", "i64"), ATTRDICT,
                          types("functional")))


@kernel("stablehlo.dynamic_iota")
def dynamic_iota(op: Operation, ctx: PrepareContext) -> Kernel:
    """iota with the shape held by ``output_shape`` (arrays cached per shape)."""
    dim = int_attr(op, "iota_dimension")
    dtype = result_type(op).dtype
    process = ctx.process
    cache: dict[tuple[int, ...], np.ndarray] = {}

    def run(output_shape: np.ndarray) -> Sequence[Any]:
        shape = shape_values(output_shape)
        out = cache.get(shape)
        if out is None:
            _check_shape(op, shape, process)
            if len(cache) > 16:
                cache.clear()
            out = cache[shape] = iota_array(shape, dim, dtype)
        return (out,)

    return run


@verifier("stablehlo.dynamic_iota")
def _verify_dynamic_iota(op: Operation, diag: Diagnostics) -> None:
    """(C1) `0 <= iota_dimension < rank(result)`; (C2) a constant `output_shape` agrees with
    the result type."""
    if not _c.signature(op, diag, [_SHAPE_TENSOR], [_c.TENSOR],
                        attrs={"iota_dimension": "int"}):
        return
    d = int_attr(op, "iota_dimension", None)
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


# --- dynamic_reshape (spec "dynamic_reshape") ----------------------------------------------------

define("stablehlo.dynamic_reshape", spec="dynamic_reshape",
       summary="reshape to a shape given as an operand",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERANDS, ATTRDICT, types("functional")))


@kernel("stablehlo.dynamic_reshape", quantized_aware=True)
def dynamic_reshape(op: Operation, ctx: PrepareContext) -> Kernel:
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


@verifier("stablehlo.dynamic_reshape")
def _verify_dynamic_reshape(op: Operation, diag: Diagnostics) -> None:
    """(C1) element types agree; (C2) the element counts agree (a constant `output_shape`
    included); (C3) `rank(result) = size(output_shape)`, and a constant `output_shape` agrees
    with the result type."""
    if not _c.signature(op, diag, [_c.TENSOR_QA, _SHAPE_TENSOR], [_c.TENSOR_QA]):
        return
    operand, result = op.operands[0].type, op.results[0].type
    if not _compatible_or_quantized(op, diag, operand, result):
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


# --- dynamic_pad (spec "dynamic_pad") ------------------------------------------------------------

define("stablehlo.dynamic_pad", spec="dynamic_pad",
       summary="pad with the paddings given as operands",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERANDS, ATTRDICT, types("functional")))


@kernel("stablehlo.dynamic_pad", quantized_aware=True)
def dynamic_pad(op: Operation, ctx: PrepareContext) -> Kernel:
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


@verifier("stablehlo.dynamic_pad")
def _verify_dynamic_pad(op: Operation, diag: Diagnostics) -> None:
    """pad's constraints with the paddings given as operands: (C1) element types agree; (C2)
    the padding operands have `rank(operand)` elements; (C3) a constant `interior_padding` is
    non-negative; (C4) `rank(result) = rank(operand)`."""
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
        return
    # (C4) with static shapes and constant paddings, the result shape is known (as upstream)
    out = op.results[0].type.shape
    low, high = _c.constant_ints(op.operands[2]), _c.constant_ints(op.operands[3])
    if interior is None or low is None or high is None or operand.shape is None \
            or out is None or None in operand.shape or None in out:
        return
    for i, (n, o, lo, hi, inner) in enumerate(zip(operand.shape, out, low, high, interior)):
        want = n + lo + max(n - 1, 0) * inner + hi
        if o != want:
            diag.error(op, "C4", f"expected output dimension at index {i} to equal {want}, but "
                                 f"got {o}")
            return


# --- dynamic_gather (spec "dynamic_gather") ------------------------------------------------------

define("stablehlo.dynamic_gather", spec="dynamic_gather",
       summary="gather with slice_sizes given as an operand",
       traits={QUANTIZED_STORAGE},
       inherent="dimension_numbers indices_are_sorted")  # generic form only


@kernel("stablehlo.dynamic_gather", quantized_aware=True)
def dynamic_gather(op: Operation, ctx: PrepareContext) -> Kernel:
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


@inference("stablehlo.dynamic_gather")
def _infer_dynamic_gather(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """gather's inference with `slice_sizes` an operand: its values when it is a constant,
    else `?` for the offset dimensions."""
    dims = GatherDimensionNumbers.of(op)
    if dims is None or len(op.operands) != 3:
        return None
    operand, start_indices = op.operands[0].type, op.operands[1].type
    sizes_type = op.operands[2].type
    sizes: Sequence[int | None] | None = _c.constant_ints(op.operands[2])
    if sizes is None and isinstance(sizes_type, TensorType) and sizes_type.shape and \
            sizes_type.shape[0] is not None:
        sizes = [None] * sizes_type.shape[0]
    shape = infer_gather_shape(op, diag, operand, start_indices, sizes, dims)
    return None if shape is None else [TensorType(shape, operand.element_type)]


@verifier("stablehlo.dynamic_gather")
def _verify_dynamic_gather(op: Operation, diag: Diagnostics) -> None:
    """gather's constraints with `slice_sizes` as an operand (checked when constant)."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.INT_TENSOR,
                                   _c.TC(_c.I, rank=1, static=True)], [_c.TENSOR],
                        attrs={"dimension_numbers": "any"},
                        optional_attrs={"indices_are_sorted": "bool"}):
        return
    inferred = _infer_dynamic_gather(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C13, C14", inferred)


# --- real_dynamic_slice (not specified) ----------------------------------------------------------

define("stablehlo.real_dynamic_slice", summary="slice with the bounds given as operands",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERANDS, ATTRDICT, types("functional")))


def _real_dynamic_slice_index(start: Sequence[int], limit: Sequence[int], strides: Sequence[int],
                              shape: Sequence[int]) -> tuple[slice, ...]:
    """Slices for real_dynamic_slice: the result size per dimension is
    ``ceil((limit - start) / stride)``; a start that would make the slice overrun the operand is
    clamped like dynamic_slice's (``[0, dim - span]``), which is what the slice becomes once its
    bounds are refined (canonicalized to `dynamic_slice`)."""
    index = []
    for s, e, st, n in zip(start, limit, strides, shape):
        if st <= 0 or e < s:
            raise ValueError(f"invalid slice bounds start={tuple(start)} limit={tuple(limit)} "
                             f"strides={tuple(strides)}")
        size = -(-(e - s) // st)
        span = (size - 1) * st + 1 if size else 0
        if span > n:
            raise ValueError(f"slice of {size} elements with stride {st} does not fit in a "
                             f"dimension of size {n}")
        s = min(max(s, 0), n - span)
        index.append(slice(s, s + span, st))
    return tuple(index)


@kernel("stablehlo.real_dynamic_slice", quantized_aware=True)
def real_dynamic_slice(op: Operation, ctx: PrepareContext) -> Kernel:
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


@verifier("stablehlo.real_dynamic_slice")
def _verify_real_dynamic_slice(op: Operation, diag: Diagnostics) -> None:
    """slice's constraints with the indices given as operands: (C1) element types agree; (C2)
    the index operands have `rank(operand)` elements. (C3, C4: starts within `[0, limit]` and
    positive strides are properties of the operands' values, which upstream's verifier does not
    check even for constants; the kernel refuses them at run time.)"""
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


# --- set_dimension_size (not specified) ----------------------------------------------------------

define("stablehlo.set_dimension_size", summary="sets the run-time size of one dimension",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERAND, COMMA, OPERAND, COMMA, *named("dim", "dimension", "i64"),
                          ATTRDICT, types("functional")))


@kernel("stablehlo.set_dimension_size", quantized_aware=True)
def set_dimension_size(op: Operation, ctx: PrepareContext) -> Kernel:
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


@inference("stablehlo.set_dimension_size")
def _infer_set_dimension_size(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`size` is 0-dimensional; (C1) `0 <= dimension < rank(operand)`; the result is the
    operand's type with `dimension` of the size a constant `size` holds, `?` otherwise
    (upstream's inferSetDimensionSizeOp)."""
    d = int_attr(op, "dimension", None)
    if d is None or len(op.operands) != 2:
        return None
    operand = op.operands[0].type
    if d < 0:
        diag.error(op, "C1", f"op attribute 'dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {d})")
        return None
    if _c.rank_of(op.operands[1].type) not in (None, 0):
        diag.error(op, "", "size operand should be of rank-0")
        return None
    rank = _c.rank_of(operand)
    if rank is not None and d >= rank:
        diag.error(op, "C1", f"requires dimension attribute in range [0, {rank}); found ({d})")
        return None
    if rank is None:
        return None
    size = _c.constant_ints(op.operands[1])
    shape = list(operand.shape)
    shape[d] = size[0] if size and size[0] >= 0 else None  # (a negative size: `?`, as upstream)
    return [TensorType(tuple(shape), operand.element_type)]


@verifier("stablehlo.set_dimension_size")
def _verify_set_dimension_size(op: Operation, diag: Diagnostics) -> None:
    """(C1) `dimension` indexes the operand; `size` is a 0-dimensional tensor of i32; (C2) the
    result type is the inferred one."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TC(only=frozenset({"i32"}),
                                                    description="ranked tensor of 32-bit "
                                                                "signless integer values")],
                        [_c.TENSOR], attrs={"dimension": "int"}):
        return
    inferred = _infer_set_dimension_size(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C2", inferred)


# --- compute_reshape_shape, cstr_reshapable (not specified; no kernel) ---------------------------
# Shape computations MHLO leaves behind: parsed, printed and verified as generic ops.

for _name in ("stablehlo.compute_reshape_shape", "stablehlo.cstr_reshapable"):
    define(_name, summary="a reshape shape computation (not specified)",
           syntax=declarative(OPERANDS, ATTRDICT, types("functional")))
