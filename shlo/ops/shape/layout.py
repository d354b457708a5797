"""reshape, transpose, reverse and get_dimension_size (spec sections of the same names): the same
elements in another order or shape, and the size of a dimension.

reshape, transpose and reverse return numpy views (no copy); per-axis quantized tensors keep
their parameters, which the constraints move with the quantization dimension.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import int_attr, ints_attr
from ...errors import Diagnostics
from ...ir import Operation
from ...registry import QUANTIZED_STORAGE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import (
    ATTRDICT, COMMA, OPERAND, OPERANDS, declarative, named, types,
)
from ...types import I32, QuantizedType, TensorType, Type
from .. import _constraints as _c
from .._arrays import as_dtype, result_type
from .broadcast import STATIC_QA

if TYPE_CHECKING:  # pragma: no cover
    from ...interpreter.evaluator import PrepareContext

__all__ = ["reshape", "reshape_target", "transpose", "reverse", "get_dimension_size"]

# --- reshape (spec "reshape") --------------------------------------------------------------------

define("stablehlo.reshape", spec="reshape", summary="the same elements in a new shape",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERANDS, ATTRDICT, types("functional")))


def reshape_target(shape: Sequence[int | None], size: int) -> tuple[int, ...]:
    """A concrete shape from ``shape`` with at most one `?` resolved against ``size``."""
    if shape.count(None) > 1:
        raise ValueError(f"cannot reshape {size} elements to a shape with several `?`")
    return tuple(-1 if d is None else d for d in shape)


@kernel("stablehlo.reshape", quantized_aware=True)
def reshape(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "reshape": same elements in row-major order, new shape."""
    t = result_type(op)
    dtype = t.dtype
    shape = t.shape

    def run(operand: np.ndarray) -> Sequence[Any]:
        operand = as_dtype(operand, dtype)
        return (operand.reshape(reshape_target(shape, operand.size)),)  # type: ignore[arg-type]

    return run


def _prod(xs: Sequence[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


@verifier("stablehlo.reshape")
def _verify_reshape(op: Operation, diag: Diagnostics) -> None:
    """(C1) element types agree (per-axis quantization may move); (C2) `size(operand) =
    size(result)`; (C3) per-axis quantization keeps the sizes around its dimension. The result
    shape is free (no type inference)."""
    if not _c.signature(op, diag, [_c.TENSOR_QA], [STATIC_QA]):
        return
    operand, result = op.operands[0].type, op.results[0].type
    if operand.is_static and result.is_static and operand.num_elements != result.num_elements:
        diag.error(op, "C2", f"number of output elements ({result.num_elements}) doesn't match "
                             f"expected number of elements ({operand.num_elements})")
        return
    a, b = operand.element_type, result.element_type
    if isinstance(a, QuantizedType) and a.quantization_dimension is not None and \
            isinstance(b, QuantizedType) and b.quantization_dimension is not None:
        if not _c.quant_params_prefix_equal(a, b):
            diag.error(op, "C1", "expect same quantization scales and zero_points")
            return
        qa, qb = a.quantization_dimension, b.quantization_dimension
        if operand.shape is not None and result.shape is not None and \
                qa < len(operand.shape) and qb < len(result.shape):
            if None not in (operand.shape[qa], result.shape[qb]) and \
                    operand.shape[qa] != result.shape[qb]:
                diag.error(op, "C3", f"expect same quantization dimension size for operand and "
                                     f"result {_c.types_str([operand, result])}")
                return
            if operand.is_static and result.is_static and \
                    _prod(operand.shape[:qa]) != _prod(result.shape[:qb]):
                diag.error(op, "C3", f"product of dimensions before quantization dimension must "
                                     f"match between operand and result for "
                                     f"{_prod(operand.shape[:qa])} and "
                                     f"{_prod(result.shape[:qb])}")
                return
        if not _c.quant_params_equal(a, b):
            diag.error(op, "C1", "expect same quantization scales and zero_points")
        return
    _c.per_tensor_same_quant(op, diag, "C1", operand, result)


# --- reverse (spec "reverse") --------------------------------------------------------------------

define("stablehlo.reverse", spec="reverse",
       summary="reverses the order of elements along some dimensions",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERAND, COMMA, *named("dims", "dimensions", "i64list"), ATTRDICT,
                          types("same")))


@kernel("stablehlo.reverse", quantized_aware=True)
def reverse(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "reverse": reverses the order of elements along ``dimensions``."""
    dims = ints_attr(op, "dimensions")
    index = None
    t = op.operands[0].type
    rank = t.rank if isinstance(t, TensorType) and t.shape is not None else None
    if rank is not None:
        index = tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(rank))

    def run(operand: np.ndarray) -> Sequence[Any]:
        operand = np.asarray(operand)
        if index is not None:
            return (operand[index],)
        return (np.flip(operand, axis=dims),)

    return run


@inference("stablehlo.reverse")
def _infer_reverse(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """`type(result) = type(operand)` (C1), after (C2) `is_unique(dimensions)` and
    (C3) `0 <= dimensions < rank(operand)`."""
    dims = ints_attr(op, "dimensions", None)
    if dims is None or not op.operands:
        return None
    if not _c.is_unique(dims):
        diag.error(op, "C2", f"dimensions should be unique. Got: {', '.join(map(str, dims))}")
        return None
    operand = op.operands[0].type
    rank = _c.rank_of(operand)
    for d in dims:
        if d < 0:
            diag.error(op, "C3", f"all dimensions should be non-negative. Got dimension: {d}.")
            return None
        if rank is not None and d >= rank:
            diag.error(op, "C3", f"all dimensions should be between [0, {rank}). Got dimension: "
                                 f"{d}.")
            return None
    return [operand]


@verifier("stablehlo.reverse")
def _verify_reverse(op: Operation, diag: Diagnostics) -> None:
    """(C1) `type(operand) = type(result)`; (C2) `is_unique(dimensions)`;
    (C3) `0 <= dimensions < rank(result)`."""
    if not _c.signature(op, diag, [_c.TENSOR], [_c.TENSOR], attrs={"dimensions": "ints"}):
        return
    if _infer_reverse(op, diag) is not None:
        _c.compatible_all(op, diag, "C1")


# --- transpose (spec "transpose") ----------------------------------------------------------------

define("stablehlo.transpose", spec="transpose", summary="permutes the operand's dimensions",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERAND, COMMA, *named("dims", "permutation", "i64list"), ATTRDICT,
                          types("functional")))


@kernel("stablehlo.transpose", quantized_aware=True)
def transpose(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "transpose": ``result[i] = operand[j]`` with ``j[permutation[d]] = i[d]``."""
    permutation = ints_attr(op, "permutation")

    def run(operand: np.ndarray) -> Sequence[Any]:
        return (np.asarray(operand).transpose(permutation),)

    return run


@inference("stablehlo.transpose")
def _infer_transpose(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C2) `permutation` is a permutation of `range(rank(operand))`; (C3) `shape(result) =
    dim(operand, permutation...)`; (C4) a per-axis quantization dimension moves with the
    permutation (`quantization_dimension(operand) = permutation[quantization_dimension(result)]`).
    """
    perm = ints_attr(op, "permutation", None)
    operand = op.operands[0].type if op.operands else None
    if perm is None or not isinstance(operand, TensorType) or operand.shape is None:
        return None
    rank = len(operand.shape)
    if len(perm) != rank:
        diag.error(op, "C2", f"TransposeOp operand rank {rank} does not match permutation size "
                             f"{len(perm)}")
        return None
    if sorted(perm) != list(range(rank)):
        diag.error(op, "C2", f"attribute permutation must be a permutation of "
                             f"[{', '.join(map(str, range(rank)))}] but got "
                             f"{', '.join(map(str, perm))}")
        return None
    et = operand.element_type
    if isinstance(et, QuantizedType) and et.quantization_dimension in perm:
        et = replace(et, quantization_dimension=perm.index(et.quantization_dimension))
    return [TensorType(tuple(operand.shape[p] for p in perm), et)]


@verifier("stablehlo.transpose")
def _verify_transpose(op: Operation, diag: Diagnostics) -> None:
    """(C1) element types agree (per-axis quantization may move); (C2) `permutation` is a
    permutation of `range(rank(operand))`; (C3) `shape(result) = dim(operand, permutation...)`;
    (C4) per-axis quantization follows the permutation."""
    if not _c.signature(op, diag, [_c.TENSOR_QA], [_c.TENSOR_QA],
                        attrs={"permutation": "ints"}):
        return
    inferred = _infer_transpose(op, diag)
    if inferred is None:
        return
    operand, result = op.operands[0].type, op.results[0].type
    perm = ints_attr(op, "permutation", None)
    rank = len(perm)
    a, b = operand.element_type, result.element_type
    # C1 and C4 judge the element types, C3 the shape: compared with the result's element type
    shape = inferred[0].shape
    if isinstance(a, QuantizedType) and a.quantization_dimension is not None and \
            isinstance(b, QuantizedType) and b.quantization_dimension is not None:
        if not _c.quant_params_prefix_equal(a, b):
            diag.error(op, "C1", "expect same quantization scales and zero_points")
            return
        qb = b.quantization_dimension
        if qb < rank and a.quantization_dimension != perm[qb]:
            diag.error(op, "C4", f"operand quantization_dimension {a.quantization_dimension} is "
                                 f"not same as permutation[{qb}] = {perm[qb]}")
            return
        if not _c.quant_params_equal(a, b):
            diag.error(op, "C1", "expect same quantization scales and zero_points")
            return
        if result.shape is not None and not _c.compatible_shapes(shape, result.shape):
            _c.check_inferred(op, diag, "C3", [TensorType(shape, b)])
        return
    if not _c.per_tensor_same_quant(op, diag, "C1", operand, result):
        return
    _c.check_inferred(op, diag, "C3", [TensorType(shape, b)])


# --- get_dimension_size (spec "get_dimension_size") ----------------------------------------------

define("stablehlo.get_dimension_size", spec="get_dimension_size",
       summary="the size of one dimension of the operand",
       traits={QUANTIZED_STORAGE},
       syntax=declarative(OPERAND, COMMA, *named("dim", "dimension", "i64"), ATTRDICT,
                          types("functional")))


@kernel("stablehlo.get_dimension_size", quantized_aware=True)
def get_dimension_size(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "get_dimension_size": ``result = dim(operand, dimension)`` (the run-time size)."""
    dimension = int_attr(op, "dimension")
    dtype = result_type(op).dtype

    def run(operand: np.ndarray) -> Sequence[Any]:
        return (np.asarray(np.shape(operand)[dimension], dtype=dtype),)

    return run


@inference("stablehlo.get_dimension_size")
def _infer_get_dimension_size(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C1) `0 <= dimension < rank(operand)`; the result is a 0-dimensional tensor of i32."""
    d = int_attr(op, "dimension", None)
    if d is None or not op.operands:
        return None
    rank = _c.rank_of(op.operands[0].type)
    if d < 0:
        diag.error(op, "C1", f"attribute 'dimension' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {d})")
        return None
    if rank is not None and d >= rank:
        diag.error(op, "C1", f"requires dimension attribute in range [0, {rank}); found ({d})")
        return None
    return [TensorType((), I32)]


@verifier("stablehlo.get_dimension_size")
def _verify_get_dimension_size(op: Operation, diag: Diagnostics) -> None:
    """(C1) `0 <= dimension < rank(operand)`; the result is a 0-dimensional tensor of i32."""
    if not _c.signature(op, diag, [_c.TENSOR_QA],
                        [_c.TC(only=frozenset({"i32"}), description="ranked tensor of 32-bit "
                                                                   "signless integer values")],
                        attrs={"dimension": "int"}):
        return
    inferred = _infer_get_dimension_size(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C1", inferred)
